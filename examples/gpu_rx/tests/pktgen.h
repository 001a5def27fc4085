/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test packet generator: Ethernet frames of every protocol the parser
 * knows (built by gpugen_build.h), plus deliberately malformed ones, from
 * a seeded PRNG so CPU and GPU tests see the same packets and failures
 * reproduce.
 */
#ifndef GPURX_PKTGEN_H
#define GPURX_PKTGEN_H

#include <stdint.h>

#include "gpugen_build.h"

#define PKTGEN_MAX_LEN 2048

struct pktgen_pkt {
	uint8_t data[PKTGEN_MAX_LEN];
	uint32_t caplen;
	uint32_t wirelen;
	uint64_t ts;
	int expect_malformed;	/* enum gpurx_malformed, or -1: not predicted */
	const char *what;	/* variant name for failure messages */
};

struct pktgen {
	uint64_t rng;
	uint64_t ts;
};

void pktgen_init(struct pktgen *g, uint64_t seed);
uint64_t pktgen_rand(struct pktgen *g);
void pktgen_next(struct pktgen *g, struct pktgen_pkt *p);

#endif /* GPURX_PKTGEN_H */
