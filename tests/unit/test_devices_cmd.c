/* `iommutrace devices` on fixture trees: exact text and JSON output, the no-IOMMU line, a root
 * too long for any path under it, and option errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <getopt.h>
#include <cmocka.h>
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "tests/unit/sysfs_fixture.h"

static char output[16384];

/* Runs `devices ARGS...` with stdout captured into output; returns its exit code. */
static int run_devices(int argc, const char **argv)
{
	FILE *tmp = tmpfile();
	size_t n;
	int saved, rc;

	assert_non_null(tmp);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	optind = 0; /* glibc: a full getopt reset between commands */
	rc = cmd_devices(argc, (char **)argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(output, 1, sizeof(output) - 1, tmp);
	output[n] = '\0';
	fclose(tmp);
	return rc;
}

static int make_root(void **state)
{
	char *root = malloc(PATH_MAX);

	if (!root)
		return -1;
	fixture_create(root);
	*state = root;
	return 0;
}

static int remove_root(void **state)
{
	fixture_destroy(*state);
	free(*state);
	return 0;
}

static void text_of_the_testbed(void **state)
{
	const char *argv[] = { "devices", "--root", *state };
	char want[4096];

	fixture_qemu(*state);
	assert_int_equal(run_devices(3, argv), IT_EXIT_OK);
	fixture_path(want,
		     "IOMMU units (%s/sys/class/iommu):\n"
		     "  dmar0: Intel VT-d 1:0\n"
		     "    page sizes      4 KiB, 2 MiB, 1 GiB\n"
		     "    address width   39 bits (MGAW); tables up to 39 bits (SAGAW 0x2)\n"
		     "    caching mode    yes\n"
		     "    scalable mode   no\n"
		     "    pass-through    yes\n"
		     "    registers       cap 0xd2008c22260286, ecap 0xf00f5a\n"
		     "\n"
		     "IOMMU boot options:\n"
		     "  intel_iommu=on\n"
		     "  iommu.strict=0\n"
		     "\n"
		     "PCI devices:\n"
		     "  BDF           VEND:DEV   CLASS   DRIVER        GROUP  DOMAIN     IOMMU   NUMA\n"
		     "  0000:00:04.0  1b36:0010  010802  nvme          3      DMA-FQ     dmar0   -\n"
		     "      BAR0  0x00000000febd0000  16 KiB    64-bit  non-prefetchable\n"
		     "  0000:00:05.0  1af4:1110  050000  -             4      DMA        dmar0   0\n"
		     "      BAR0  0x00000000febd4000  256 B     32-bit  non-prefetchable\n"
		     "      BAR2  0x0000000800000000  2 GiB     64-bit  prefetchable\n"
		     "  0000:00:1f.2  8086:2922  010601  ahci          2      identity   dmar0   -\n"
		     "      BAR5  0x00000000febd5000  4 KiB     32-bit  non-prefetchable\n",
		     (const char *)*state);
	assert_string_equal(output, want);
}

static void json_of_the_testbed(void **state)
{
	const char *argv[] = { "devices", "--json", "--root", *state };
	char want[8192];
	int n;

	fixture_qemu(*state);
	assert_int_equal(run_devices(4, argv), IT_EXIT_OK);
	n = snprintf(want, sizeof(want),
		     "{\n"
		     "  \"root\": \"%s\",\n"
		     "  \"iommus\": [\n"
		     "    {\n"
		     "      \"name\": \"dmar0\",\n"
		     "      \"vendor\": \"intel\",\n"
		     "      \"cap\": \"0xd2008c22260286\",\n"
		     "      \"ecap\": \"0xf00f5a\",\n"
		     "      \"version\": \"1:0\",\n"
		     "      \"pgsize_bitmap\": \"0x40201000\",\n"
		     "      \"supports_2m\": true,\n"
		     "      \"supports_1g\": true,\n"
		     "      \"mgaw_bits\": 39,\n"
		     "      \"sagaw\": 2,\n"
		     "      \"caching_mode\": true,\n"
		     "      \"pass_through\": true,\n"
		     "      \"scalable_mode\": false\n"
		     "    }\n"
		     "  ],\n"
		     "  \"boot_options\": [\n"
		     "    {\n"
		     "      \"name\": \"intel_iommu\",\n"
		     "      \"value\": \"on\"\n"
		     "    },\n"
		     "    {\n"
		     "      \"name\": \"iommu.strict\",\n"
		     "      \"value\": \"0\"\n"
		     "    }\n"
		     "  ],\n"
		     "  \"devices\": [\n"
		     "    {\n"
		     "      \"bdf\": \"0000:00:04.0\",\n"
		     "      \"vendor_id\": \"0x1b36\",\n"
		     "      \"device_id\": \"0x0010\",\n"
		     "      \"class_code\": \"0x010802\",\n"
		     "      \"driver\": \"nvme\",\n"
		     "      \"iommu_group\": 3,\n"
		     "      \"domain_type\": \"DMA-FQ\",\n"
		     "      \"iommu_name\": \"dmar0\",\n"
		     "      \"numa_node\": null,\n"
		     "      \"bars\": [\n"
		     "        {\n"
		     "          \"bar_index\": 0,\n"
		     "          \"start_addr\": \"0xfebd0000\",\n"
		     "          \"size_bytes\": 16384,\n"
		     "          \"size\": \"16 KiB\",\n"
		     "          \"is_64bit\": true,\n"
		     "          \"prefetchable\": false\n"
		     "        }\n"
		     "      ]\n"
		     "    },\n"
		     "    {\n"
		     "      \"bdf\": \"0000:00:05.0\",\n"
		     "      \"vendor_id\": \"0x1af4\",\n"
		     "      \"device_id\": \"0x1110\",\n"
		     "      \"class_code\": \"0x050000\",\n"
		     "      \"driver\": null,\n"
		     "      \"iommu_group\": 4,\n"
		     "      \"domain_type\": \"DMA\",\n"
		     "      \"iommu_name\": \"dmar0\",\n"
		     "      \"numa_node\": 0,\n"
		     "      \"bars\": [\n"
		     "        {\n"
		     "          \"bar_index\": 0,\n"
		     "          \"start_addr\": \"0xfebd4000\",\n"
		     "          \"size_bytes\": 256,\n"
		     "          \"size\": \"256 B\",\n"
		     "          \"is_64bit\": false,\n"
		     "          \"prefetchable\": false\n"
		     "        },\n"
		     "        {\n"
		     "          \"bar_index\": 2,\n"
		     "          \"start_addr\": \"0x800000000\",\n"
		     "          \"size_bytes\": 2147483648,\n"
		     "          \"size\": \"2 GiB\",\n"
		     "          \"is_64bit\": true,\n"
		     "          \"prefetchable\": true\n"
		     "        }\n"
		     "      ]\n"
		     "    },\n"
		     "    {\n"
		     "      \"bdf\": \"0000:00:1f.2\",\n"
		     "      \"vendor_id\": \"0x8086\",\n"
		     "      \"device_id\": \"0x2922\",\n"
		     "      \"class_code\": \"0x010601\",\n"
		     "      \"driver\": \"ahci\",\n"
		     "      \"iommu_group\": 2,\n"
		     "      \"domain_type\": \"identity\",\n"
		     "      \"iommu_name\": \"dmar0\",\n"
		     "      \"numa_node\": null,\n"
		     "      \"bars\": [\n"
		     "        {\n"
		     "          \"bar_index\": 5,\n"
		     "          \"start_addr\": \"0xfebd5000\",\n"
		     "          \"size_bytes\": 4096,\n"
		     "          \"size\": \"4 KiB\",\n"
		     "          \"is_64bit\": false,\n"
		     "          \"prefetchable\": false\n"
		     "        }\n"
		     "      ]\n"
		     "    }\n"
		     "  ],\n"
		     "  \"iommu_groups\": [\n"
		     "    {\n"
		     "      \"group_id\": 2,\n"
		     "      \"domain_type\": \"identity\"\n"
		     "    },\n"
		     "    {\n"
		     "      \"group_id\": 3,\n"
		     "      \"domain_type\": \"DMA-FQ\"\n"
		     "    },\n"
		     "    {\n"
		     "      \"group_id\": 4,\n"
		     "      \"domain_type\": \"DMA\"\n"
		     "    },\n"
		     "    {\n"
		     "      \"group_id\": 10,\n"
		     "      \"domain_type\": null\n"
		     "    }\n"
		     "  ],\n"
		     "  \"gpu_bar1\": []\n"
		     "}\n",
		     (const char *)*state);
	assert_true(n > 0 && (size_t)n < sizeof(want));
	assert_string_equal(output, want);
}

/* sp_off is called out; AMD and other vendors' units are shown as far as they are known */
static void superpages_off_amd_and_other_units(void **state)
{
	const char *argv[] = { "devices", "--root", *state };
	char want[4096];

	fixture_write(*state, "proc/cmdline",
		      "intel_iommu=on intel_iommu=sp_off iommu=\"\x1b[31m\"\n");
	fixture_write(*state, "proc/sys/kernel/osrelease", "6.8.0\n");
	fixture_write(*state, "sys/class/iommu/dmar0/intel-iommu/cap", "d2008c22260286\n");
	fixture_write(*state, "sys/class/iommu/dmar0/intel-iommu/ecap", "8c998240000df\n");
	fixture_write(*state, "sys/class/iommu/ivhd0/amd-iommu/cap", "0803400f\n");
	fixture_write(*state, "sys/class/iommu/ivhd0/amd-iommu/features", "f00000a52:0\n");
	fixture_mkdir(*state, "sys/class/iommu/viommu0");
	assert_int_equal(run_devices(3, argv), IT_EXIT_OK);
	fixture_path(want,
		     "IOMMU units (%s/sys/class/iommu):\n"
		     "  dmar0: Intel VT-d\n"
		     "    page sizes      4 KiB, 2 MiB, 1 GiB; superpages off (intel_iommu=sp_off): domains use 4 KiB only\n"
		     "    address width   39 bits (MGAW); tables up to 39 bits (SAGAW 0x2)\n"
		     "    caching mode    yes\n"
		     "    scalable mode   yes (first-level yes, with 1 GiB pages no; second-level yes; nested yes)\n"
		     "    pass-through    yes\n"
		     "    registers       cap 0xd2008c22260286, ecap 0x8c998240000df\n"
		     "  ivhd0: AMD-Vi\n"
		     "    page sizes      4 KiB..256 GiB, 1 TiB..2 PiB (v1 page table)\n"
		     "    address width   64 bits (6-level host table, EFR.HATS)\n"
		     "    caching mode    no (NpCache)\n"
		     "    scalable mode   n/a (Intel only)\n"
		     "    pass-through    yes (device table)\n"
		     "    registers       cap 0x803400f, EFR 0xf00000a52\n"
		     "  viommu0: other vendor; capabilities not decoded\n"
		     "\n"
		     "IOMMU boot options:\n"
		     "  intel_iommu=on\n"
		     "  intel_iommu=sp_off\n"
		     "  iommu=?[31m\n"
		     "\n"
		     "no PCI devices in %s/sys/bus/pci/devices\n",
		     (const char *)*state, (const char *)*state);
	assert_string_equal(output, want);
}

static void no_iommu_says_so_in_one_line(void **state)
{
	const char *argv[] = { "devices", "--root", *state };
	char want[4096];

	fixture_write(*state, "proc/cmdline", "quiet\n");
	assert_int_equal(run_devices(3, argv), IT_EXIT_OK);
	fixture_path(want,
		     "no IOMMU units in %s/sys/class/iommu: the IOMMU is off or absent (enable VT-d or AMD-Vi in "
		     "the firmware; on Intel, boot with intel_iommu=on)\n"
		     "\n"
		     "no IOMMU options on the kernel command line: kernel defaults apply\n"
		     "\n"
		     "no PCI devices in %s/sys/bus/pci/devices\n",
		     (const char *)*state, (const char *)*state);
	assert_string_equal(output, want);
}

/* A root so long that no path under it fits: nothing read, and the messages name the folders as
 * under the root, not as the live system's. */
static void root_too_long_for_any_path(void **state)
{
	static char long_root[PATH_MAX + 16];
	const char *argv[] = { "devices", "--root", long_root };

	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	memset(long_root, 'r', sizeof(long_root) - 1);
	long_root[0] = '/';
	/* its warnings, which name the root, go nowhere: pages of 'r' */
	assert_true(saved >= 0 && null >= 0);
	fflush(stderr);
	assert_true(dup2(null, STDERR_FILENO) >= 0);
	close(null);
	assert_int_equal(run_devices(3, argv), IT_EXIT_OK);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	assert_string_equal(output,
			    "no IOMMU units in /sys/class/iommu under --root: the IOMMU is off or absent (enable VT-d or "
			    "AMD-Vi in the firmware; on Intel, boot with intel_iommu=on)\n"
			    "\n"
			    "no IOMMU options on the kernel command line: kernel defaults apply\n"
			    "\n"
			    "no PCI devices in /sys/bus/pci/devices under --root\n");
}

static void empty_json_document(void **state)
{
	const char *argv[] = { "devices", "--root", *state, "--json" };
	char want[4096];

	assert_int_equal(run_devices(4, argv), IT_EXIT_OK);
	fixture_path(want,
		     "{\n"
		     "  \"root\": \"%s\",\n"
		     "  \"iommus\": [],\n"
		     "  \"boot_options\": [],\n"
		     "  \"devices\": [],\n"
		     "  \"iommu_groups\": [],\n"
		     "  \"gpu_bar1\": []\n"
		     "}\n",
		     (const char *)*state);
	assert_string_equal(output, want);
}

/* An NVIDIA GPU (3D controller) with its 64-bit BAR1, one whose BAR1 has no address, and the
 * GPU's audio function (not a display controller): the GPUs' BAR1 in their own section; NVML is
 * not asked for a --root tree, and the section says so. */
static void nvidia_gpus_bar1(void **state)
{
	const char *text[] = { "devices", "--root", *state };
	const char *json[] = { "devices", "--root", *state, "--json" };
	const char *gpus;

	fixture_pci_device(*state, "0000:65:00.0", "0x10de\n", "0x2330\n", "0x030200\n", "0\n",
			   "0x00000000fa000000 0x00000000faffffff 0x0000000000040200\n"
			   "0x0000238000000000 0x00002397ffffffff 0x000000000014220c\n" RES_EMPTY
			   "0x0000239800000000 0x0000239801ffffff 0x000000000014220c\n" RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY
					   RES_EMPTY RES_EMPTY);
	fixture_pci_device(*state, "0000:65:00.1", "0x10de\n", "0x22ba\n", "0x040300\n", "0\n",
			   "0x00000000fb000000 0x00000000fb003fff 0x0000000000040200\n" RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY
					   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY);
	fixture_pci_device(*state, "0000:b3:00.0", "0x10de\n", "0x20b5\n", "0x030000\n", "1\n",
			   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY);
	assert_int_equal(run_devices(3, text), IT_EXIT_OK);
	gpus = strstr(output, "\nNVIDIA GPUs, BAR1 (GPU memory as peers see it):\n");
	assert_non_null(gpus);
	assert_string_equal(gpus,
			    "\nNVIDIA GPUs, BAR1 (GPU memory as peers see it):\n"
			    "  0000:65:00.0  0x0000238000000000  96 GiB; use unknown: NVML: not asked (a --root tree, not "
			    "the live system)\n"
			    "  0000:b3:00.0  BAR1 unassigned; use unknown: NVML: not asked (a --root tree, not the live "
			    "system)\n");
	assert_int_equal(run_devices(4, json), IT_EXIT_OK);
	gpus = strstr(output, "\"gpu_bar1\": [");
	assert_non_null(gpus);
	assert_string_equal(gpus,
			    "\"gpu_bar1\": [\n"
			    "    {\n"
			    "      \"bdf\": \"0000:65:00.0\",\n"
			    "      \"device_id\": \"0x2330\",\n"
			    "      \"start_addr\": \"0x238000000000\",\n"
			    "      \"size_bytes\": 103079215104,\n"
			    "      \"nvml_total_bytes\": null,\n"
			    "      \"nvml_used_bytes\": null,\n"
			    "      \"nvml_free_bytes\": null,\n"
			    "      \"nvml_status\": \"not asked (a --root tree, not the live system)\"\n"
			    "    },\n"
			    "    {\n"
			    "      \"bdf\": \"0000:b3:00.0\",\n"
			    "      \"device_id\": \"0x20b5\",\n"
			    "      \"start_addr\": null,\n"
			    "      \"size_bytes\": null,\n"
			    "      \"nvml_total_bytes\": null,\n"
			    "      \"nvml_used_bytes\": null,\n"
			    "      \"nvml_free_bytes\": null,\n"
			    "      \"nvml_status\": \"not asked (a --root tree, not the live system)\"\n"
			    "    }\n"
			    "  ]\n"
			    "}\n");
}

static void bad_usage_exits_2_and_prints_nothing(void **state)
{
	const char *unknown_long[] = { "devices", "--bogus" };
	const char *unknown_short[] = { "devices", "-x" };
	const char *missing_root[] = { "devices", "--root" };
	const char *empty_root[] = { "devices", "--root", "" };
	const char *json_with_value[] = { "devices", "--json=1" };
	const char *positional[] = { "devices", "extra" };

	assert_int_equal(run_devices(2, unknown_long), IT_EXIT_USAGE);
	assert_string_equal(output, "");
	assert_int_equal(run_devices(2, unknown_short), IT_EXIT_USAGE);
	assert_string_equal(output, "");
	assert_int_equal(run_devices(2, missing_root), IT_EXIT_USAGE);
	assert_string_equal(output, "");
	assert_int_equal(run_devices(3, empty_root), IT_EXIT_USAGE);
	assert_string_equal(output, "");
	assert_int_equal(run_devices(2, json_with_value), IT_EXIT_USAGE);
	assert_string_equal(output, "");
	assert_int_equal(run_devices(2, positional), IT_EXIT_USAGE);
	assert_string_equal(output, "");
}

static void help_goes_to_stdout(void **state)
{
	const char *argv[] = { "devices", "--help" };

	assert_int_equal(run_devices(2, argv), IT_EXIT_OK);
	assert_true(!strncmp(output, "usage: iommutrace devices [--root DIR] [--json]\n", 48));
	assert_non_null(strstr(output, "exit status: 0 ok, 1 failure, 2 bad usage\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(text_of_the_testbed, make_root, remove_root),
		cmocka_unit_test_setup_teardown(json_of_the_testbed, make_root, remove_root),
		cmocka_unit_test_setup_teardown(superpages_off_amd_and_other_units, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(no_iommu_says_so_in_one_line, make_root,
						remove_root),
		cmocka_unit_test(root_too_long_for_any_path),
		cmocka_unit_test_setup_teardown(empty_json_document, make_root, remove_root),
		cmocka_unit_test_setup_teardown(nvidia_gpus_bar1, make_root, remove_root),
		cmocka_unit_test(bad_usage_exits_2_and_prints_nothing),
		cmocka_unit_test(help_goes_to_stdout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
