/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the generator's fuzz targets share: one spec added to a fresh
 * generator under the contract every caller relies on. A refusal says
 * why and adds nothing; an acceptance adds as many streams as it says,
 * none longer than the data room.
 */
#ifndef GPUGEN_FUZZ_ADD_H
#define GPUGEN_FUZZ_ADD_H

#include <stdint.h>

#include "gpugen.h"

#define FAIL() __builtin_trap()
#define ROOM 2048u

/* The generator with spec added (the caller frees it), its streams or
 * the negative errno in *rc. */
static inline struct gpugen *
fuzz_add(const char *spec, int *rc)
{
	struct gpugen_conf conf = { .data_room = ROOM, .burst = 4, .seed = 1 };
	struct gpugen *g;
	char err[256];

	if (gpugen_create(&g, &conf) != 0)
		FAIL();
	err[0] = '\0';
	*rc = gpugen_add_spec(g, spec, err, sizeof(err));
	if (*rc < 0 ? err[0] == '\0' || gpugen_n_streams(g) != 0 :
			*rc == 0 || gpugen_n_streams(g) != (uint32_t)*rc ||
			gpugen_max_len(g) > ROOM)
		FAIL();
	return g;
}

#endif
