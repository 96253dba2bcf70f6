/* AMD-Vi capability header and EFR decoding, the 'features' file formats, and the v1 page
 * sizes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/amd_cap.h"
#include "common/leaf.h"

/* cap id 0x0f, next 0x40, type 3, IotlbSup, NpCache, EFRSup */
#define CAP_HEADER 0x0d03400fu
/* PPR, GT, IA, PC, HATS 2 (6 levels), PASmax 15 */
#define EFR_6_LEVEL 0xf00000a52ull
/* XT, NX, GA, HE, HATS 0 (4 levels), HDSup, SNP; no GT */
#define EFR_4_LEVEL 0x801000000000018cull

static void cap_header_decodes_exactly(void **state)
{
	struct amd_cap_header h;

	amd_cap_header_decode(CAP_HEADER, &h);
	assert_true(h.iotlb);
	assert_true(h.np_cache);
	assert_true(h.efr_sup);
	amd_cap_header_decode(0x0003400f, &h);
	assert_false(h.iotlb);
	assert_false(h.np_cache);
	assert_false(h.efr_sup);
}

static void efr_6_level_decodes_exactly(void **state)
{
	struct amd_efr e;

	amd_efr_decode(EFR_6_LEVEL, &e);
	assert_true(e.ppr);
	assert_false(e.x2apic);
	assert_false(e.nx);
	assert_true(e.gt);
	assert_true(e.ia);
	assert_false(e.ga);
	assert_false(e.he);
	assert_true(e.pc);
	assert_int_equal(e.hats, 2);
	assert_int_equal(e.gats, 0);
	assert_int_equal(e.pasid_bits, 16);
	assert_false(e.hd);
	assert_false(e.snp);
	assert_int_equal(e.host_levels, 6);
	assert_int_equal(e.host_addr_bits, 64);
}

static void efr_4_level_decodes_exactly(void **state)
{
	struct amd_efr e;

	amd_efr_decode(EFR_4_LEVEL, &e);
	assert_false(e.ppr);
	assert_true(e.x2apic);
	assert_true(e.nx);
	assert_false(e.gt);
	assert_true(e.ga);
	assert_true(e.he);
	assert_false(e.pc);
	assert_int_equal(e.hats, 0);
	assert_int_equal(e.pasid_bits, 0);
	assert_true(e.hd);
	assert_true(e.snp);
	assert_int_equal(e.host_levels, 4);
	assert_int_equal(e.host_addr_bits, 48);
}

static void efr_hats_5_levels_and_reserved(void **state)
{
	struct amd_efr e;

	amd_efr_decode(1ull << 10, &e);
	assert_int_equal(e.host_levels, 5);
	assert_int_equal(e.host_addr_bits, 57);
	amd_efr_decode(3ull << 10, &e);
	assert_int_equal(e.host_levels, 0);
	assert_int_equal(e.host_addr_bits, 0);
}

static void features_before_6_0_is_efr_alone(void **state)
{
	uint64_t efr = 0;

	assert_int_equal(amd_features_efr("f00000a52", "5.10.0-28-amd64", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	assert_int_equal(amd_features_efr("f00000a52", NULL, &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
}

/* 6.0 to 6.6 print EFR2:EFR, 6.7 on EFR:EFR2 */
static void features_pair_order_follows_the_release(void **state)
{
	uint64_t efr = 0;

	assert_int_equal(amd_features_efr("5:f00000a52", "6.1.0-18-amd64", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	assert_int_equal(amd_features_efr("5:f00000a52", "6.6.30", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	assert_int_equal(amd_features_efr("f00000a52:5", "6.7.0", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	assert_int_equal(amd_features_efr("f00000a52:5", "6.12.48+deb13-amd64", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	assert_int_equal(amd_features_efr("f00000a52:5", "7.2.0-1-amd64", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
}

static void features_pair_without_release(void **state)
{
	uint64_t efr = 7;

	assert_int_equal(amd_features_efr("0:f00000a52", NULL, &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	assert_int_equal(amd_features_efr("f00000a52:0", "garbage", &efr), 0);
	assert_int_equal(efr, EFR_6_LEVEL);
	efr = 7;
	assert_int_equal(amd_features_efr("1:f00000a52", NULL, &efr), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(efr, 7);
}

static void features_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		":",
		"1:",
		":1",
		"1:2:3",
		"xyz",
		"0x",
		"-1",
		" 1",
		"1 ",
		"1:2 ",
		"10000000000000000",
		"0000000000000000000000000000000000000000001",
	};
	uint64_t efr = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(amd_features_efr(bad[i], "6.1.0", &efr), -1);
		assert_int_equal(efr, 7);
	}
}

static void v1_page_sizes(void **state)
{
	uint64_t bitmap = amd_v1_pgsize_bitmap();

	assert_int_equal(bitmap, 0xfff7ffffff000ull);
	assert_true(bitmap & LEAF_4K);
	assert_true(bitmap & (16ull << 10));
	assert_true(bitmap & LEAF_2M);
	assert_true(bitmap & LEAF_1G);
	assert_false(bitmap & (1ull << 39));
	assert_false(bitmap & (1ull << 52));
	assert_false(bitmap & 0xfff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cap_header_decodes_exactly),
		cmocka_unit_test(efr_6_level_decodes_exactly),
		cmocka_unit_test(efr_4_level_decodes_exactly),
		cmocka_unit_test(efr_hats_5_levels_and_reserved),
		cmocka_unit_test(features_before_6_0_is_efr_alone),
		cmocka_unit_test(features_pair_order_follows_the_release),
		cmocka_unit_test(features_pair_without_release),
		cmocka_unit_test(features_malformed),
		cmocka_unit_test(v1_page_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
