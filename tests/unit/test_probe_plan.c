/* The probe plan's choice of where the domain of a map or unmap comes from: the driver calls
 * stand in for the IOMMU core calls only where they see every call of the machine's IOMMUs. The
 * plans are written here as probe_plan_build would leave them on such machines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/iommu_units.h"
#include "tracer/probe_plan.h"

#define INTEL (1u << IOMMU_VENDOR_INTEL)
#define AMD (1u << IOMMU_VENDOR_AMD)
#define OTHER (1u << IOMMU_VENDOR_OTHER)
#define MAP (1u << IT_CALL_MAP)
#define UNMAP (1u << IT_CALL_UNMAP)

static void add(struct probe_plan *plan, enum probe_role role, const char *target, unsigned vendors,
		bool in_kernel, enum probe_mech mech)
{
	assert_true(plan->count < PROBE_PLAN_MAX);
	plan->probes[plan->count++] = (struct probe){ .role = role,
						      .target = target,
						      .vendors = vendors,
						      .in_kernel = in_kernel,
						      .mech = mech };
}

/* A 6.1-like kernel: both vendors' map_pages/unmap_pages, no map_range; the core calls probed. */
static void kernel_6_1(struct probe_plan *plan, unsigned iommu_vendors)
{
	*plan = (struct probe_plan){ .domain_calls = true, .iommu_vendors = iommu_vendors };
	add(plan, ROLE_DOMAIN_CALL, "iommu_map", 0, true, MECH_FENTRY);
	add(plan, ROLE_DOMAIN_CALL, "iommu_unmap", 0, true, MECH_FENTRY);
	add(plan, ROLE_DRIVER_MAP, "intel_iommu_map_pages", INTEL, true, MECH_KPROBE);
	add(plan, ROLE_DRIVER_MAP, "amd_iommu_map_pages", AMD, true, MECH_KPROBE);
	add(plan, ROLE_DRIVER_UNMAP, "intel_iommu_unmap_pages", INTEL, true, MECH_FENTRY);
	add(plan, ROLE_DRIVER_UNMAP, "amd_iommu_unmap_pages", AMD, true, MECH_FENTRY);
	add(plan, ROLE_DRIVER_MAP_RANGE, "vtdss_map_range", INTEL, false, MECH_NONE);
}

static void intel_or_amd_machine_takes_both_from_drivers(void **state)
{
	struct probe_plan plan;

	(void)state;
	kernel_6_1(&plan, INTEL);
	assert_int_equal(probe_plan_driver_domains(&plan), MAP | UNMAP);
	kernel_6_1(&plan, AMD);
	assert_int_equal(probe_plan_driver_domains(&plan), MAP | UNMAP);
	kernel_6_1(&plan, INTEL | AMD);
	assert_int_equal(probe_plan_driver_domains(&plan), MAP | UNMAP);
}

/* virtio-iommu, an SMMU, or no IOMMU at all: no probed driver sees their calls */
static void other_or_no_iommu_keeps_core_calls(void **state)
{
	struct probe_plan plan;

	(void)state;
	kernel_6_1(&plan, INTEL | OTHER);
	assert_int_equal(probe_plan_driver_domains(&plan), 0);
	kernel_6_1(&plan, OTHER);
	assert_int_equal(probe_plan_driver_domains(&plan), 0);
	kernel_6_1(&plan, 0);
	assert_int_equal(probe_plan_driver_domains(&plan), 0);
}

/* A function of the machine's vendor that the kernel has but the plan could not probe (no slot,
 * refused) may be the one its maps go through: that kind keeps its core calls. The other
 * vendor's functions do not matter. */
static void unprobed_function_of_the_vendor_keeps_its_kind(void **state)
{
	struct probe_plan plan;

	(void)state;
	kernel_6_1(&plan, INTEL);
	plan.probes[2].mech = MECH_NONE; /* intel_iommu_map_pages */
	assert_int_equal(probe_plan_driver_domains(&plan), UNMAP);
	kernel_6_1(&plan, INTEL);
	plan.probes[5].mech = MECH_NONE; /* amd_iommu_unmap_pages */
	assert_int_equal(probe_plan_driver_domains(&plan), MAP | UNMAP);
	kernel_6_1(&plan, AMD);
	plan.probes[5].mech = MECH_NONE;
	assert_int_equal(probe_plan_driver_domains(&plan), MAP);
}

/* A kernel without the vendor's functions (renamed, not built), or one whose core maps through
 * map_range (7.1 on: that record takes the core call's domain) */
static void missing_driver_or_map_range_keeps_core_calls(void **state)
{
	struct probe_plan plan;

	(void)state;
	kernel_6_1(&plan, INTEL);
	plan.probes[2].in_kernel = false;
	plan.probes[2].mech = MECH_NONE;
	assert_int_equal(probe_plan_driver_domains(&plan), UNMAP);
	kernel_6_1(&plan, INTEL);
	plan.probes[6].in_kernel = true;
	plan.probes[6].mech = MECH_FENTRY;
	assert_int_equal(probe_plan_driver_domains(&plan), UNMAP);
	/* an AMD machine is not concerned by VT-d's map_range */
	kernel_6_1(&plan, AMD);
	plan.probes[6].in_kernel = true;
	assert_int_equal(probe_plan_driver_domains(&plan), MAP | UNMAP);
}

/* --tracepoints-only: no call's domain is looked up at all */
static void tracepoints_only_takes_none(void **state)
{
	struct probe_plan plan;

	(void)state;
	kernel_6_1(&plan, INTEL);
	plan.domain_calls = false;
	assert_int_equal(probe_plan_driver_domains(&plan), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intel_or_amd_machine_takes_both_from_drivers),
		cmocka_unit_test(other_or_no_iommu_keeps_core_calls),
		cmocka_unit_test(unprobed_function_of_the_vendor_keeps_its_kind),
		cmocka_unit_test(missing_driver_or_map_range_keeps_core_calls),
		cmocka_unit_test(tracepoints_only_takes_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
