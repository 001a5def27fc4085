/* SPDX-License-Identifier: BSD-3-Clause */

#include "flow_export.h"

/* Ring of at least a quarter of the table, within these bounds. */
#define RING_MIN (1u << 12)
#define RING_MAX (1u << 21)

uint64_t
gpurx_flow_export_ring_limit(uint32_t flows)
{
	uint64_t n = RING_MIN;

	while (n < flows / 4 && n < RING_MAX)
		n <<= 1;
	return n;
}
