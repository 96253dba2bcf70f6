/* The page-size set a recording derives pages with when a mapping's domain is unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/leaf.h"
#include "tracer/session_metadata.h"

#define VTD_SP (LEAF_4K | LEAF_2M | LEAF_1G)

static uint64_t pgsizes(struct iommu_unit *units, size_t n, struct boot_option *opts, size_t nopts)
{
	struct inventory inv = { .iommus = units,
				 .n_iommus = n,
				 .boot_options = opts,
				 .n_boot_options = nopts };

	return session_pgsize_bitmap(&inv);
}

static void units_share_their_common_sizes(void **state)
{
	struct iommu_unit units[2] = { { .pgsize_bitmap = VTD_SP },
				       { .pgsize_bitmap = LEAF_4K | LEAF_2M } };

	assert_int_equal(pgsizes(units, 1, NULL, 0), VTD_SP);
	assert_int_equal(pgsizes(units, 2, NULL, 0), LEAF_4K | LEAF_2M);
	/* a unit that does not say is left out */
	units[1].pgsize_bitmap = 0;
	assert_int_equal(pgsizes(units, 2, NULL, 0), VTD_SP);
}

static void no_unit_gives_the_default(void **state)
{
	struct iommu_unit disjoint[2] = { { .pgsize_bitmap = LEAF_2M },
					  { .pgsize_bitmap = LEAF_1G } };

	assert_int_equal(pgsizes(NULL, 0, NULL, 0), VTD_SP);
	assert_int_equal(pgsizes(disjoint, 2, NULL, 0), VTD_SP);
}

static void sp_off_leaves_4k(void **state)
{
	struct iommu_unit unit = { .pgsize_bitmap = VTD_SP };
	struct boot_option sp_off = { .name = "intel_iommu", .value = "on,sp_off" };
	struct boot_option on = { .name = "intel_iommu", .value = "on" };

	assert_int_equal(pgsizes(&unit, 1, &sp_off, 1), LEAF_4K);
	assert_int_equal(pgsizes(NULL, 0, &sp_off, 1), LEAF_4K);
	assert_int_equal(pgsizes(&unit, 1, &on, 1), VTD_SP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(units_share_their_common_sizes),
		cmocka_unit_test(no_unit_gives_the_default),
		cmocka_unit_test(sp_off_leaves_4k),
	};

	return cmocka_run_group_tests_name("session page-size set", tests, NULL, NULL);
}
