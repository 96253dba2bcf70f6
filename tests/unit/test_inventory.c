/* The inventory readers on fixture trees: the QEMU testbed machine read exactly, AMD and other
 * vendors' units, and malformed, missing or hostile files that must leave fields unknown
 * without crashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/amd_cap.h"
#include "common/inventory.h"
#include "common/leaf.h"
#include "tests/unit/sysfs_fixture.h"

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

static void qemu_machine_boot_options(void **state)
{
	struct inventory inv;

	fixture_qemu(*state);
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_boot_options, 2);
	assert_string_equal(inv.boot_options[0].name, "intel_iommu");
	assert_string_equal(inv.boot_options[0].value, "on");
	assert_string_equal(inv.boot_options[1].name, "iommu.strict");
	assert_string_equal(inv.boot_options[1].value, "0");
	inventory_free(&inv);
}

static void qemu_machine_iommu_unit(void **state)
{
	struct inventory inv;
	const struct iommu_unit *u;

	fixture_qemu(*state);
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_iommus, 1);
	u = &inv.iommus[0];
	assert_string_equal(u->name, "dmar0");
	assert_int_equal(u->vendor, IOMMU_VENDOR_INTEL);
	assert_string_equal(iommu_vendor_name(u->vendor), "intel");
	assert_true(u->have_cap);
	assert_int_equal(u->cap, QEMU_VTD_CAP);
	assert_true(u->have_ecap);
	assert_int_equal(u->ecap, QEMU_VTD_ECAP);
	assert_string_equal(u->version, "1:0");
	assert_int_equal(u->pgsize_bitmap, LEAF_4K | LEAF_2M | LEAF_1G);
	assert_int_equal(u->addr_width_bits, 39);
	assert_int_equal(u->sagaw, 2);
	assert_int_equal(u->caching_mode, 1);
	assert_int_equal(u->pass_through, 1);
	assert_int_equal(u->scalable_mode, 0);
	inventory_free(&inv);
}

static void expect_bar(const struct pci_bar *b, unsigned index, uint64_t start, uint64_t size,
		       bool is_64bit, bool prefetchable)
{
	assert_int_equal(b->index, index);
	assert_int_equal(b->start, start);
	assert_int_equal(b->size, size);
	assert_int_equal(b->is_64bit, is_64bit);
	assert_int_equal(b->prefetchable, prefetchable);
}

static void qemu_machine_devices_sorted_with_bars(void **state)
{
	struct inventory inv;
	const struct pci_device *d;

	fixture_qemu(*state);
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_devices, 3);

	d = &inv.devices[0];
	assert_string_equal(d->bdf, "0000:00:04.0");
	assert_int_equal(d->vendor_id, 0x1b36);
	assert_int_equal(d->device_id, 0x0010);
	assert_int_equal(d->class_code, 0x010802);
	assert_string_equal(d->driver, "nvme");
	assert_int_equal(d->iommu_group, 3);
	assert_string_equal(d->iommu, "dmar0");
	assert_int_equal(d->numa_node, -1);
	assert_int_equal(d->n_bars, 1);
	expect_bar(&d->bars[0], 0, 0xfebd0000, 16384, true, false);

	d = &inv.devices[1];
	assert_string_equal(d->bdf, "0000:00:05.0");
	assert_int_equal(d->vendor_id, 0x1af4);
	assert_int_equal(d->device_id, 0x1110);
	assert_int_equal(d->class_code, 0x050000);
	assert_string_equal(d->driver, "");
	assert_int_equal(d->iommu_group, 4);
	assert_int_equal(d->numa_node, 0);
	assert_int_equal(d->n_bars, 2);
	expect_bar(&d->bars[0], 0, 0xfebd4000, 256, false, false);
	expect_bar(&d->bars[1], 2, 0x800000000ull, 2ull << 30, true, true);

	/* I/O-port BARs 0-4 are skipped */
	d = &inv.devices[2];
	assert_string_equal(d->bdf, "0000:00:1f.2");
	assert_string_equal(d->driver, "ahci");
	assert_int_equal(d->iommu_group, 2);
	assert_int_equal(d->n_bars, 1);
	expect_bar(&d->bars[0], 5, 0xfebd5000, 4096, false, false);
	inventory_free(&inv);
}

static void qemu_machine_groups(void **state)
{
	struct inventory inv;
	const struct iommu_group *g;

	fixture_qemu(*state);
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_groups, 4);
	assert_int_equal(inv.groups[0].id, 2);
	assert_string_equal(inv.groups[0].domain_type, "identity");
	assert_int_equal(inv.groups[1].id, 3);
	assert_string_equal(inv.groups[1].domain_type, "DMA-FQ");
	assert_int_equal(inv.groups[2].id, 4);
	assert_string_equal(inv.groups[2].domain_type, "DMA");
	assert_int_equal(inv.groups[3].id, 10);
	assert_string_equal(inv.groups[3].domain_type, "");
	g = iommu_groups_find(inv.groups, inv.n_groups, 3);
	assert_non_null(g);
	assert_string_equal(g->domain_type, "DMA-FQ");
	assert_null(iommu_groups_find(inv.groups, inv.n_groups, 5));
	assert_null(iommu_groups_find(NULL, 0, 3));
	inventory_free(&inv);
}

static void empty_root_is_an_empty_inventory(void **state)
{
	struct inventory inv;

	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_boot_options, 0);
	assert_int_equal(inv.n_iommus, 0);
	assert_int_equal(inv.n_devices, 0);
	assert_int_equal(inv.n_groups, 0);
	inventory_free(&inv);
	assert_int_equal(inventory_read("/nonexistent/iommutrace-root", &inv), 0);
	assert_int_equal(inv.n_iommus + inv.n_devices + inv.n_groups + inv.n_boot_options, 0);
	inventory_free(&inv);
}

static void amd_unit(const char *root, const char *name, const char *cap, const char *features)
{
	char rel[PATH_MAX];

	fixture_path(rel, "sys/class/iommu/%s/amd-iommu/cap", name);
	fixture_write(root, rel, cap);
	fixture_path(rel, "sys/class/iommu/%s/amd-iommu/features", name);
	fixture_write(root, rel, features);
}

static void amd_units_decode_by_release(void **state)
{
	struct inventory inv;
	const struct iommu_unit *u;

	/* 6.1 prints EFR2:EFR; the EFR has HATS 2 (6 levels) */
	fixture_write(*state, "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
	amd_unit(*state, "ivhd0", "d03400f\n", "5:f00000a52\n");
	/* no NpCache; 4-level EFR alone, as before 6.0 */
	amd_unit(*state, "ivhd1", "0x0803400f\n", "801000000000018c\n");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_iommus, 2);

	u = &inv.iommus[0];
	assert_string_equal(u->name, "ivhd0");
	assert_int_equal(u->vendor, IOMMU_VENDOR_AMD);
	assert_true(u->have_cap);
	assert_int_equal(u->cap, 0x0d03400f);
	assert_true(u->have_ecap);
	assert_int_equal(u->ecap, 0xf00000a52ull);
	assert_string_equal(u->version, "");
	assert_int_equal(u->pgsize_bitmap, amd_v1_pgsize_bitmap());
	assert_int_equal(u->addr_width_bits, 64);
	assert_int_equal(u->sagaw, -1);
	assert_int_equal(u->caching_mode, 1);
	assert_int_equal(u->pass_through, 1);
	assert_int_equal(u->scalable_mode, IOMMU_CAP_UNKNOWN);

	u = &inv.iommus[1];
	assert_int_equal(u->cap, 0x0803400f);
	assert_int_equal(u->ecap, 0x801000000000018cull);
	assert_int_equal(u->addr_width_bits, 48);
	assert_int_equal(u->caching_mode, 0);
	inventory_free(&inv);
}

/* The AMD IOMMU's own PCI function has an 'iommu' directory (the unit it implements), not a link
 * to a unit translating for it: no translating unit, no warning. */
static void amd_iommu_function_is_not_translated(void **state)
{
	struct inventory inv;

	fixture_pci_device(*state, "0000:00:01.0", "0x1022\n", "0x0008\n", "0x080600\n", "-1\n",
			   "0x0 0x0 0x0\n");
	fixture_mkdir(*state, "sys/devices/pci0000:00/0000:00:01.0/iommu/ivhd0");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_devices, 1);
	assert_string_equal(inv.devices[0].bdf, "0000:00:01.0");
	assert_string_equal(inv.devices[0].iommu, "");
	assert_int_equal(inv.devices[0].vendor_id, 0x1022);
	inventory_free(&inv);
}

static void amd_features_pair_without_release_is_unknown(void **state)
{
	struct inventory inv;

	amd_unit(*state, "ivhd0", "d03400f\n", "5:f00000a52\n");
	amd_unit(*state, "ivhd1", "d03400f\n", "f00000a52:0\n");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_iommus, 2);
	assert_false(inv.iommus[0].have_ecap);
	assert_int_equal(inv.iommus[0].addr_width_bits, 0);
	assert_int_equal(inv.iommus[0].pgsize_bitmap, amd_v1_pgsize_bitmap());
	assert_true(inv.iommus[1].have_ecap);
	assert_int_equal(inv.iommus[1].ecap, 0xf00000a52ull);
	inventory_free(&inv);
}

/* without EFRSup the EFR is kept raw but not decoded */
static void amd_without_efr_support(void **state)
{
	struct inventory inv;

	amd_unit(*state, "ivhd0", "0403400f\n", "0\n");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_true(inv.iommus[0].have_ecap);
	assert_int_equal(inv.iommus[0].ecap, 0);
	assert_int_equal(inv.iommus[0].addr_width_bits, 0);
	assert_int_equal(inv.iommus[0].caching_mode, 1);
	inventory_free(&inv);
}

static void other_vendor_and_name_order(void **state)
{
	struct inventory inv;

	fixture_mkdir(*state, "sys/class/iommu/viommu0");
	fixture_mkdir(*state, "sys/class/iommu/dmar10/intel-iommu");
	fixture_mkdir(*state, "sys/class/iommu/dmar2/intel-iommu");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_iommus, 3);
	assert_string_equal(inv.iommus[0].name, "dmar2");
	assert_string_equal(inv.iommus[1].name, "dmar10");
	assert_string_equal(inv.iommus[2].name, "viommu0");
	assert_int_equal(inv.iommus[2].vendor, IOMMU_VENDOR_OTHER);
	assert_string_equal(iommu_vendor_name(inv.iommus[2].vendor), "other");
	for (size_t i = 0; i < 3; i++) {
		const struct iommu_unit *u = &inv.iommus[i];

		assert_false(u->have_cap);
		assert_false(u->have_ecap);
		assert_int_equal(u->pgsize_bitmap, 0);
		assert_int_equal(u->addr_width_bits, 0);
		assert_int_equal(u->sagaw, -1);
		assert_int_equal(u->caching_mode, IOMMU_CAP_UNKNOWN);
		assert_int_equal(u->pass_through, IOMMU_CAP_UNKNOWN);
		assert_int_equal(u->scalable_mode, IOMMU_CAP_UNKNOWN);
	}
	inventory_free(&inv);
}

/* The vendors alone, as the probe plan asks them: one bit per vendor present, none without
 * units. */
static void unit_vendors_as_bits(void **state)
{
	assert_int_equal(iommu_units_vendors(*state), 0);
	fixture_mkdir(*state, "sys/class/iommu/dmar0/intel-iommu");
	fixture_mkdir(*state, "sys/class/iommu/dmar1/intel-iommu");
	assert_int_equal(iommu_units_vendors(*state), 1u << IOMMU_VENDOR_INTEL);
	fixture_mkdir(*state, "sys/class/iommu/ivhd0/amd-iommu");
	assert_int_equal(iommu_units_vendors(*state),
			 1u << IOMMU_VENDOR_INTEL | 1u << IOMMU_VENDOR_AMD);
	fixture_mkdir(*state, "sys/class/iommu/viommu0");
	assert_int_equal(iommu_units_vendors(*state), 1u << IOMMU_VENDOR_INTEL |
							      1u << IOMMU_VENDOR_AMD |
							      1u << IOMMU_VENDOR_OTHER);
}

static void malformed_intel_registers(void **state)
{
	struct inventory inv;
	const struct iommu_unit *u;

	fixture_write(*state, "sys/class/iommu/dmar0/intel-iommu/cap", "zzz\n");
	fixture_write(*state, "sys/class/iommu/dmar0/intel-iommu/ecap", "f00f5a\n");
	fixture_write(*state, "sys/class/iommu/dmar0/intel-iommu/version", "1:0:junk\n");
	fixture_write(*state, "sys/class/iommu/dmar1/intel-iommu/cap", "1d2008c22260286\n");
	fixture_write(*state, "sys/class/iommu/dmar1/intel-iommu/ecap", "");
	fixture_write(*state, "sys/class/iommu/dmar1/intel-iommu/version", "1:\n");
	fixture_write(*state, "sys/class/iommu/dmar2/intel-iommu/cap", "0xd2008c22260286 \n");
	fixture_write(*state, "sys/class/iommu/dmar2/intel-iommu/ecap", "-1\n");
	fixture_write(*state, "sys/class/iommu/dmar3/intel-iommu/cap", "10000000000000000\n");
	fixture_mkdir(*state, "sys/class/iommu/dmar3/intel-iommu/ecap");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_iommus, 4);

	u = &inv.iommus[0];
	assert_false(u->have_cap);
	assert_int_equal(u->pgsize_bitmap, 0);
	assert_int_equal(u->caching_mode, IOMMU_CAP_UNKNOWN);
	assert_true(u->have_ecap);
	assert_int_equal(u->pass_through, 1);
	assert_string_equal(u->version, "");

	/* 15 hex digits is a fine 64-bit value; an empty ecap is not */
	u = &inv.iommus[1];
	assert_true(u->have_cap);
	assert_int_equal(u->cap, 0x1d2008c22260286ull);
	assert_false(u->have_ecap);
	assert_int_equal(u->pass_through, IOMMU_CAP_UNKNOWN);
	assert_string_equal(u->version, "");

	u = &inv.iommus[2];
	assert_false(u->have_cap);
	assert_false(u->have_ecap);

	/* 2^64 overflows; a directory is not a register file */
	u = &inv.iommus[3];
	assert_false(u->have_cap);
	assert_false(u->have_ecap);
	inventory_free(&inv);
}

/* A FIFO where a register file should be must not block the reader. */
static void fifo_is_not_read(void **state)
{
	struct inventory inv;
	char path[PATH_MAX];

	fixture_mkdir(*state, "sys/class/iommu/dmar0/intel-iommu");
	fixture_path(path, "%s/sys/class/iommu/dmar0/intel-iommu/cap", (char *)*state);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_false(inv.iommus[0].have_cap);
	inventory_free(&inv);
}

static void oversized_file_is_refused(void **state)
{
	struct inventory inv;
	char big[8192];

	memset(big, '0', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fixture_write(*state, "sys/class/iommu/dmar0/intel-iommu/cap", big);
	fixture_pci_device(*state, "0000:00:04.0", "0x1b36\n", "0x0010\n", "0x010802\n", "-1\n",
			   big);
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_false(inv.iommus[0].have_cap);
	assert_int_equal(inv.n_devices, 1);
	assert_int_equal(inv.devices[0].n_bars, 0);
	inventory_free(&inv);
}

static void malformed_device_files(void **state)
{
	struct inventory inv;
	const struct pci_device *d;

	fixture_pci_device(*state, "0000:00:04.0", "0x1b36x\n", "0x10000\n", "0x1000000\n", "abc\n",
			   "garbage\n");
	fixture_pci_link(*state, "0000:00:04.0", "driver", "..");
	fixture_pci_link(*state, "0000:00:04.0", "iommu_group", "../../../kernel/iommu_groups/x");
	fixture_pci_link(*state, "0000:00:04.0", "iommu", "../../virtual/iommu/bad\001name");
	fixture_pci_device(*state, "0000:00:05.0", "", "0x\n", "-0x1\n", "1024\n", "");
	fixture_pci_link(*state, "0000:00:05.0", "iommu_group", "../../../kernel/iommu_groups/-3");
	/* a device directory with nothing in it */
	fixture_mkdir(*state, "sys/bus/pci/devices/0000:00:06.0");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_devices, 3);
	for (size_t i = 0; i < inv.n_devices; i++) {
		d = &inv.devices[i];
		assert_int_equal(d->vendor_id, -1);
		assert_int_equal(d->device_id, -1);
		assert_int_equal(d->class_code, -1);
		assert_string_equal(d->driver, "");
		assert_int_equal(d->iommu_group, -1);
		assert_string_equal(d->iommu, "");
		assert_int_equal(d->numa_node, -1);
		assert_int_equal(d->n_bars, 0);
	}
	assert_string_equal(inv.devices[2].bdf, "0000:00:06.0");
	inventory_free(&inv);
}

static void unexpected_device_names_are_skipped(void **state)
{
	struct inventory inv;

	fixture_mkdir(*state, "sys/bus/pci/devices/00:04.0");
	fixture_mkdir(*state, "sys/bus/pci/devices/0000:00:04.8");
	fixture_mkdir(*state, "sys/bus/pci/devices/0000:00:20.0");
	fixture_mkdir(*state, "sys/bus/pci/devices/0000:00:04.0x");
	fixture_mkdir(*state, "sys/bus/pci/devices/0000:00:0A.0");
	fixture_mkdir(*state, "sys/bus/pci/devices/garbage");
	fixture_mkdir(*state, "sys/bus/pci/devices/0000:00:04.0");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_devices, 1);
	assert_string_equal(inv.devices[0].bdf, "0000:00:04.0");
	inventory_free(&inv);
}

static void malformed_groups(void **state)
{
	struct inventory inv;

	fixture_group(*state, 1, "DMA\001\n");
	fixture_group(*state, 5, "\n");
	fixture_group(*state, 6, "DMA FQ\n");
	fixture_group(*state, 7, "unmanaged\n");
	fixture_mkdir(*state, "sys/kernel/iommu_groups/03");
	fixture_mkdir(*state, "sys/kernel/iommu_groups/abc");
	fixture_mkdir(*state, "sys/kernel/iommu_groups/-1");
	fixture_mkdir(*state, "sys/kernel/iommu_groups/99999999999");
	assert_int_equal(inventory_read(*state, &inv), 0);
	assert_int_equal(inv.n_groups, 4);
	assert_int_equal(inv.groups[0].id, 1);
	assert_string_equal(inv.groups[0].domain_type, "");
	assert_int_equal(inv.groups[1].id, 5);
	assert_string_equal(inv.groups[1].domain_type, "");
	assert_int_equal(inv.groups[2].id, 6);
	assert_string_equal(inv.groups[2].domain_type, "");
	assert_int_equal(inv.groups[3].id, 7);
	assert_string_equal(inv.groups[3].domain_type, "unmanaged");
	inventory_free(&inv);
}

static struct pci_device parse_resources(const char *text)
{
	struct pci_device dev;

	memset(&dev, 0xa5, sizeof(dev));
	pci_parse_resources(text, "resource", &dev);
	return dev;
}

static void resource_lines(void **state)
{
	struct pci_device d;

	/* a 64-bit BAR takes two slots: the upper half is an empty line */
	d = parse_resources("0x00000000febd0000 0x00000000febd3fff 0x0000000000140204\n" RES_EMPTY
			    "0x0000000800000000 0x000000087fffffff 0x000000000014220c\n" RES_EMPTY
			    "0x00000000febd4000 0x00000000febd4fff 0x0000000000040200\n"
			    "0x00000000febd5000 0x00000000febd5fff 0x0000000000042208\n"
			    "0x00000000fe000000 0x00000000fe03ffff 0x0000000000046200\n");
	assert_int_equal(d.n_bars, 4);
	expect_bar(&d.bars[0], 0, 0xfebd0000, 16384, true, false);
	expect_bar(&d.bars[1], 2, 0x800000000ull, 2ull << 30, true, true);
	expect_bar(&d.bars[2], 4, 0xfebd4000, 4096, false, false);
	expect_bar(&d.bars[3], 5, 0xfebd5000, 4096, false, true);

	/* the last line need not end in a newline; fewer than six lines is fine */
	d = parse_resources("0x1000 0x1fff 0x200");
	assert_int_equal(d.n_bars, 1);
	expect_bar(&d.bars[0], 0, 0x1000, 4096, false, false);
	d = parse_resources("");
	assert_int_equal(d.n_bars, 0);
}

static void resource_lines_malformed(void **state)
{
	struct pci_device d;
	char long_line[300];

	/* each bad BAR is skipped; the good one after them is kept */
	d = parse_resources("garbage\n"
			    "0x2000 0x1fff 0x200\n"
			    "0x1000 0x1fff 0x300\n"
			    "0x0 0xffffffffffffffff 0x200\n"
			    "0x1000  0x1fff 0x200\n"
			    "0x3000 0x3fff 0x200\n");
	assert_int_equal(d.n_bars, 1);
	expect_bar(&d.bars[0], 5, 0x3000, 4096, false, false);

	d = parse_resources("0x1000 0x1fff 0x200 0x0\n"
			    "-0x1000 0x1fff 0x200\n"
			    "0x1000 0x1fff\n"
			    "0x10000000000000000 0x1fff 0x200\n"
			    "\n"
			    "0x1000 0x1fff 0x20000200\n"
			    "0x5000 0x5fff 0x200\n");
	assert_int_equal(d.n_bars, 0);

	/* a line too long for the parser is malformed, not truncated into a valid one */
	snprintf(long_line, sizeof(long_line), "0x1000 0x1fff 0x%0200d\n0x4000 0x4fff 0x200\n",
		 200);
	d = parse_resources(long_line);
	assert_int_equal(d.n_bars, 1);
	expect_bar(&d.bars[0], 1, 0x4000, 4096, false, false);

	/* disabled and I/O BARs are not recorded */
	d = parse_resources("0x1000 0x1fff 0x10000200\n0xc000 0xc01f 0x101\n");
	assert_int_equal(d.n_bars, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(qemu_machine_boot_options, make_root, remove_root),
		cmocka_unit_test_setup_teardown(qemu_machine_iommu_unit, make_root, remove_root),
		cmocka_unit_test_setup_teardown(amd_iommu_function_is_not_translated, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(qemu_machine_devices_sorted_with_bars, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(qemu_machine_groups, make_root, remove_root),
		cmocka_unit_test_setup_teardown(empty_root_is_an_empty_inventory, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(amd_units_decode_by_release, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(amd_features_pair_without_release_is_unknown,
						make_root, remove_root),
		cmocka_unit_test_setup_teardown(amd_without_efr_support, make_root, remove_root),
		cmocka_unit_test_setup_teardown(other_vendor_and_name_order, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(unit_vendors_as_bits, make_root, remove_root),
		cmocka_unit_test_setup_teardown(malformed_intel_registers, make_root, remove_root),
		cmocka_unit_test_setup_teardown(fifo_is_not_read, make_root, remove_root),
		cmocka_unit_test_setup_teardown(oversized_file_is_refused, make_root, remove_root),
		cmocka_unit_test_setup_teardown(malformed_device_files, make_root, remove_root),
		cmocka_unit_test_setup_teardown(unexpected_device_names_are_skipped, make_root,
						remove_root),
		cmocka_unit_test_setup_teardown(malformed_groups, make_root, remove_root),
		cmocka_unit_test(resource_lines),
		cmocka_unit_test(resource_lines_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
