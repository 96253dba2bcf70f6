/* Binding and putting back (probes/device_binding.c) through a fixture's sysfs, with the binding
 * journal in a temporary IOMMUTRACE_RUN_DIR: what device_bind reads and writes (driver_override,
 * the old driver's unbind, drivers_probe) and in which order it stops, what device_put_back and
 * device_restore write back, a device whose disk is mounted refused before anything is written,
 * and map's and io's setup doing the same through its options' root. The fixture has no kernel
 * behind it: a write changes the file and nothing else, so a bind never takes and a rebind never
 * happens, and the tests say so. The device's domain is one no machine has, so that a root
 * ignored can never reach a real device. Binding on a real machine runs in the testbed
 * (tests/vm). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "probes/binding_journal.h"
#include "probes/device_binding.h"
#include "probes/device_setup.h"
#include "tests/unit/sysfs_fixture.h"

#define BDF "7e57:00:04.0"
#define DEV "sys/devices/pci0000:00/" BDF

/* fn(b), with what it writes to stderr in said */
static int said_by(int (*fn)(struct device_binding *), struct device_binding *b, char *said,
		   size_t len)
{
	FILE *log = tmpfile();
	int saved = dup(2), rc;
	size_t n;

	assert_non_null(log);
	fflush(stderr);
	dup2(fileno(log), 2);
	rc = fn(b);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(log);
	n = fread(said, 1, len - 1, log);
	said[n] = '\0';
	fclose(log);
	return rc;
}

static char root[PATH_MAX];

/* An NVMe on nvme in IOMMU group 3, no driver_override, vfio-pci loaded; the run directory in the
 * tree too. */
static int make_machine(void **state)
{
	char run[PATH_MAX];

	fixture_create(root);
	fixture_pci_device(root, BDF, "0x1b36\n", "0x0010\n", "0x010802\n", "-1\n", RES_EMPTY);
	fixture_pci_link(root, BDF, "driver", "../../../bus/pci/drivers/nvme");
	fixture_pci_link(root, BDF, "iommu_group", "../../../kernel/iommu_groups/3");
	fixture_group(root, 3, "DMA-FQ\n");
	fixture_write(root, DEV "/driver_override", "(null)\n");
	fixture_write(root, "sys/bus/pci/drivers/nvme/unbind", "");
	fixture_write(root, "sys/bus/pci/drivers/vfio-pci/unbind", "");
	fixture_write(root, "sys/bus/pci/drivers_probe", "");
	fixture_path(run, "%s/run", root);
	return setenv("IOMMUTRACE_RUN_DIR", run, 1);
}

static int remove_machine(void **state)
{
	fixture_destroy(root);
	return unsetenv("IOMMUTRACE_RUN_DIR");
}

static void assert_file(const char *rel, const char *want)
{
	char got[256];

	fixture_read(root, rel, got, sizeof(got));
	assert_string_equal(got, want);
}

/* Moves the fixture's driver link, as the kernel would on a bind. */
static void relink_driver(const char *driver)
{
	char path[PATH_MAX], target[PATH_MAX];

	fixture_path(path, "%s/" DEV "/driver", root);
	assert_int_equal(unlink(path), 0);
	fixture_path(target, "../../../bus/pci/drivers/%s", driver);
	fixture_pci_link(root, BDF, "driver", target);
}

/* The bind writes driver_override, unbinds nvme and asks for a probe, all in the tree, after
 * journaling the original binding; the fixture's driver link stays on nvme, so it fails at the
 * end with the device marked for restoring. Restoring then (the kernel's part played by the
 * test: the device on vfio-pci) unbinds vfio-pci, clears driver_override and reprobes; the link
 * stays on vfio-pci, so that fails too, and the journal entry stays for `iommutrace restore`. */
static void binds_and_restores_through_the_root(void **state)
{
	struct device_binding b;
	char said[512];
	struct binding_journal_entry e;

	assert_int_equal(device_bind_vfio(&b, root, BDF, false), -1);
	assert_true(b.bound);
	assert_ptr_equal(b.sysfs_root, root);
	assert_string_equal(b.orig_driver, "nvme");
	assert_string_equal(b.orig_override, "");
	assert_file(DEV "/driver_override", "vfio-pci");
	assert_file("sys/bus/pci/drivers/nvme/unbind", BDF);
	assert_file("sys/bus/pci/drivers_probe", BDF);
	assert_file("sys/bus/pci/drivers/vfio-pci/unbind", "");
	assert_int_equal(binding_journal_read(BDF, &e), 0);
	assert_string_equal(e.orig_driver, "nvme");
	assert_string_equal(e.bound_to, "vfio-pci");

	relink_driver("vfio-pci");
	/* emptied, so that what the restore writes is all they hold */
	fixture_write(root, DEV "/driver_override", "");
	fixture_write(root, "sys/bus/pci/drivers_probe", "");
	/* the fixture's driver link stays: not back on nvme, said in one line */
	assert_int_equal(said_by(device_restore, &b, said, sizeof(said)), -1);
	assert_string_equal(said,
			    "iommutrace: error: " BDF ": not put back on nvme: it is on "
			    "'vfio-pci' after the reprobe; 'iommutrace restore' tries again\n");
	assert_false(b.bound);
	assert_file("sys/bus/pci/drivers/vfio-pci/unbind", BDF);
	assert_file(DEV "/driver_override", "\n");
	assert_file("sys/bus/pci/drivers_probe", BDF);
	assert_int_equal(binding_journal_read(BDF, &e), 0);
	assert_int_equal(device_restore(&b), 0); /* twice: nothing more */
	assert_int_equal(binding_journal_remove(BDF), 0);
}

/* A device that had no driver goes back to none: unbound from vfio-pci, driver_override cleared,
 * no probe; a dry run first finds that out and writes nothing. */
static void puts_back_a_device_that_had_no_driver(void **state)
{
	struct device_binding b = { .bdf = BDF, .sysfs_root = root, .bound = true };
	char was[SYSFS_NAME_MAX + 1], why[512];

	relink_driver("vfio-pci");
	fixture_write(root, DEV "/driver_override", "vfio-pci\n");
	assert_int_equal(device_put_back(&b, true, was, why, sizeof(why)), DEVICE_PUT_BACK_DONE);
	assert_string_equal(was, "vfio-pci");
	assert_file("sys/bus/pci/drivers/vfio-pci/unbind", "");
	assert_file(DEV "/driver_override", "vfio-pci\n");

	fixture_write(root, DEV "/driver_override", "");
	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)), DEVICE_PUT_BACK_DONE);
	assert_file("sys/bus/pci/drivers/vfio-pci/unbind", BDF);
	assert_file(DEV "/driver_override", "\n");
	assert_file("sys/bus/pci/drivers_probe", "");
}

/* Already back where it was: nothing written. Gone from the tree: nothing to put back. */
static void already_back_and_gone(void **state)
{
	struct device_binding b = { .bdf = BDF,
				    .sysfs_root = root,
				    .bound = true,
				    .orig_driver = "nvme" };
	char was[SYSFS_NAME_MAX + 1], link[PATH_MAX], why[512];

	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)),
			 DEVICE_PUT_BACK_ALREADY);
	assert_string_equal(was, "nvme");
	assert_file(DEV "/driver_override", "(null)\n");
	assert_file("sys/bus/pci/drivers/nvme/unbind", "");

	fixture_path(link, "%s/sys/bus/pci/devices/" BDF, root);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)), DEVICE_PUT_BACK_GONE);
}

/* The device's disk is mounted, by the tree's mountinfo: refused before anything is written or
 * journaled. */
static void refuses_a_device_whose_disk_is_mounted(void **state)
{
	struct device_binding b;
	struct binding_journal_entry e;

	fixture_write(root, DEV "/nvme/nvme9/nvme9n1/dev", "259:9\n");
	fixture_mkdir(root, DEV "/nvme/nvme9/nvme9n1/holders");
	fixture_symlink(root, "sys/block/nvme9n1",
			"../devices/pci0000:00/" BDF "/nvme/nvme9/nvme9n1");
	fixture_write(root, "proc/self/mountinfo",
		      "31 1 259:9 / /data rw,relatime - ext4 /dev/nvme9n1 rw\n");
	assert_int_equal(device_bind_vfio(&b, root, BDF, false), -1);
	assert_false(b.bound);
	assert_file(DEV "/driver_override", "(null)\n");
	assert_file("sys/bus/pci/drivers/nvme/unbind", "");
	assert_int_equal(binding_journal_read(BDF, &e), -1);
	assert_int_equal(errno, ENOENT);
}

/* Nothing to do for a device already on the driver; no group, or the driver not loaded, refused
 * before it leaves its driver. */
static void refusals_and_nothing_to_do(void **state)
{
	struct device_binding b;
	char path[PATH_MAX];

	assert_int_equal(device_bind(&b, root, BDF, "nvme", false), 0);
	assert_false(b.bound);
	assert_int_equal(device_bind(&b, root, BDF, "uio_pci_generic", false), -1);
	assert_false(b.bound);
	fixture_path(path, "%s/" DEV "/iommu_group", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(device_bind_vfio(&b, root, BDF, false), -1);
	assert_false(b.bound);
	assert_file(DEV "/driver_override", "(null)\n");
	assert_file("sys/bus/pci/drivers_probe", "");
}

/* map's and io's setup binds through its options' root (the bind, which the fixture cannot
 * complete, fails at its end) and, closing, puts back through it. */
static void setup_binds_and_closes_through_the_root(void **state)
{
	static volatile sig_atomic_t no_stop;
	struct device_setup s = DEVICE_SETUP_INIT;
	struct device_setup_opts o = { .bdf = BDF,
				       .mapper = MAPPER_TYPE1,
				       .size = 2 << 20,
				       .stop = &no_stop,
				       .sysfs_root = root };

	assert_int_equal(buffer_parse("anon", &o.buffer), 0);
	assert_int_equal(device_setup_open(&s, &o), -1);
	assert_true(s.dev.bound);
	assert_file(DEV "/driver_override", "vfio-pci");
	assert_file("sys/bus/pci/drivers_probe", BDF);

	relink_driver("vfio-pci");
	assert_int_equal(device_setup_close(&s), -1); /* the fixture does not rebind */
	assert_file("sys/bus/pci/drivers/vfio-pci/unbind", BDF);
	assert_int_equal(binding_journal_remove(BDF), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(binds_and_restores_through_the_root, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(puts_back_a_device_that_had_no_driver, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(already_back_and_gone, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(refuses_a_device_whose_disk_is_mounted,
						make_machine, remove_machine),
		cmocka_unit_test_setup_teardown(refusals_and_nothing_to_do, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(setup_binds_and_closes_through_the_root,
						make_machine, remove_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
