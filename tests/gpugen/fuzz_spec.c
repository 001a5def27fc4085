/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the generator's spec parser (gpugen_add_spec), the
 * text a tester or a user types: any input is refused with a message and
 * adds nothing, or is accepted and then builds frames whose lengths are
 * the ones the generator announces, inside the data room. ASan and UBSan
 * watch the parser and the CPU build (the reference the GPU build is
 * compared against).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_add.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[ROOM];
	char spec[512];
	struct gpugen *g;
	int rc;

	if (size >= sizeof(spec))
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	/* Files are read by pcap=: the fuzzer would name /dev/stdin. */
	if (strstr(spec, "pcap") != NULL)
		return 0;
	g = fuzz_add(spec, &rc);
	if (rc > 0) {
		for (uint64_t n = 0; n < 16; n++) {
			uint32_t want = gpugen_len(g, n);
			uint32_t len = gpugen_build_cpu(g, n, n, buf, ROOM, NULL,
				NULL);

			if (len != want || len < 60 || len > ROOM)
				FAIL();
		}
	}
	gpugen_free(g);
	return 0;
}
