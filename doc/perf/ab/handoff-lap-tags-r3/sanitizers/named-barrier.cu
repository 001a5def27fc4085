// Does racecheck follow a named barrier of some warps (bar.sync 1, 64)
// beside __syncthreads of the block? Same pattern as the prefetch loop.
#include <cstdio>
__global__ void k(int *out, int iters)
{
	__shared__ int s_poll, s_ctx;
	int warp = threadIdx.x / 32, acc = 0;
	for (int it = 0; it < iters; it++) {
		if (warp < 2) {
			for (int p = 0; p < 3; p++) {
				if (threadIdx.x == 0 && p == 2)
					s_poll = it + 1;
				asm volatile("bar.sync 1, 64;" ::: "memory");
				if (s_poll == it + 1)
					break;
			}
			if (threadIdx.x == 0)
				s_ctx = it;
		}
		__syncthreads();
		acc += s_ctx;
		__syncthreads();
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main()
{
	int *d;
	cudaMalloc(&d, 4 * 128 * sizeof(int));
	k<<<4, 128>>>(d, 50);
	cudaError_t e = cudaDeviceSynchronize();
	int h[512];
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	printf("%s acc=%d (want %d)\n", cudaGetErrorString(e), h[100], 49 * 50 / 2);
	return e != cudaSuccess;
}
