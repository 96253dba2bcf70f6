/* What `io` finds out about its devices before any leaves its driver, on a sysfs fixture given as
 * the options' root: each is an NVMe controller by its PCI class, how the engine's DMA reaches
 * memory (IOMMU off, passthrough or translated) and the NUMA node and CPU its worker gets. Devices
 * are in a domain no machine has, so that a root ignored finds none of them. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* The command's own file, for its static parts; its entry point under a name of its own, since
 * the test links the library's cmd_io too. */
#define cmd_io cmd_io_under_test
#include "cli/io.c"
#undef cmd_io
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/unit/sysfs_fixture.h"

#define PASSTHROUGH "7e57:00:04.0" /* identity domain, NUMA node 1 */
#define TRANSLATED "7e57:00:05.0" /* DMA-FQ domain, NUMA node 1 */
#define NO_IOMMU "7e57:00:06.0" /* no group, no node */
#define AHCI "7e57:00:1f.2" /* not NVMe */

static char root[PATH_MAX];
static int local_cpu; /* the one CPU of node 1, one this process may run on */

static void nvme(const char *bdf, const char *numa, int group)
{
	char target[PATH_MAX], rel[PATH_MAX], cpulist[16];

	fixture_pci_device(root, bdf, "0x1b36\n", "0x0010\n", "0x010802\n", numa, RES_EMPTY);
	if (group < 0)
		return;
	fixture_path(target, "../../../kernel/iommu_groups/%d", group);
	fixture_pci_link(root, bdf, "iommu_group", target);
	fixture_path(rel, "sys/devices/pci0000:00/%s/local_cpulist", bdf);
	snprintf(cpulist, sizeof(cpulist), "%d\n", local_cpu);
	fixture_write(root, rel, cpulist);
}

static int make_machine(void **state)
{
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return -1;
	local_cpu = cpuset_nth(&allowed, 0);
	fixture_create(root);
	nvme(PASSTHROUGH, "1\n", 2);
	nvme(TRANSLATED, "1\n", 3);
	nvme(NO_IOMMU, "-1\n", -1);
	fixture_pci_device(root, AHCI, "0x8086\n", "0x2922\n", "0x010601\n", "-1\n", RES_EMPTY);
	fixture_group(root, 2, "identity\n");
	fixture_group(root, 3, "DMA-FQ\n");
	return 0;
}

static int remove_machine(void **state)
{
	fixture_destroy(root);
	return 0;
}

static void workers_for(struct io_opts *o, const char *const *bdfs, uint32_t n)
{
	o->ndevices = n;
	for (uint32_t i = 0; i < n; i++)
		snprintf(o->devices[i], sizeof(o->devices[i]), "%s", bdfs[i]);
}

static void addressing_and_placement(void **state)
{
	static const char *const bdfs[] = { PASSTHROUGH, TRANSLATED, NO_IOMMU };
	struct io_opts o = { .engine = &io_engine_uio, .sysfs_root = root };
	struct io_worker w[3] = { 0 };

	workers_for(&o, bdfs, 3);
	assert_int_equal(prepare_workers(&o, w), 0);
	assert_string_equal(w[0].iommu, "passthrough");
	assert_string_equal(w[1].iommu, "translated");
	assert_string_equal(w[2].iommu, "off");
	assert_int_equal(w[0].node, 1);
	assert_int_equal(w[0].cpu, local_cpu);
	assert_int_equal(w[1].node, 1);
	assert_int_equal(w[1].cpu, local_cpu); /* the second on the node: the list wraps */
	assert_int_equal(w[2].node, -1);
	assert_int_equal(w[2].cpu, -1);

	/* VFIO gives the device its own domain, whatever the group's type says now */
	memset(w, 0, sizeof(w));
	o.engine = &io_engine_vfio;
	assert_int_equal(prepare_workers(&o, w), 0);
	assert_string_equal(w[0].iommu, "translated");
	assert_string_equal(w[2].iommu, "off");
}

static void refuses_what_is_not_nvme(void **state)
{
	static const char *const bdfs[] = { PASSTHROUGH, AHCI };
	struct io_opts o = { .engine = &io_engine_uio, .sysfs_root = root };
	struct io_worker w[2] = { 0 };

	workers_for(&o, bdfs, 2);
	assert_int_equal(prepare_workers(&o, w), -1);
	assert_int_equal(check_nvme_class(root, AHCI), -1);
	assert_int_equal(check_nvme_class(root, "7e57:00:08.0"), -1); /* none there */
	assert_int_equal(check_nvme_class(root, TRANSLATED), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(addressing_and_placement, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(refuses_what_is_not_nvme, make_machine,
						remove_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
