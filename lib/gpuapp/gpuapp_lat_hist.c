/* SPDX-License-Identifier: BSD-3-Clause */

#include <string.h>

#include "gpuapp_lat_hist.h"

void
gpuapp_lat_hist_summary(const uint64_t *const *hists, unsigned int nh,
		uint32_t buckets, struct gpuapp_lat_summary *s)
{
	uint64_t n = 0, seen = 0, r50, r99;

	memset(s, 0, sizeof(*s));
	for (unsigned int h = 0; h < nh; h++)
		for (uint32_t k = 0; hists[h] != NULL && k < buckets; k++)
			n += hists[h][k];
	if (n == 0)
		return;
	/* Nearest rank: the value at position ceil(q * n), 1-based. */
	r50 = (n + 1) / 2;
	r99 = n - n / 100;
	for (uint32_t k = 0; k < buckets; k++) {
		uint64_t c = 0;

		for (unsigned int h = 0; h < nh; h++)
			c += hists[h] != NULL ? hists[h][k] : 0;
		if (c == 0)
			continue;
		if (seen < r50 && seen + c >= r50)
			s->p50 = k;
		if (seen < r99 && seen + c >= r99)
			s->p99 = k;
		seen += c;
		s->max = k;
	}
	s->n = n;
}
