/* VT-d CAP/ECAP decoding, pinned on the QEMU emulated unit and hand-built register values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/intel_cap.h"
#include "common/leaf.h"

/* QEMU intel-iommu, caching-mode=on, aw-bits=39 (design notes: 2 MiB and 1 GiB superpages) */
#define QEMU_CAP 0xd2008c22260286ull
/* the same with SLLPS = 1 (2 MiB only) and SLLPS = 0 (no superpages) */
#define QEMU_CAP_NO_1G 0xd2008422260286ull
#define QEMU_CAP_NO_SP 0xd2008022260286ull
/* ND 6, RWBF, SAGAW 4- and 5-level, MGAW 57, SLLPS 3, PSI, MAMV 63, FL1GP, PI, FL5LP, bit 63 */
#define SERVER_CAP 0x993f008c00380c16ull
/* QEMU with intremap, eim and pt: QI, IR, EIM, PT */
#define QEMU_ECAP 0xf00f5aull
/* C, QI, DT, IR, EIM, PT, SC, NEST, PRS, PSS 19, PASID, SMTS, SLTS, FLTS, PMS */
#define SCALABLE_ECAP 0x8c998240000dfull

static void qemu_cap_decodes_exactly(void **state)
{
	struct intel_cap c;

	intel_cap_decode(QEMU_CAP, &c);
	assert_int_equal(c.nd, 6);
	assert_int_equal(c.num_domains, 65536);
	assert_false(c.rwbf);
	assert_true(c.caching_mode);
	assert_int_equal(c.sagaw, 0x2);
	assert_int_equal(c.mgaw_bits, 39);
	assert_int_equal(c.sllps, 0x3);
	assert_true(c.psi);
	assert_int_equal(c.mamv, 18);
	assert_false(c.fl1gp);
	assert_false(c.pi);
	assert_false(c.fl5lp);
	assert_int_equal(intel_sagaw_max_bits(c.sagaw), 39);
}

static void qemu_cap_page_sizes_are_4k_2m_1g(void **state)
{
	assert_int_equal(intel_cap_pgsize_bitmap(QEMU_CAP), LEAF_4K | LEAF_2M | LEAF_1G);
	assert_int_equal(intel_cap_pgsize_bitmap(QEMU_CAP), 0x40201000);
}

static void sllps_1_gives_2m_without_1g(void **state)
{
	struct intel_cap c;

	intel_cap_decode(QEMU_CAP_NO_1G, &c);
	assert_int_equal(c.sllps, 0x1);
	assert_int_equal(intel_cap_pgsize_bitmap(QEMU_CAP_NO_1G), LEAF_4K | LEAF_2M);
}

static void sllps_0_gives_4k_only(void **state)
{
	struct intel_cap c;

	intel_cap_decode(QEMU_CAP_NO_SP, &c);
	assert_int_equal(c.sllps, 0);
	assert_int_equal(intel_cap_pgsize_bitmap(QEMU_CAP_NO_SP), LEAF_4K);
}

/* bits 36 and 37 are reserved since VT-d 3.0: never in the page-size set */
static void reserved_sllps_bits_are_ignored(void **state)
{
	assert_int_equal(intel_cap_pgsize_bitmap(0xcull << 34), LEAF_4K);
	assert_int_equal(intel_cap_pgsize_bitmap(0xfull << 34), LEAF_4K | LEAF_2M | LEAF_1G);
}

static void server_cap_decodes_exactly(void **state)
{
	struct intel_cap c;

	intel_cap_decode(SERVER_CAP, &c);
	assert_int_equal(c.nd, 6);
	assert_true(c.rwbf);
	assert_false(c.caching_mode);
	assert_int_equal(c.sagaw, 0xc);
	assert_int_equal(c.mgaw_bits, 57);
	assert_int_equal(c.sllps, 3);
	assert_true(c.psi);
	assert_int_equal(c.mamv, 63);
	assert_true(c.fl1gp);
	assert_true(c.pi);
	assert_true(c.fl5lp);
	assert_int_equal(intel_sagaw_max_bits(c.sagaw), 57);
}

static void all_zero_cap(void **state)
{
	struct intel_cap c;

	intel_cap_decode(0, &c);
	assert_int_equal(c.num_domains, 16);
	assert_int_equal(c.mgaw_bits, 1);
	assert_int_equal(c.sagaw, 0);
	assert_int_equal(intel_sagaw_max_bits(0), 0);
	assert_int_equal(intel_cap_pgsize_bitmap(0), LEAF_4K);
}

static void all_ones_cap_stays_in_range(void **state)
{
	struct intel_cap c;

	intel_cap_decode(UINT64_MAX, &c);
	assert_int_equal(c.nd, 7);
	assert_int_equal(c.num_domains, 1u << 18);
	assert_int_equal(c.sagaw, 0x1f);
	assert_int_equal(c.mgaw_bits, 64);
	assert_int_equal(c.sllps, 0xf);
	assert_int_equal(c.mamv, 63);
	assert_int_equal(intel_sagaw_max_bits(c.sagaw), 64);
}

static void sagaw_widths(void **state)
{
	assert_int_equal(intel_sagaw_max_bits(0x1), 30);
	assert_int_equal(intel_sagaw_max_bits(0x2), 39);
	assert_int_equal(intel_sagaw_max_bits(0x4), 48);
	assert_int_equal(intel_sagaw_max_bits(0x6), 48);
	assert_int_equal(intel_sagaw_max_bits(0x8), 57);
	assert_int_equal(intel_sagaw_max_bits(0x10), 64);
}

static void qemu_ecap_decodes_exactly(void **state)
{
	struct intel_ecap e;

	intel_ecap_decode(QEMU_ECAP, &e);
	assert_false(e.coherent);
	assert_true(e.qi);
	assert_false(e.dt);
	assert_true(e.ir);
	assert_true(e.eim);
	assert_true(e.pt);
	assert_false(e.sc);
	assert_false(e.nest);
	assert_false(e.prs);
	assert_false(e.pasid);
	assert_int_equal(e.pasid_bits, 0);
	assert_false(e.smts);
	assert_false(e.slts);
	assert_false(e.flts);
	assert_false(e.pms);
}

static void scalable_ecap_decodes_exactly(void **state)
{
	struct intel_ecap e;

	intel_ecap_decode(SCALABLE_ECAP, &e);
	assert_true(e.coherent);
	assert_true(e.qi);
	assert_true(e.dt);
	assert_true(e.ir);
	assert_true(e.eim);
	assert_true(e.pt);
	assert_true(e.sc);
	assert_true(e.nest);
	assert_true(e.prs);
	assert_true(e.pasid);
	assert_int_equal(e.pasid_bits, 20);
	assert_true(e.smts);
	assert_true(e.slts);
	assert_true(e.flts);
	assert_true(e.pms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(qemu_cap_decodes_exactly),
		cmocka_unit_test(qemu_cap_page_sizes_are_4k_2m_1g),
		cmocka_unit_test(sllps_1_gives_2m_without_1g),
		cmocka_unit_test(sllps_0_gives_4k_only),
		cmocka_unit_test(reserved_sllps_bits_are_ignored),
		cmocka_unit_test(server_cap_decodes_exactly),
		cmocka_unit_test(all_zero_cap),
		cmocka_unit_test(all_ones_cap_stays_in_range),
		cmocka_unit_test(sagaw_widths),
		cmocka_unit_test(qemu_ecap_decodes_exactly),
		cmocka_unit_test(scalable_ecap_decodes_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
