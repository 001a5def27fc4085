/* SPDX-License-Identifier: BSD-3-Clause */
/* Specs for the packet builder's tests, CPU and GPU alike. */
#ifndef GPUGEN_PB_SPECS_H
#define GPUGEN_PB_SPECS_H

#include <stdint.h>

#include "gpugen_build.h"

void pb_seed(uint64_t seed);
uint64_t pb_rnd64(void);
uint32_t pb_rnd(uint32_t n);	/* 0 .. n - 1 */

/* A fixed frame: 02:..:02 -> 02:..:01, vlans tags (QinQ outer for 2),
 * 10.0.0.1 -> 192.168.1.2 or 2001:db8::1 -> ::2, ports 40000 -> 443. */
void pb_base_spec(struct gpugen_pkt_spec *s, int ipv, int vlans, uint8_t proto);
/* A random valid spec: every kind the builder makes. */
void pb_random_spec(struct gpugen_pkt_spec *s);

#endif /* GPUGEN_PB_SPECS_H */
