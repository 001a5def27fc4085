B=.gpu-bundle/build
export LD_LIBRARY_PATH=$PWD/.gpu-bundle/lib
chmod -R go-w .gpu-bundle
echo 2048 > /proc/sys/vm/nr_hugepages
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs none /dev/hugepages
X="-d $PWD/.gpu-bundle/pmds -d $PWD/$B/drivers/gpu/cuda/librte_gpu_cuda.so"
