/* The uring engine without an NVMe: its refusals (a BAR window, which O_DIRECT cannot pin, and a
 * device off the nvme driver, each before anything is opened, and close() after a failed open),
 * and its run loop on a regular file standing in for the namespace's block device, with a sysfs
 * fixture for the device: writes lay down the disk pattern and reads check it, a queue deeper than
 * the submission ring, a failed command counted while the run goes on, and a device that went
 * away ending the run in one line and letting go of the disk at once; and its open finding the
 * namespace, its geometry and the controller's names under the target's sysfs root. Reads and
 * writes on the real NVMe run in the testbed (tests/vm/guest/io-uring). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/engine.h"
/* The engine's own file, for its static parts; its ops under a name of their own, since the test
 * links the library's io_engine_uring too (engine.h, included first, declares that one). */
#define io_engine_uring uring_engine_under_test
#include "io/uring_engine.c"
#undef io_engine_uring
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/unit/sysfs_fixture.h"

#define BDF "0000:00:04.0"
#define DISK "nvme9n1"
#define DISK2 "nvme9n2" /* a second namespace, in no /dev */
#define BLOCK 4096u /* not 512: pattern sectors are 8 per block */
#define DISK_BLOCKS 256u /* 1 MiB */
#define DISK_BYTES (DISK_BLOCKS * BLOCK)
#define BUFFER_BYTES (1u << 20)
#define RUN_NS 200000000ull /* ample for 1 MiB through the page cache */

static volatile sig_atomic_t no_stop;

/* A sysfs fixture of the NVMe on nvme with its disk, and a file as that disk. */
struct file_disk {
	char root[PATH_MAX], path[PATH_MAX];
	struct io_engine e;
};

static int file_disk_setup(void **state)
{
	struct file_disk *d = calloc(1, sizeof(*d));
	int fd;

	assert_non_null(d);
	fixture_create(d->root);
	fixture_pci_device(d->root, BDF, "0x1b36\n", "0x0010\n", "0x010802\n", "-1\n", RES_EMPTY);
	fixture_pci_link(d->root, BDF, "driver", "../../../bus/pci/drivers/nvme");
	fixture_write(d->root, "sys/block/" DISK "/dev", "259:0\n");
	fixture_path(d->path, "%s/disk", d->root);
	fd = open(d->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_BYTES), 0);
	assert_int_equal(close(fd), 0);
	*state = d;
	return 0;
}

static int file_disk_teardown(void **state)
{
	struct file_disk *d = *state;

	if (d->e.ops)
		d->e.ops->close(&d->e);
	fixture_destroy(d->root);
	free(d);
	return 0;
}

/* The engine as uring_open() leaves it, on the file, with a ring for max_qd. */
static void open_file_disk(struct file_disk *d, uint32_t max_qd)
{
	struct buffer_spec anon = { .kind = BUF_ANON };
	struct uring_engine *u = calloc(1, sizeof(*u));

	assert_non_null(u);
	*u = (struct uring_engine){ .fd = open(d->path, O_RDWR | O_CLOEXEC),
				    .bdf = BDF,
				    .disk = DISK,
				    .sysfs_root = d->root,
				    .block_size = BLOCK,
				    .buffer = BUFFER_INIT,
				    .stop = &no_stop };
	d->e = (struct io_engine){ .ops = &uring_engine_under_test,
				   .block_size = BLOCK,
				   .blocks = DISK_BLOCKS,
				   .priv = u };
	assert_true(u->fd >= 0);
	assert_int_equal(buffer_create(&u->buffer, &anon, BUFFER_BYTES, 0, -1), 0);
	assert_int_equal(setup_ring(u, &d->e, max_qd), 0);
	d->e.buffer = u->buffer.vaddr;
	d->e.buffer_size = u->buffer.size;
}

static struct io_point point(enum io_workload w, uint32_t bs, uint32_t qd, bool verify)
{
	return (struct io_point){ .workload = w,
				  .bs = bs,
				  .qd = qd,
				  .duration_ns = RUN_NS,
				  .window = BUFFER_BYTES,
				  .verify = verify,
				  .seed = 1 };
}

/* -1 when the whole file holds the disk pattern, else the first byte that does not. */
static int64_t file_mismatch(const struct file_disk *d)
{
	char *data = malloc(DISK_BYTES);
	int fd = open(d->path, O_RDONLY | O_CLOEXEC);
	int64_t at;

	assert_non_null(data);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, data, DISK_BYTES, 0), DISK_BYTES);
	close(fd);
	at = pattern_mismatch(data, 0, DISK_BYTES);
	free(data);
	return at;
}

static void corrupt_byte(const struct file_disk *d, off_t at)
{
	int fd = open(d->path, O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "?", 1, at), 1);
	close(fd);
}

/* Runs the point with stderr in a file; what it logged goes to logged. */
static int run_logged(struct file_disk *d, const struct io_point *p, struct io_result *r,
		      char *logged, size_t len)
{
	char path[PATH_MAX];
	int saved = dup(STDERR_FILENO), fd, rc;
	ssize_t n;

	fixture_path(path, "%s/stderr", d->root);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	fflush(stderr);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	rc = d->e.ops->run(&d->e, p, r);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fd, logged, len - 1, 0);
	assert_true(n >= 0);
	logged[n] = '\0';
	close(fd);
	return rc;
}

static void found_by_name(void **state)
{
	assert_ptr_equal(io_engine_find("uring"), &io_engine_uring);
	assert_string_equal(io_engine_uring.name, "uring");
	assert_ptr_equal(io_engine_find("vfio"), &io_engine_vfio);
	assert_ptr_equal(io_engine_find("uio"), &io_engine_uio);
	assert_null(io_engine_find("spdk"));
}

static void refuses_a_bar_buffer(void **state)
{
	struct io_engine e = { .ops = &io_engine_uring };
	struct io_target t = { .bdf = "0000:00:04.0",
			       .nsid = 1,
			       .buffer_size = 2 << 20,
			       .max_qd = 4,
			       .stop = &no_stop };

	assert_int_equal(buffer_parse("bar:0000:00:05.0/2", &t.buffer), 0);
	assert_int_equal(e.ops->open(&e, &t), -1);
	assert_null(e.buffer);
	assert_int_equal(e.ops->close(&e), 0);
	assert_null(e.priv);
}

static void refuses_a_device_off_the_nvme_driver(void **state)
{
	struct io_engine e = { .ops = &io_engine_uring };
	/* a bus number no machine has: no driver link at all */
	struct io_target t = { .bdf = "0000:ff:1f.7",
			       .nsid = 1,
			       .buffer_size = 2 << 20,
			       .max_qd = 4,
			       .writes = true,
			       .stop = &no_stop };

	assert_int_equal(e.ops->open(&e, &t), -1);
	assert_int_equal(e.block_size, 0);
	assert_null(e.buffer);
	assert_int_equal(e.ops->close(&e), 0);
	assert_int_equal(e.ops->close(&e), 0); /* twice: nothing left to free */
}

/* seqwrite covers the disk with the pattern of each block's own sectors (8 per 4 KiB block);
 * reads with verify find it, and find a byte changed behind the engine's back. */
static void writes_the_pattern_and_reads_check_it(void **state)
{
	struct file_disk *d = *state;
	struct io_point write = point(IO_SEQWRITE, 8192, 4, true);
	struct io_point read = point(IO_SEQREAD, 8192, 4, true);
	struct io_result r;

	open_file_disk(d, 4);
	assert_int_not_equal(file_mismatch(d), -1); /* zeros, before */
	assert_int_equal(d->e.ops->run(&d->e, &write, &r), 0);
	assert_int_equal(r.failed, 0);
	assert_int_equal(r.verify_errors, 0);
	assert_int_equal(r.bytes, r.completed * 8192);
	assert_true(r.bytes >= DISK_BYTES);
	assert_int_equal(file_mismatch(d), -1);

	assert_int_equal(d->e.ops->run(&d->e, &read, &r), 0);
	assert_true(r.completed >= DISK_BLOCKS / 2);
	assert_int_equal(r.failed, 0);
	assert_int_equal(r.verify_errors, 0);

	corrupt_byte(d, 77 * BLOCK + 1000);
	assert_int_equal(d->e.ops->run(&d->e, &read, &r), 0);
	assert_true(r.completed >= DISK_BLOCKS / 2);
	assert_true(r.verify_errors >= 1);
	assert_true(r.verify_errors < r.completed);
}

/* A ring for qd 65535: io_uring takes at most 32768 submission entries; clamped there, with
 * completion room for 65536 commands in flight. */
static void rings_for_the_deepest_queue(void **state)
{
	struct file_disk *d = *state;
	struct uring_engine *u;

	open_file_disk(d, 65535);
	u = d->e.priv;
	assert_int_equal(u->ring.sq.ring_entries, 32768);
	assert_int_equal(u->ring.cq.ring_entries, 65536);
	assert_int_equal(d->e.max_qd, 65536);
}

/* qd 8 on a ring of 4 submission entries (8 completion entries): the queue is submitted when
 * full, and every command still lands where it belongs. */
static void runs_a_queue_deeper_than_its_submission_ring(void **state)
{
	struct file_disk *d = *state;
	struct uring_engine *u;
	struct io_point write = point(IO_SEQWRITE, 4096, 8, false);
	struct io_result r;

	open_file_disk(d, 4);
	u = d->e.priv;
	assert_int_equal(u->ring.sq.ring_entries, 4);
	assert_int_equal(d->e.max_qd, 8);
	assert_int_equal(d->e.ops->run(&d->e, &write, &r), 0);
	assert_int_equal(r.failed, 0);
	assert_true(r.bytes >= DISK_BYTES);
	assert_int_equal(file_mismatch(d), -1);
}

/* Reads past the end of the file come back short (0 bytes), as a removed disk's do once its size
 * is 0; with the device still in sysfs they are failed commands and the run goes on. */
static void counts_a_failed_command_and_goes_on(void **state)
{
	struct file_disk *d = *state;
	struct io_point read = point(IO_RANDREAD, 8192, 4, false);
	struct io_result r;
	char logged[1024];

	open_file_disk(d, 4);
	d->e.blocks = 2 * DISK_BLOCKS;
	assert_int_equal(run_logged(d, &read, &r, logged, sizeof(logged)), 0);
	assert_string_equal(logged, "");
	assert_true(r.failed > 0);
	assert_true(r.completed > 0);
	assert_true(r.elapsed_ns >= RUN_NS);
}

/* The same failures once the device has left nvme: the run stops at the first, in one line. */
static void stops_when_the_device_went_away(void **state)
{
	struct file_disk *d = *state;
	struct io_point read = point(IO_RANDREAD, 8192, 4, false);
	struct io_result r;
	struct uring_engine *u;
	char logged[1024], link[PATH_MAX];
	uint64_t start = clock_ns(CLOCK_MONOTONIC);

	open_file_disk(d, 4);
	d->e.blocks = 2 * DISK_BLOCKS;
	fixture_path(link, "%s/sys/devices/pci0000:00/" BDF "/driver", d->root);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(run_logged(d, &read, &r, logged, sizeof(logged)), -1);
	assert_true(clock_ns(CLOCK_MONOTONIC) - start < RUN_NS / 2);
	assert_int_equal(r.failed, 1);
	/* each completion before the failed one queued its slot's next read: 3 of 4 in flight */
	assert_string_equal(logged,
			    "iommutrace: error: /dev/" DISK ": the device went away "
			    "during the run (" BDF " left the nvme driver: removed or unbound; the "
			    "last read returned 0 of 8192 bytes): stopping with 3 commands in "
			    "flight\n");
	/* the disk let go at once, and the engine knows */
	u = d->e.priv;
	assert_true(u->gone);
	assert_int_equal(u->fd, -1);
	assert_false(u->ring_ready);
	assert_int_equal(run_logged(d, &read, &r, logged, sizeof(logged)), -1);
	assert_string_equal(logged, "iommutrace: error: /dev/" DISK ": the device went away during "
				    "an earlier point\n");
}

/* What device_gone() makes of each state sysfs can be in. */
static void tells_how_the_device_went_away(void **state)
{
	struct file_disk *d = *state;
	struct uring_engine u = { .bdf = BDF, .disk = DISK, .sysfs_root = d->root };
	char why[160], path[PATH_MAX];

	assert_false(device_gone(&u, why, sizeof(why)));

	fixture_path(path, "%s/sys/block/" DISK "/dev", d->root);
	assert_int_equal(unlink(path), 0);
	fixture_path(path, "%s/sys/block/" DISK, d->root);
	assert_int_equal(rmdir(path), 0);
	assert_true(device_gone(&u, why, sizeof(why)));
	assert_string_equal(why, "the kernel deleted the disk of " BDF);

	fixture_path(path, "%s/sys/devices/pci0000:00/" BDF "/driver", d->root);
	assert_int_equal(unlink(path), 0);
	fixture_pci_link(d->root, BDF, "driver", "../../../bus/pci/drivers/vfio-pci");
	assert_true(device_gone(&u, why, sizeof(why)));
	assert_string_equal(why, BDF " is on vfio-pci now, not nvme");

	assert_int_equal(unlink(path), 0);
	assert_true(device_gone(&u, why, sizeof(why)));
	assert_string_equal(why, BDF " left the nvme driver: removed or unbound");

	fixture_path(path, "%s/sys/bus/pci/devices/" BDF, d->root);
	assert_int_equal(unlink(path), 0);
	assert_true(device_gone(&u, why, sizeof(why)));
	assert_string_equal(why, BDF " was removed from the PCI bus");
}

/* uring_open finds the namespace, its geometry and the controller's names under the target's
 * sysfs root, up to opening /dev/DISK, which the fixture has not. */
static void reads_the_namespace_under_the_targets_root(void **state)
{
	struct file_disk *d = *state;
	struct io_engine e = { .ops = &uring_engine_under_test };
	struct io_target t = { .bdf = BDF,
			       .nsid = 2,
			       .buffer_size = 2 << 20,
			       .max_qd = 4,
			       .stop = &no_stop,
			       .sysfs_root = d->root };
	const char *dev = "sys/devices/pci0000:00/" BDF;
	char rel[PATH_MAX];

	fixture_path(rel, "%s/nvme/nvme9/nvme9n1/nsid", dev);
	fixture_write(d->root, rel, "1\n");
	fixture_path(rel, "%s/nvme/nvme9/" DISK2 "/nsid", dev);
	fixture_write(d->root, rel, "2\n");
	fixture_write(d->root, "sys/block/" DISK2 "/queue/logical_block_size", "4096\n");
	fixture_write(d->root, "sys/block/" DISK2 "/size", "2048\n");
	fixture_write(d->root, "sys/block/" DISK2 "/queue/max_hw_sectors_kb", "512\n");
	fixture_write(d->root, "sys/class/nvme/nvme9/model", "QEMU NVMe Ctrl                  \n");
	fixture_write(d->root, "sys/class/nvme/nvme9/serial", "deadbeef            \n");
	assert_int_equal(e.ops->open(&e, &t), -1);
	assert_string_equal(((struct uring_engine *)e.priv)->disk, DISK2);
	assert_int_equal(e.block_size, 4096);
	assert_int_equal(e.blocks, 256);
	assert_int_equal(e.max_transfer, 512 * 1024);
	assert_string_equal(e.model, "QEMU NVMe Ctrl");
	assert_string_equal(e.serial, "deadbeef");
	assert_int_equal(e.ops->close(&e), 0);
}

static void names_what_a_failed_command_returned(void **state)
{
	char out[48];

	describe_result(-EIO, 4096, out, sizeof(out));
	assert_string_equal(out, "EIO");
	describe_result(-ENODEV, 4096, out, sizeof(out));
	assert_string_equal(out, "ENODEV");
	describe_result(0, 4096, out, sizeof(out));
	assert_string_equal(out, "0 of 4096 bytes");
	describe_result(512, 131072, out, sizeof(out));
	assert_string_equal(out, "512 of 131072 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_by_name),
		cmocka_unit_test(refuses_a_bar_buffer),
		cmocka_unit_test(refuses_a_device_off_the_nvme_driver),
		cmocka_unit_test_setup_teardown(writes_the_pattern_and_reads_check_it,
						file_disk_setup, file_disk_teardown),
		cmocka_unit_test_setup_teardown(rings_for_the_deepest_queue, file_disk_setup,
						file_disk_teardown),
		cmocka_unit_test_setup_teardown(runs_a_queue_deeper_than_its_submission_ring,
						file_disk_setup, file_disk_teardown),
		cmocka_unit_test_setup_teardown(counts_a_failed_command_and_goes_on,
						file_disk_setup, file_disk_teardown),
		cmocka_unit_test_setup_teardown(stops_when_the_device_went_away, file_disk_setup,
						file_disk_teardown),
		cmocka_unit_test_setup_teardown(tells_how_the_device_went_away, file_disk_setup,
						file_disk_teardown),
		cmocka_unit_test_setup_teardown(reads_the_namespace_under_the_targets_root,
						file_disk_setup, file_disk_teardown),
		cmocka_unit_test(names_what_a_failed_command_returned),
	};

	return cmocka_run_group_tests_name("uring engine", tests, NULL, NULL);
}
