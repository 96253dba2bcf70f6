/* Binding and putting back (probes/device_binding.c) through a fixture's sysfs, with the binding
 * journal in a temporary IOMMUTRACE_RUN_DIR: what device_bind reads and writes (driver_override,
 * the old driver's unbind, drivers_probe) and in which order it stops, what device_put_back and
 * device_restore write back, a device whose disk is mounted refused before anything is written,
 * and map's and io's setup doing the same through its options' root. The fixture has no kernel
 * behind it: a write changes the file and nothing else, so a bind never takes and a rebind never
 * happens, and the tests say so, except where a thread plays the kernel's nvme driver (a put-back
 * waits for its controller to be live). The device's domain is one no machine has, so that a root
 * ignored can never reach a real device. Binding on a real machine runs in the testbed
 * (tests/vm). */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>
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

/* The kernel's part in putting an NVMe back, played by a thread. drivers_probe is a FIFO the
 * thread keeps full, so that a probe written there waits until the thread has linked the device
 * to nvme with its controller 'connecting' (the kernel binds inside the write) and then drains
 * it. 200 ms after each probe the controller is live, or, for the probes in @let_go, the driver
 * lets the device go (the link removed), as the kernel's nvme driver does when its asynchronous
 * probe fails; the next probe is awaited 500 ms later, once the put-back has seen that. */
struct kernel_play {
	int probes, let_go; /* let_go: a bit per probe, from the first */
	int fifo;
	pthread_t thread;
};

static void link_nvme(const char *state)
{
	char path[PATH_MAX];

	fixture_path(path, "%s/" DEV "/driver", root);
	unlink(path);
	fixture_pci_link(root, BDF, "driver", "../../../bus/pci/drivers/nvme");
	fixture_write(root, DEV "/nvme/nvme0/state", state);
}

static void fill(int fd)
{
	static const char filler[4096];

	while (write(fd, filler, sizeof(filler)) > 0)
		;
}

/* Reads what a blocked writer wrote behind the filler: true when it was BDF */
static bool drain_probe(int fd)
{
	char buf[4096];
	size_t got = 0;
	ssize_t n;

	for (int idle = 0; idle < 100;) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			got += (size_t)n;
			idle = 0;
			if (n < (ssize_t)sizeof(buf) && got % sizeof(buf))
				return n >= 12 && !memcmp(buf + n - 12, BDF, 12);
		} else {
			idle++;
			usleep(10 * 1000);
		}
	}
	return false;
}

static void *play_kernel(void *arg)
{
	struct kernel_play *k = arg;
	char unbind[64], path[PATH_MAX];

	do { /* the put-back's unbind comes before its probe */
		usleep(1000);
		fixture_read(root, "sys/bus/pci/drivers/vfio-pci/unbind", unbind, sizeof(unbind));
	} while (strcmp(unbind, BDF));
	for (int i = 0; i < 2; i++) {
		if (i)
			usleep(500 * 1000);
		link_nvme("connecting\n");
		if (!drain_probe(k->fifo))
			return NULL;
		k->probes++;
		usleep(200 * 1000);
		if (!(k->let_go & 1 << i)) {
			fixture_write(root, DEV "/nvme/nvme0/state", "live\n");
			return NULL;
		}
		fill(k->fifo);
		fixture_path(path, "%s/" DEV "/driver", root);
		unlink(path);
	}
	return NULL;
}

static void start_kernel(struct kernel_play *k, int let_go)
{
	char path[PATH_MAX];

	*k = (struct kernel_play){ .let_go = let_go };
	fixture_path(path, "%s/sys/bus/pci/drivers_probe", root);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	k->fifo = open(path, O_RDWR | O_NONBLOCK);
	assert_true(k->fifo >= 0);
	fill(k->fifo);
	fixture_write(root, "sys/bus/pci/drivers/vfio-pci/unbind", "");
	relink_driver("vfio-pci");
	assert_int_equal(pthread_create(&k->thread, NULL, play_kernel, k), 0);
}

static void end_kernel(struct kernel_play *k)
{
	pthread_join(k->thread, NULL);
	close(k->fifo);
}

/* A put-back to nvme waits for the controller to be live; when the driver lets the device go
 * after its probe, it is probed once more and the put-back says so; twice, it failed. */
static void waits_for_the_nvme_controller(void **state)
{
	struct device_binding b = { .bdf = BDF,
				    .sysfs_root = root,
				    .bound = true,
				    .orig_driver = "nvme" };
	char was[SYSFS_NAME_MAX + 1], why[512];
	struct kernel_play k;

	start_kernel(&k, 0);
	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)), DEVICE_PUT_BACK_DONE);
	end_kernel(&k);
	assert_int_equal(k.probes, 1);
	assert_string_equal(why, "");
	assert_file(DEV "/nvme/nvme0/state", "live\n");

	start_kernel(&k, 1);
	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)), DEVICE_PUT_BACK_DONE);
	end_kernel(&k);
	assert_int_equal(k.probes, 2);
	assert_non_null(strstr(why, "the nvme driver let it go "));
	assert_non_null(strstr(why, " s after its probe; probed again, it is back"));

	start_kernel(&k, 3);
	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)), DEVICE_PUT_BACK_FAILED);
	end_kernel(&k);
	assert_int_equal(k.probes, 2);
	assert_non_null(strstr(why, "; probed again: the nvme driver let it go "));
}

/* A controller that never comes up: failed once ready_ms has passed, saying its state. */
static void a_controller_that_stays_down_fails(void **state)
{
	struct device_binding b = { .bdf = BDF,
				    .sysfs_root = root,
				    .bound = true,
				    .orig_driver = "nvme",
				    .ready_ms = 100 }; /* before the thread's 200 ms */
	char was[SYSFS_NAME_MAX + 1], why[512];
	struct kernel_play k;

	start_kernel(&k, 0);
	assert_int_equal(device_put_back(&b, false, was, why, sizeof(why)), DEVICE_PUT_BACK_FAILED);
	end_kernel(&k);
	/* the time is measured, so only its form is pinned */
	assert_non_null(strstr(why, "its NVMe controller is 'connecting' 0."));
	assert_non_null(strstr(why, " s after the probe"));
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
		cmocka_unit_test_setup_teardown(waits_for_the_nvme_controller, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(a_controller_that_stays_down_fails, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(setup_binds_and_closes_through_the_root,
						make_machine, remove_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
