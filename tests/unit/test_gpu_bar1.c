/* NVIDIA GPUs' BAR1: which devices count as GPUs, BAR1 taken from the inventory's BARs (index 1,
 * or unassigned), and NVML asked for real on this machine: without NVIDIA's driver every GPU says
 * why there are no numbers, and none claims to have them. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/gpu_bar1.h"
#include "common/nvml.h"

static struct pci_device gpu(const char *bdf, int vendor, int class_code)
{
	struct pci_device d = { .vendor_id = vendor,
				.device_id = 0x2330,
				.class_code = class_code,
				.iommu_group = -1,
				.numa_node = -1 };

	strcpy(d.bdf, bdf);
	return d;
}

static void which_devices_are_gpus(void **state)
{
	struct pci_device vga = gpu("0000:01:00.0", 0x10de, 0x030000);
	struct pci_device three_d = gpu("0000:02:00.0", 0x10de, 0x030200);
	struct pci_device audio = gpu("0000:01:00.1", 0x10de, 0x040300);
	struct pci_device bridge = gpu("0000:03:00.0", 0x10de, 0x060400);
	struct pci_device other = gpu("0000:04:00.0", 0x1002, 0x030000);
	struct pci_device unknown = gpu("0000:05:00.0", 0x10de, -1);

	assert_true(gpu_is_nvidia(&vga));
	assert_true(gpu_is_nvidia(&three_d));
	assert_false(gpu_is_nvidia(&audio));
	assert_false(gpu_is_nvidia(&bridge));
	assert_false(gpu_is_nvidia(&other));
	assert_false(gpu_is_nvidia(&unknown));
}

static void bar1_from_the_inventory(void **state)
{
	struct pci_device devs[3] = { gpu("0000:01:00.0", 0x10de, 0x030200),
				      gpu("0000:01:00.1", 0x10de, 0x040300),
				      gpu("0000:02:00.0", 0x10de, 0x030000) };
	struct gpu_bar1 *gpus;
	size_t n;

	devs[0].n_bars = 3;
	devs[0].bars[0] = (struct pci_bar){ .index = 0, .start = 0xfa000000, .size = 16 << 20 };
	devs[0].bars[1] = (struct pci_bar){ .index = 1,
					    .start = 0x38000000000ull,
					    .size = 64ull << 30,
					    .is_64bit = true };
	devs[0].bars[2] =
		(struct pci_bar){ .index = 3, .start = 0x39000000000ull, .size = 32 << 20 };
	devs[2].n_bars = 1; /* BAR1 unassigned: only BAR0 has an address */
	devs[2].bars[0] = (struct pci_bar){ .index = 0, .start = 0xfb000000, .size = 16 << 20 };
	assert_int_equal(gpu_bar1_read(devs, 3, false, &gpus, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(gpus[0].bdf, "0000:01:00.0");
	assert_true(gpus[0].assigned);
	assert_int_equal(gpus[0].start, 0x38000000000ull);
	assert_int_equal(gpus[0].size, 64ull << 30);
	assert_false(gpus[0].have_nvml);
	assert_string_equal(gpus[0].nvml_status, "not asked (a --root tree, not the live system)");
	assert_string_equal(gpus[1].bdf, "0000:02:00.0");
	assert_false(gpus[1].assigned);
	assert_int_equal(gpus[1].size, 0);
	free(gpus);
	assert_int_equal(gpu_bar1_read(devs + 1, 1, true, &gpus, &n), 0); /* no GPU */
	assert_int_equal(n, 0);
	assert_null(gpus);
}

/* NVML for real: this machine's answer, whatever it is, is a reason and no numbers for a GPU
 * that is not there. Without the library the reason is the loader's. */
static void nvml_asked_for_real(void **state)
{
	struct pci_device dev = gpu("0000:ff:1f.7", 0x10de, 0x030200);
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	struct gpu_bar1 *gpus;
	char err[160];
	size_t n;

	assert_int_equal(gpu_bar1_read(&dev, 1, true, &gpus, &n), 0);
	assert_int_equal(n, 1);
	assert_false(gpus[0].have_nvml);
	assert_true(gpus[0].nvml_status[0] != '\0');
	assert_string_not_equal(gpus[0].nvml_status, "ok");
	if (!lib) {
		assert_non_null(strstr(gpus[0].nvml_status, "libnvidia-ml.so.1"));
		assert_null(nvml_open(err, sizeof(err)));
		assert_non_null(strstr(err, "libnvidia-ml.so.1"));
	} else {
		dlclose(lib);
	}
	free(gpus);
	nvml_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(which_devices_are_gpus),
		cmocka_unit_test(bar1_from_the_inventory),
		cmocka_unit_test(nvml_asked_for_real),
	};

	return cmocka_run_group_tests_name("GPU BAR1", tests, NULL, NULL);
}
