/* The uring engine: the NVMe stays on the kernel nvme driver and is read (or written) through
 * io_uring with O_DIRECT from its namespace's block device, out of a registered buffer (pinned
 * once), so the kernel's DMA API maps and unmaps the data pages in the IOMMU for every command:
 * the comparison path to vfio, and the one that makes per-I/O map/unmap churn. A device removed or
 * unbound under a run ends it with one error line. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include "common/log.h"
#include "common/untrusted_text.h"
#include "common/clock.h"
#include "common/sysfs_file.h"
#include "io/engine.h"
#include "io/pattern.h"
#include "io/workload.h"

/* io_uring refuses to register a buffer (one iovec) above 1 GiB */
#define MAX_REGISTERED_BYTES (1ull << 30)

struct uring_engine {
	struct io_uring ring;
	bool ring_ready;
	int fd;
	char bdf[SYSFS_NAME_MAX + 1];
	char disk[SYSFS_NAME_MAX + 1]; /* the namespace's block device, nvmeXnY */
	const char *sysfs_root; /* sysfs's root: NULL, the live system */
	bool gone; /* the device went away during a run */
	uint32_t block_size;
	struct buffer buffer;
	volatile sig_atomic_t *stop;
};

/* The first (and only) nvmeN under the PCI device's nvme/ directory. */
static int take_first_name(const char *dir, const char *name, void *ctx)
{
	char *out = ctx;

	if (!out[0] && sysfs_name_ok(name))
		snprintf(out, SYSFS_NAME_MAX + 1, "%s", name);
	return 0;
}

struct ns_search {
	uint32_t nsid;
	char disk[SYSFS_NAME_MAX + 1];
};

/* A namespace directory of the controller whose nsid is the one asked for. Without native
 * multipath it is the disk nvmeXnY itself; with it the controller holds the hidden path device
 * nvmeScCnH, which has no /dev node, and reads go through the subsystem's head disk nvmeSnH. */
static int match_namespace(const char *dir, const char *name, void *ctx)
{
	struct ns_search *s = ctx;
	unsigned subsys, ctrl, head;
	char path[PATH_MAX];
	long nsid;

	if (s->disk[0] || strncmp(name, "nvme", 4) || !sysfs_name_ok(name) ||
	    snprintf(path, sizeof(path), "%s/%s/nsid", dir, name) >= (int)sizeof(path) ||
	    sysfs_read_long(path, 1, UINT32_MAX, &nsid) || (uint32_t)nsid != s->nsid)
		return 0;
	if (sscanf(name, "nvme%uc%un%u", &subsys, &ctrl, &head) == 3)
		snprintf(s->disk, sizeof(s->disk), "nvme%un%u", subsys, head);
	else
		snprintf(s->disk, sizeof(s->disk), "%s", name);
	return 0;
}

/* The block device of namespace nsid of the controller at bdf, which must be on the nvme driver,
 * under ROOT/sys; ctrl gets the controller's name (nvmeN). */
static int find_namespace(const char *root, const char *bdf, uint32_t nsid,
			  char ctrl[SYSFS_NAME_MAX + 1], char disk[SYSFS_NAME_MAX + 1])
{
	struct ns_search s = { .nsid = nsid };
	char path[PATH_MAX], driver[SYSFS_NAME_MAX + 1];

	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/driver", bdf) ||
	    sysfs_link_name(path, driver, sizeof(driver)) || strcmp(driver, "nvme")) {
		log_error("%s is not bound to the nvme driver; the uring engine reads through it",
			  bdf);
		return -1;
	}
	ctrl[0] = '\0';
	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/nvme", bdf) ||
	    sysfs_for_each_entry(NULL, path, "NVMe controllers", take_first_name, ctrl))
		return -1;
	if (!ctrl[0]) {
		log_error("%s: the nvme driver has no controller for it (%s is empty)", bdf, path);
		return -1;
	}
	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/nvme/%s", bdf, ctrl) ||
	    sysfs_for_each_entry(NULL, path, "NVMe namespaces", match_namespace, &s))
		return -1;
	if (!s.disk[0]) {
		log_error("%s (%s) has no namespace %u", bdf, ctrl, nsid);
		return -1;
	}
	memcpy(disk, s.disk, sizeof(s.disk));
	return 0;
}

/* A decimal value from ROOT/sys/block/DISK/ATTR. */
static int read_disk_attr(const char *root, const char *disk, const char *attr, long min, long max,
			  long *out)
{
	char path[PATH_MAX];

	if (sysfs_path(path, sizeof(path), root, "/sys/block/%s/%s", disk, attr) ||
	    sysfs_read_long(path, min, max, out)) {
		log_error("%s: cannot read it (%s): %s", disk, path, strerror(errno));
		return -1;
	}
	return 0;
}

static int read_geometry(struct io_engine *e, const char *root, const char *disk)
{
	long block_size, sectors, max_kb;

	if (read_disk_attr(root, disk, "queue/logical_block_size", 512, 1 << 16, &block_size) ||
	    read_disk_attr(root, disk, "size", 0, LONG_MAX, &sectors) ||
	    read_disk_attr(root, disk, "queue/max_hw_sectors_kb", 1, LONG_MAX, &max_kb))
		return -1;
	e->block_size = (uint32_t)block_size;
	e->blocks = (uint64_t)sectors * 512 / (uint64_t)block_size;
	e->max_transfer = max_kb >= UINT32_MAX / 1024 ? UINT32_MAX : (uint32_t)(max_kb * 1024);
	return 0;
}

/* ROOT/sys/class/nvme/CTRL/ATTR, without the trailing padding; left empty when unreadable. */
static void read_ctrl_string(const char *root, const char *ctrl, const char *attr, char *out,
			     size_t len)
{
	char path[PATH_MAX], text[128];
	size_t n;

	if (sysfs_path(path, sizeof(path), root, "/sys/class/nvme/%s/%s", ctrl, attr)) {
		sysfs_report(root, errno);
		return;
	}
	if (sysfs_read_text(path, text, sizeof(text))) {
		sysfs_report(path, errno);
		return;
	}
	for (n = strlen(text); n && text[n - 1] == ' '; n--)
		;
	if (n >= len)
		n = len - 1;
	memcpy(out, text, n);
	out[n] = '\0';
	text_for_terminal(out); /* the device's words, printed and stored */
}

/* Opens /dev/DISK, for writing too when some point writes, and checks it is the block device
 * sysfs names (major:minor). A write run claims the disk (O_EXCL on a block device), which fails
 * while a file system is mounted on it or md, dm or swap holds it. */
static int open_disk(struct uring_engine *u, bool writes)
{
	char path[PATH_MAX], devnum[32], want[32];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/%s", u->disk);
	u->fd = open(path, (writes ? O_RDWR | O_EXCL : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	if (u->fd < 0 && writes && errno == EBUSY) {
		log_error("%s is in use (mounted, or held by md, dm or swap): not writing to it",
			  path);
		return -1;
	}
	if (u->fd < 0) {
		log_error("cannot open %s%s: %s", path, writes ? " for writing" : "",
			  strerror(errno));
		return -1;
	}
	if (sysfs_path(path, sizeof(path), u->sysfs_root, "/sys/block/%s/dev", u->disk) ||
	    sysfs_read_text(path, devnum, sizeof(devnum))) {
		log_error("%s: cannot read %s: %s", u->disk, path, strerror(errno));
		return -1;
	}
	if (fstat(u->fd, &st) || !S_ISBLK(st.st_mode)) {
		log_error("/dev/%s is not a block device", u->disk);
		return -1;
	}
	snprintf(want, sizeof(want), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (strcmp(want, devnum)) {
		log_error("/dev/%s is device %s, not %s's %s", u->disk, want, u->disk, devnum);
		return -1;
	}
	return 0;
}

/* The ring, with the buffer registered so that pinning is once, not per command. io_uring fails
 * a ring of more than 32768 submission entries (IORING_MAX_ENTRIES) with EINVAL; CLAMP caps it
 * there with twice as many completion entries, and queue_cmd() submits a full submission queue
 * before it fills it again, so what bounds the commands in flight is the completion ring. */
static int setup_ring(struct uring_engine *u, struct io_engine *e, uint32_t max_qd)
{
	struct iovec iov = { .iov_base = u->buffer.vaddr, .iov_len = u->buffer.size };
	int rc = io_uring_queue_init(max_qd ? max_qd : 1, &u->ring, IORING_SETUP_CLAMP);

	if (rc) {
		log_error("/dev/%s: cannot set up an io_uring for %u commands in flight: %s",
			  u->disk, max_qd, strerror(-rc));
		return -1;
	}
	u->ring_ready = true;
	rc = io_uring_register_buffers(&u->ring, &iov, 1);
	if (rc) {
		log_error("io_uring_register_buffers(%llu bytes at %p): %s",
			  (unsigned long long)iov.iov_len, iov.iov_base, strerror(-rc));
		return -1;
	}
	e->max_qd = u->ring.cq.ring_entries;
	return 0;
}

static int uring_open(struct io_engine *e, const struct io_target *t)
{
	struct uring_engine *u = calloc(1, sizeof(*u));
	char ctrl[SYSFS_NAME_MAX + 1];

	if (!u) {
		log_error("out of memory");
		return -1;
	}
	u->buffer = (struct buffer)BUFFER_INIT;
	u->fd = -1;
	u->stop = t->stop;
	u->sysfs_root = t->sysfs_root;
	snprintf(u->bdf, sizeof(u->bdf), "%s", t->bdf);
	e->priv = u;
	if (t->buffer.kind == BUF_BAR) {
		log_error(
			"a bar: buffer cannot take O_DIRECT reads: the kernel cannot pin the pages "
			"of a BAR mmap (VM_PFNMAP); use --engine vfio");
		return -1;
	}
	if (t->buffer_size > MAX_REGISTERED_BYTES) {
		log_error("a buffer of %llu bytes is above the 1 GiB io_uring registers at once: give "
			  "a smaller --size",
			  (unsigned long long)t->buffer_size);
		return -1;
	}
	if (find_namespace(u->sysfs_root, t->bdf, t->nsid, ctrl, u->disk) ||
	    read_geometry(e, u->sysfs_root, u->disk))
		return -1;
	u->block_size = e->block_size;
	read_ctrl_string(u->sysfs_root, ctrl, "model", e->model, sizeof(e->model));
	read_ctrl_string(u->sysfs_root, ctrl, "serial", e->serial, sizeof(e->serial));
	log_debug("%s: namespace %u is /dev/%s", t->bdf, t->nsid, u->disk);
	if (open_disk(u, t->writes) ||
	    buffer_create(&u->buffer, &t->buffer, t->buffer_size, t->buffer_offset, -1) ||
	    setup_ring(u, e, t->max_qd))
		return -1;
	e->buffer = u->buffer.vaddr;
	e->buffer_size = u->buffer.size;
	return 0;
}

struct inflight {
	uint64_t start_ns, lba, offset;
};

/* Whether the namespace went away under the run, and then in why what became of it. A failed
 * command alone cannot tell: when the NVMe is removed or unbound, 6.1 and 7.2 complete the reads
 * in flight and every later one with 0 bytes (the disk's size is 0 by then; one got EIO on 6.1)
 * and writes with ENOSPC, which a bad block or a namespace resized under the run could return
 * too. By the time they do, the device has left the nvme driver: its driver link goes before the
 * driver's remove runs (seen in the testbed on both). */
static bool device_gone(const struct uring_engine *u, char *why, size_t len)
{
	char path[PATH_MAX], driver[SYSFS_NAME_MAX + 1];
	struct stat st;

	if (!sysfs_path(path, sizeof(path), u->sysfs_root, "/sys/bus/pci/devices/%s", u->bdf) &&
	    stat(path, &st) && errno == ENOENT) {
		snprintf(why, len, "%s was removed from the PCI bus", u->bdf);
		return true;
	}
	if (!sysfs_path(path, sizeof(path), u->sysfs_root, "/sys/bus/pci/devices/%s/driver",
			u->bdf)) {
		if (sysfs_link_name(path, driver, sizeof(driver)) && errno == ENOENT) {
			snprintf(why, len, "%s left the nvme driver: removed or unbound", u->bdf);
			return true;
		}
		if (!sysfs_link_name(path, driver, sizeof(driver)) && strcmp(driver, "nvme")) {
			snprintf(why, len, "%s is on %s now, not nvme", u->bdf, driver);
			return true;
		}
	}
	if (!sysfs_path(path, sizeof(path), u->sysfs_root, "/sys/block/%s", u->disk) &&
	    stat(path, &st) && errno == ENOENT) {
		snprintf(why, len, "the kernel deleted the disk of %s", u->bdf);
		return true;
	}
	return false;
}

/* What a failed completion returned: "EIO", or "0 of 4096 bytes" for a short one. */
static void describe_result(int res, uint32_t bs, char *out, size_t len)
{
	const char *name = res < 0 ? strerrorname_np(-res) : NULL;

	if (res < 0 && name)
		snprintf(out, len, "%s", name);
	else if (res < 0)
		snprintf(out, len, "error %d", -res);
	else
		snprintf(out, len, "%d of %u bytes", res, bs);
}

static const char *op_name(const struct io_point *p)
{
	return io_workload_writes(p->workload) ? "write" : "read";
}

/* Queues the slot's next command: a read, or a write of the pattern of its blocks (written into
 * the slot's piece of the buffer, which no other command in flight uses); io_uring_submit_and_wait
 * hands it to the kernel. A full submission queue (qd above its entries: 32768 at most) is
 * submitted first. */
static int queue_cmd(struct uring_engine *u, const struct io_point *p, struct io_cursor *c,
		     struct inflight *f, uint32_t slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	char *data;
	int rc;

	if (!sqe) {
		rc = io_uring_submit(&u->ring);
		if (rc < 0) {
			log_error("/dev/%s: io_uring_submit: %s", u->disk, strerror(-rc));
			return -1;
		}
		sqe = io_uring_get_sqe(&u->ring);
		if (!sqe) {
			log_error("/dev/%s: the io_uring submission queue stays full", u->disk);
			return -1;
		}
	}
	f[slot].lba = io_cursor_next_lba(c);
	f[slot].offset = io_cursor_next_offset(c, slot);
	data = (char *)u->buffer.vaddr + f[slot].offset;
	if (io_workload_writes(p->workload)) {
		pattern_fill(data, f[slot].lba * (u->block_size / PATTERN_SECTOR), p->bs);
		io_uring_prep_write_fixed(sqe, u->fd, data, p->bs, f[slot].lba * u->block_size, 0);
	} else {
		io_uring_prep_read_fixed(sqe, u->fd, data, p->bs, f[slot].lba * u->block_size, 0);
	}
	io_uring_sqe_set_data64(sqe, slot);
	f[slot].start_ns = clock_ns(CLOCK_MONOTONIC);
	return 0;
}

/* Closes the ring and the disk; what is still in flight finishes in the kernel, which keeps the
 * registered pages pinned until it has, so the buffer may go right after. */
static void release_disk(struct uring_engine *u)
{
	if (u->ring_ready)
		io_uring_queue_exit(&u->ring);
	u->ring_ready = false;
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
}

/* One completion: counted, timed, checked (reads with verify); a failed one ends the run when the
 * device went away. The slot is then free. */
static int account(struct uring_engine *u, const struct io_point *p, const struct inflight *f,
		   uint64_t slot, int res, uint64_t now, uint32_t in_flight, struct io_result *r)
{
	char why[160], result[48];

	if (slot >= p->qd) {
		log_error("/dev/%s: a completion for command %llu, which was never submitted",
			  u->disk, (unsigned long long)slot);
		return -1;
	}
	if (res != (int)p->bs) {
		r->failed++;
		describe_result(res, p->bs, result, sizeof(result));
		if (device_gone(u, why, sizeof(why))) {
			log_error("/dev/%s: the device went away during the run (%s; the last %s "
				  "returned %s): stopping with %u commands in flight",
				  u->disk, why, op_name(p), result, in_flight);
			u->gone = true;
			return -1;
		}
		log_debug("/dev/%s: %s of %u bytes at block %llu: %s", u->disk, op_name(p), p->bs,
			  (unsigned long long)f[slot].lba, result);
		return 0;
	}
	r->completed++;
	r->bytes += p->bs;
	lat_hist_add(&r->hist, now - f[slot].start_ns);
	if (p->verify && !io_workload_writes(p->workload) &&
	    pattern_mismatch((char *)u->buffer.vaddr + f[slot].offset,
			     f[slot].lba * (u->block_size / PATTERN_SECTOR), p->bs) >= 0)
		r->verify_errors++;
	return 0;
}

/* Takes the completions there are and queues the next command of each slot until end. */
static int reap(struct uring_engine *u, const struct io_point *p, struct io_cursor *c,
		struct inflight *f, uint64_t end, uint32_t *in_flight, struct io_result *r)
{
	struct io_uring_cqe *cqe;
	unsigned head, reaped = 0;
	int ret = 0;

	io_uring_for_each_cqe(&u->ring, head, cqe)
	{
		uint64_t slot = io_uring_cqe_get_data64(cqe), now = clock_ns(CLOCK_MONOTONIC);

		reaped++;
		(*in_flight)--;
		ret = account(u, p, f, slot, cqe->res, now, *in_flight, r);
		if (ret)
			break;
		if (now < end && !*u->stop) {
			ret = queue_cmd(u, p, c, f, (uint32_t)slot);
			if (ret)
				break;
			(*in_flight)++;
		}
	}
	io_uring_cq_advance(&u->ring, reaped);
	return ret;
}

static int uring_run(struct io_engine *e, const struct io_point *p, struct io_result *r)
{
	struct uring_engine *u = e->priv;
	struct inflight *f = calloc(p->qd, sizeof(*f));
	struct io_cursor c = { 0 };
	uint64_t start, end;
	uint32_t in_flight = 0;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (u->gone) {
		log_error("/dev/%s: the device went away during an earlier point", u->disk);
		goto cleanup;
	}
	if (!f || io_cursor_init(&c, p, u->block_size, e->blocks))
		goto cleanup;
	start = clock_ns(CLOCK_MONOTONIC);
	end = start + p->duration_ns;
	for (uint32_t s = 0; s < p->qd; s++, in_flight++)
		if (queue_cmd(u, p, &c, f, s))
			goto cleanup;
	while (in_flight) {
		/* submits what was queued and sleeps until a completion; a signal only wakes it */
		int rc = io_uring_submit_and_wait(&u->ring, 1);

		if (rc < 0 && rc != -EINTR) {
			log_error("/dev/%s: io_uring_submit_and_wait: %s", u->disk, strerror(-rc));
			goto cleanup;
		}
		if (reap(u, p, &c, f, end, &in_flight, r))
			goto cleanup;
	}
	r->elapsed_ns = clock_ns(CLOCK_MONOTONIC) - start;
	ret = 0;
cleanup:
	/* a disk that went away is let go at once, not at uring_close(): on 6.1 its last close
	 * frees the nvme driver's doorbell buffer (QEMU's NVMe has one) through the PCI device,
	 * which oopses in __free_pages once the device's removal is through (seen in the testbed) */
	if (u->gone)
		release_disk(u);
	io_cursor_free(&c);
	free(f);
	return ret;
}

static int uring_close(struct io_engine *e)
{
	struct uring_engine *u = e->priv;

	if (!u)
		return 0;
	release_disk(u);
	buffer_destroy(&u->buffer);
	free(u);
	e->priv = NULL;
	return 0;
}

const struct io_engine_ops io_engine_uring = {
	.name = "uring",
	.open = uring_open,
	.run = uring_run,
	.close = uring_close,
};
