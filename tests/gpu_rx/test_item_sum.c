/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpurx_sum_match_word() (gpu_kernels.h), how the RX lcore reads an item's
 * match bits: only packets 0..n-1 of the item count, for every n.
 */

#include <stdint.h>
#include <string.h>

#include "gpu_kernels.h"
#include "check.h"

static uint32_t
matched(const struct gpurx_item_sum *s, uint32_t n)
{
	uint32_t total = 0;

	for (uint32_t w = 0; w * 32 < n; w++)
		total += (uint32_t)__builtin_popcount(gpurx_sum_match_word(s, w, n));
	return total;
}

int
main(void)
{
	struct gpurx_item_sum all, none, odd;

	memset(&all, 0xff, sizeof(all));
	memset(&none, 0, sizeof(none));
	memset(&odd, 0, sizeof(odd));
	for (uint32_t i = 1; i < GPURX_SUM_MATCH_WORDS * 32; i += 2)
		odd.match[i / 32] |= 1u << (i % 32);

	/* Every item size: bits past n never count. */
	for (uint32_t n = 0; n <= GPURX_SUM_MATCH_WORDS * 32; n++) {
		CHECK(matched(&all, n) == n, "all set, n = %u: %u", n,
			matched(&all, n));
		CHECK(matched(&none, n) == 0, "none set, n = %u", n);
		CHECK(matched(&odd, n) == n / 2, "odd packets, n = %u: %u", n,
			matched(&odd, n));
	}
	CHECK_EQ(gpurx_sum_match_word(&all, 0, 1), 1u);
	CHECK_EQ(gpurx_sum_match_word(&all, 0, 31), 0x7fffffffu);
	CHECK_EQ(gpurx_sum_match_word(&all, 0, 32), 0xffffffffu);
	CHECK_EQ(gpurx_sum_match_word(&all, 1, 33), 1u);
	CHECK_EQ(gpurx_sum_match_word(&all, 1, 32), 0u);
	CHECK_EQ(gpurx_sum_match_word(&odd, 0, 4), 0xau);
	/* Past the summary's words: nothing, not a read out of bounds. */
	CHECK_EQ(gpurx_sum_match_word(&all, GPURX_SUM_MATCH_WORDS, 100000), 0u);
	return check_finish("test_item_sum");
}
