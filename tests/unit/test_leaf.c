/* The leaf rule against the cases the testbed and the reference study observed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/leaf.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define VTD_SP (LEAF_4K | LEAF_2M | LEAF_1G)
/* AMD v1 page table: any power of two from 4 KiB, but 512 GiB (AMD_IOMMU_PGSIZES) */
#define AMD_V1 0xfff7ffffff000ull
#define ALL_POWERS (~0xfffull)
#define BAR1 0x4800000000ull /* 1 GiB-aligned BAR start */

static void expect_runs(uint64_t iova, uint64_t paddr, uint64_t size, uint64_t bitmap,
			const struct leaf_run *want, long nwant)
{
	struct leaf_run got[8];
	long n = leaf_pages(iova, paddr, size, bitmap, got, 8);

	assert_int_equal(n, nwant);
	for (long i = 0; i < n; i++) {
		assert_int_equal(got[i].iova, want[i].iova);
		assert_int_equal(got[i].paddr, want[i].paddr);
		assert_int_equal(got[i].pgsize, want[i].pgsize);
		assert_int_equal(got[i].pgcount, want[i].pgcount);
	}
}

static void one_gib_at_bar_offset_zero_is_one_1g_page(void **state)
{
	const struct leaf_run want[] = { { 0x40000000, BAR1, GIB, 1 } };

	expect_runs(0x40000000, BAR1, GIB, VTD_SP, want, 1);
}

/* the reference study: 246 MiB into BAR1 is 2 MiB- but not 1 GiB-aligned */
static void one_gib_246m_into_bar_is_512_2m_pages(void **state)
{
	const uint64_t paddr = BAR1 + 246 * MIB;
	const struct leaf_run want[] = { { 0x40000000, paddr, 2 * MIB, 512 } };

	assert_int_equal(paddr, 0x480f600000ull);
	expect_runs(0x40000000, paddr, GIB, VTD_SP, want, 1);
}

static void superpages_off_gives_4k_pages(void **state)
{
	const struct leaf_run want[] = { { 0x40000000, BAR1, 4096, 262144 } };

	expect_runs(0x40000000, BAR1, GIB, LEAF_4K, want, 1);
}

static void no_1g_in_set_gives_2m_pages(void **state)
{
	const struct leaf_run want[] = { { 0x40000000, BAR1, 2 * MIB, 512 } };

	expect_runs(0x40000000, BAR1, GIB, LEAF_4K | LEAF_2M, want, 1);
}

static void misaligned_iova_gives_4k_pages(void **state)
{
	const struct leaf_run want[] = { { 0x40001000, 0x80000000, 4096, 1024 } };

	expect_runs(0x40001000, 0x80000000, 4 * MIB, VTD_SP, want, 1);
}

static void misaligned_paddr_gives_4k_pages(void **state)
{
	const struct leaf_run want[] = { { 0x40000000, 0x80003000, 4096, 1024 } };

	expect_runs(0x40000000, 0x80003000, 4 * MIB, VTD_SP, want, 1);
}

static void partial_length_ends_in_small_pages(void **state)
{
	const struct leaf_run want[] = {
		{ 0x200000, 0x400000, 2 * MIB, 1 },
		{ 0x400000, 0x600000, 4096, 3 },
	};

	expect_runs(0x200000, 0x400000, 2 * MIB + 3 * 4096, VTD_SP, want, 2);
}

static void congruent_start_climbs_to_2m(void **state)
{
	const struct leaf_run want[] = {
		{ 0x1ff000, 0x3ff000, 4096, 1 },
		{ 0x200000, 0x400000, 2 * MIB, 1 },
	};

	expect_runs(0x1ff000, 0x3ff000, 4096 + 2 * MIB, VTD_SP, want, 2);
}

/* testbed: 1 GiB + 2 MiB at BAR offset 1022 MiB, IOVA 0x3fe00000 -> 2 MiB x 1, then 1 GiB x 1 */
static void window_across_1g_boundary(void **state)
{
	const struct leaf_run want[] = {
		{ 0x3fe00000, BAR1 + 1022 * MIB, 2 * MIB, 1 },
		{ 0x40000000, BAR1 + GIB, GIB, 1 },
	};

	expect_runs(0x3fe00000, BAR1 + 1022 * MIB, GIB + 2 * MIB, VTD_SP, want, 2);
}

/* testbed, AMD: a 64 KiB read at a 16 KiB-aligned buffer became pgsize 16 KiB x 4 */
static void amd_any_power_of_two(void **state)
{
	const struct leaf_run want16[] = { { 0x10000, 0x7ffc4000, 16384, 4 } };
	const struct leaf_run want64[] = { { 0x10000, 0x7ffd0000, 65536, 1 } };

	expect_runs(0x10000, 0x7ffc4000, 65536, AMD_V1, want16, 1);
	expect_runs(0x10000, 0x7ffd0000, 65536, AMD_V1, want64, 1);
}

static void refused_mappings(void **state)
{
	struct leaf_run r[1];

	assert_int_equal(leaf_pages(0, 0, 0, VTD_SP, r, 1), -1);
	assert_int_equal(leaf_pages(0x1000, 0x2000, 4096, 0, r, 1), -1);
	assert_int_equal(leaf_pages(0x1800, 0x2000, 4096, VTD_SP, r, 1), -1);
	assert_int_equal(leaf_pages(0x1000, 0x2800, 4096, VTD_SP, r, 1), -1);
	assert_int_equal(leaf_pages(0x1000, 0x2000, 100, VTD_SP, r, 1), -1);
	assert_int_equal(leaf_pages(~0xfffull, 0, 8192, VTD_SP, r, 1), -1);
}

static void counts_runs_beyond_max(void **state)
{
	struct leaf_run r[1] = {};

	assert_int_equal(leaf_pages(0x1ff000, 0x3ff000, 4096 + 2 * MIB, VTD_SP, r, 1), 2);
	assert_int_equal(r[0].pgsize, 4096);
	assert_int_equal(r[0].pgcount, 1);
	assert_int_equal(leaf_pages(0x1ff000, 0x3ff000, 4096 + 2 * MIB, VTD_SP, NULL, 0), 2);
}

static void largest_page(void **state)
{
	assert_int_equal(leaf_largest_page(0x40000000, BAR1, GIB, VTD_SP), GIB);
	assert_int_equal(leaf_largest_page(0x40000000, BAR1 + 246 * MIB, GIB, VTD_SP), 2 * MIB);
	assert_int_equal(leaf_largest_page(0x40000000, BAR1, GIB - 4096, VTD_SP), 2 * MIB);
	assert_int_equal(leaf_largest_page(0x40000000, BAR1, 4096, VTD_SP), 4096);
	assert_int_equal(leaf_largest_page(0x1000, 0, 4096, LEAF_2M), 0);
	assert_int_equal(leaf_largest_page(0, 0, 0, VTD_SP), 0);
	assert_int_equal(leaf_largest_page(0, 0, 1ull << 63, ALL_POWERS), 1ull << 63);
	assert_int_equal(leaf_largest_page(0, 0, 1ull << 39, AMD_V1), 1ull << 38);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_gib_at_bar_offset_zero_is_one_1g_page),
		cmocka_unit_test(one_gib_246m_into_bar_is_512_2m_pages),
		cmocka_unit_test(superpages_off_gives_4k_pages),
		cmocka_unit_test(no_1g_in_set_gives_2m_pages),
		cmocka_unit_test(misaligned_iova_gives_4k_pages),
		cmocka_unit_test(misaligned_paddr_gives_4k_pages),
		cmocka_unit_test(partial_length_ends_in_small_pages),
		cmocka_unit_test(congruent_start_climbs_to_2m),
		cmocka_unit_test(window_across_1g_boundary),
		cmocka_unit_test(amd_any_power_of_two),
		cmocka_unit_test(refused_mappings),
		cmocka_unit_test(counts_runs_beyond_max),
		cmocka_unit_test(largest_page),
	};

	return cmocka_run_group_tests_name("leaf rule", tests, NULL, NULL);
}
