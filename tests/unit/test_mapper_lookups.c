/* What the mappers and the BAR buffer read from sysfs, on a fixture given as their root: a BAR's
 * address (probes/buffers.c), a device's IOMMU group (VFIO type1) and its VFIO cdev (iommufd). No
 * VFIO here: each lookup is seen in the step after it, which fails on the device node it names
 * (/dev/vfio/GROUP, /dev/vfio/devices/vfioN; numbers no machine has). Devices are in a domain no
 * machine has, so that a root ignored finds none of them. VFIO itself runs in the testbed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "probes/buffers.h"
#include "probes/iommufd.h"
#include "probes/vfio_type1.h"
#include "tests/unit/sysfs_fixture.h"

#define BDF "7e57:00:05.0"
#define GROUP 4093
#define CDEV "vfio4093"

static char root[PATH_MAX];
static char logged[1024];

/* ivshmem-like: BAR0 256 B at 0xfebd4000, BAR2 2 GiB at 0x800000000, in group GROUP, with its
 * VFIO cdev */
static int make_machine(void **state)
{
	char target[64];

	fixture_create(root);
	fixture_pci_device(root, BDF, "0x1af4\n", "0x1110\n", "0x050000\n", "0\n",
			   "0x00000000febd4000 0x00000000febd40ff 0x0000000000040200\n" RES_EMPTY
			   "0x0000000800000000 0x000000087fffffff 0x000000000014220c\n" RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY);
	snprintf(target, sizeof(target), "../../../kernel/iommu_groups/%d", GROUP);
	fixture_pci_link(root, BDF, "iommu_group", target);
	fixture_mkdir(root, "sys/devices/pci0000:00/" BDF "/vfio-dev/" CDEV);
	return 0;
}

static int remove_machine(void **state)
{
	fixture_destroy(root);
	return 0;
}

static FILE *capture;
static int saved_stderr = -1;

static void capture_stderr(void)
{
	capture = tmpfile();
	assert_non_null(capture);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
}

/* What was logged since capture_stderr(), into logged. */
static void release_stderr(void)
{
	size_t n;

	fflush(stderr);
	assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
	close(saved_stderr);
	rewind(capture);
	n = fread(logged, 1, sizeof(logged) - 1, capture);
	logged[n] = '\0';
	fclose(capture);
}

static void bar_start(void **state)
{
	uint64_t start = 0;

	assert_int_equal(buffer_bar_start(root, BDF, 0, &start), 0);
	assert_int_equal(start, 0xfebd4000);
	assert_int_equal(buffer_bar_start(root, BDF, 2, &start), 0);
	assert_int_equal(start, 0x800000000);
	capture_stderr();
	assert_int_equal(buffer_bar_start(root, BDF, 1, &start), -1);
	release_stderr();
	assert_string_equal(logged, "iommutrace: error: " BDF " has no BAR 1\n");
}

static void type1_finds_the_group(void **state)
{
	struct vfio_type1 v = VFIO_TYPE1_INIT;

	v.sysfs_root = root;
	capture_stderr();
	assert_int_equal(vfio_type1_add_device_group(&v, BDF), -1);
	release_stderr();
	assert_string_equal(logged, "iommutrace: error: opening /dev/vfio/4093: "
				    "No such file or directory\n");
	assert_int_equal(v.ngroups, 0);
}

static void iommufd_finds_the_cdev(void **state)
{
	struct iommufd_mapper m = IOMMUFD_MAPPER_INIT;

	m.sysfs_root = root;
	capture_stderr();
	assert_int_equal(iommufd_add_device(&m, BDF), -1);
	release_stderr();
	assert_string_equal(logged, "iommutrace: error: opening /dev/vfio/devices/" CDEV " (" BDF
				    "): No such file or directory\n");
	assert_int_equal(m.ndevices, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bar_start, make_machine, remove_machine),
		cmocka_unit_test_setup_teardown(type1_finds_the_group, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(iommufd_finds_the_cdev, make_machine,
						remove_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
