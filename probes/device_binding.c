/* Binding to vfio-pci or uio_pci_generic through sysfs and restoring the original driver (see
 * device_binding.h). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/log.h"
#include "common/untrusted_text.h"
#include "probes/binding_journal.h"
#include "probes/device_binding.h"
#include "probes/device_uses.h"

#define VFIO_PCI "vfio-pci"

/* A failure: said in one line, or, with why, kept there (the first only) for the caller's line */
static void fail(char *why, size_t whylen, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!why)
		log_error("%s", line);
	else if (!why[0])
		snprintf(why, whylen, "%s", line);
}

static int write_sysfs(const char *path, const char *value, char *why, size_t whylen)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || write(fd, value, strlen(value)) < 0) {
		fail(why, whylen, "writing '%s' to %s: %s", value[0] == '\n' ? "\\n" : value, path,
		     strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ROOT/sys/bus/pci/devices/BDF followed by file ("" or "/driver", ...); -1 (said, as fail()
 * says) when the root makes it too long */
static int device_path(const struct device_binding *b, const char *file, char path[PATH_MAX],
		       char *why, size_t whylen)
{
	if (!sysfs_path(path, PATH_MAX, b->sysfs_root, "/sys/bus/pci/devices/%s%s", b->bdf, file))
		return 0;
	fail(why, whylen, "%s: its sysfs path under %s is too long", b->bdf, b->sysfs_root);
	return -1;
}

static void current_driver(const struct device_binding *b, char *out, size_t len)
{
	char path[PATH_MAX];

	if (device_path(b, "/driver", path, NULL, 0) || sysfs_link_name(path, out, len))
		out[0] = '\0';
}

/* "" when driver_override is not set (the kernel shows "(null)") */
static void current_override(const struct device_binding *b, char *out, size_t len)
{
	char path[PATH_MAX];

	if (device_path(b, "/driver_override", path, NULL, 0) || sysfs_read_text(path, out, len) ||
	    !strcmp(out, "(null)"))
		out[0] = '\0';
}

/* Asks the kernel to probe the device again: it takes the driver driver_override names, or, with
 * none, the one that matches it. */
static int drivers_probe(const struct device_binding *b, char *why, size_t whylen)
{
	char path[PATH_MAX];

	if (sysfs_path(path, sizeof(path), b->sysfs_root, "/sys/bus/pci/drivers_probe")) {
		fail(why, whylen, "%s: sysfs paths under %s are too long", b->bdf, b->sysfs_root);
		return -1;
	}
	return write_sysfs(path, b->bdf, why, whylen);
}

/* Where ready_ms is 0: past the kernel's nvme admin_timeout (60 s), after which a probe whose
 * controller never answered lets the device go */
#define READY_MS_DEFAULT 90000
#define READY_POLL_MS 50

/* The state of the device's NVMe controller ("live", "connecting", ...), "" when it has none */
static void nvme_state(const struct device_binding *b, char *out, size_t len)
{
	char path[PATH_MAX], state[PATH_MAX + 300];
	struct dirent *d;
	DIR *dir;

	out[0] = '\0';
	if (device_path(b, "/nvme", path, NULL, 0) || !(dir = opendir(path)))
		return;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "nvme", 4) || !sysfs_name_ok(d->d_name))
			continue;
		snprintf(state, sizeof(state), "%s/%.255s/state", path, d->d_name);
		if (sysfs_read_text(state, out, len) || !sysfs_name_ok(out))
			out[0] = '\0';
		break;
	}
	closedir(dir);
}

enum ready { READY, LET_GO, NOT_READY };

/* Waits for the original driver to have the device working: for nvme, its controller live; for
 * others, bound. LET_GO: the driver let it go (its probe failed). */
static enum ready driver_ready(const struct device_binding *b, char *why, size_t whylen)
{
	unsigned limit = b->ready_ms ? b->ready_ms : READY_MS_DEFAULT, waited = 0;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	char driver[SYSFS_NAME_MAX + 1], state[SYSFS_NAME_MAX + 1];

	if (strcmp(b->orig_driver, "nvme"))
		return READY;
	for (;;) {
		current_driver(b, driver, sizeof(driver));
		if (strcmp(driver, b->orig_driver)) {
			if (driver[0])
				fail(why, whylen, "it went to '%s' %.1f s after the probe", driver,
				     waited / 1000.0);
			else
				fail(why, whylen, "the %s driver let it go %.1f s after its probe",
				     b->orig_driver, waited / 1000.0);
			return LET_GO;
		}
		nvme_state(b, state, sizeof(state));
		if (!strcmp(state, "live"))
			return READY;
		if (waited >= limit) {
			fail(why, whylen, "its NVMe controller is %s%s%s %.1f s after the probe",
			     state[0] ? "'" : "", state[0] ? state : "missing", state[0] ? "'" : "",
			     waited / 1000.0);
			return NOT_READY;
		}
		usleep(READY_POLL_MS * 1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (unsigned)((now.tv_sec - start.tv_sec) * 1000 +
				    (now.tv_nsec - start.tv_nsec) / 1000000);
	}
}

/* After the reprobe: the driver has the device working, or, when its probe failed, does after one
 * more. *note says what happened to the first probe when a second one was needed. */
static int settle(const struct device_binding *b, char *note, size_t notelen, char *why,
		  size_t whylen)
{
	char first[256] = "", second[256] = "", driver[SYSFS_NAME_MAX + 1];
	enum ready r = driver_ready(b, first, sizeof(first));

	if (r == READY)
		return 0;
	if (r == NOT_READY) {
		fail(why, whylen, "%s", first);
		return -1;
	}
	if (drivers_probe(b, why, whylen))
		return -1;
	current_driver(b, driver, sizeof(driver));
	if (strcmp(driver, b->orig_driver)) {
		fail(why, whylen, "%s; probed again, it is on '%s'", first, driver);
		return -1;
	}
	if (driver_ready(b, second, sizeof(second)) != READY) {
		fail(why, whylen, "%s; probed again: %s", first, second);
		return -1;
	}
	snprintf(note, notelen, "%s; probed again, it is back (the kernel log says why)", first);
	return 0;
}

struct uses {
	const char *bdf;
	bool force;
	char first[PATH_MAX + 160];
	char who[160];
	int count;
};

/* Also into the kernel log, so that a forced take is on record where the machine's owner looks
 * (best effort: /dev/kmsg may be absent or read-only) */
static void log_to_kmsg(const char *line)
{
	char record[1024];
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC), n;

	if (fd < 0)
		return;
	/* one write per record (dprintf cannot: its stream seeks, which /dev/kmsg refuses) */
	n = snprintf(record, sizeof(record), "<4>iommutrace[%d]: %s\n", (int)getpid(), line);
	if (n >= (int)sizeof(record))
		n = sizeof(record) - 1;
	if (write(fd, record, (size_t)n) < 0)
		log_debug("cannot write to /dev/kmsg: %s", strerror(errno));
	close(fd);
}

static void on_use(const char *use, void *ctx)
{
	struct uses *u = ctx;
	char line[sizeof(u->first) + 256];

	if (!u->count++)
		snprintf(u->first, sizeof(u->first), "%s", use);
	if (!u->force)
		return;
	snprintf(line, sizeof(line), "%s: --force: %s takes it although %s", u->bdf, u->who, use);
	text_for_terminal(line); /* a mount point may hold a line break or an escape */
	log_warn("%s", line);
	log_to_kmsg(line);
}

/* Refused when its block devices are in use (device_uses.h), unless forced: then every use is
 * warned about, naming the user, here and in the kernel log. */
static bool device_in_use(const struct device_binding *b, bool force)
{
	struct uses u = { .bdf = b->bdf, .force = force };
	char sys[PATH_MAX], proc[PATH_MAX];

	if (sysfs_path(sys, sizeof(sys), b->sysfs_root, "/sys") ||
	    sysfs_path(proc, sizeof(proc), b->sysfs_root, "/proc")) {
		log_error("%s: sysfs paths under %s are too long", b->bdf, b->sysfs_root);
		return true;
	}
	device_uses_who(u.who, sizeof(u.who));
	device_uses_find(b->bdf, sys, proc, on_use, &u);
	if (!u.count || force)
		return false;
	if (u.count > 1)
		log_error("%s: %s, and %d more uses of its block devices; use --force to take it "
			  "anyway",
			  b->bdf, u.first, u.count - 1);
	else
		log_error("%s: %s; use --force to take it anyway", b->bdf, u.first);
	return true;
}

static int unbind(const struct device_binding *b, char *why, size_t whylen)
{
	char path[PATH_MAX];

	return device_path(b, "/driver/unbind", path, why, whylen) ||
			       write_sysfs(path, b->bdf, why, whylen) ?
		       -1 :
		       0;
}

/* An entry already there: a device that another iommutrace holds, or one that an iommutrace took
 * and never put back, whose original binding only that entry knows. */
static int check_journal(const char *bdf)
{
	struct binding_journal_entry e;
	char path[PATH_MAX];

	if (!binding_journal_read(bdf, &e)) {
		switch (binding_journal_owner(&e)) {
		case JOURNAL_OWNER_RUNNING:
			log_error("%s is in use by another iommutrace (pid %d), which bound it to %s",
				  bdf, (int)e.pid, e.bound_to);
			return -1;
		case JOURNAL_OWNER_GONE:
			log_error("%s was bound to %s by an iommutrace (pid %d) that ended without "
				  "putting it back: run 'iommutrace restore' first",
				  bdf, e.bound_to, (int)e.pid);
			return -1;
		case JOURNAL_OWNER_OTHER_BOOT:
			/* the binding it remembers ended with that boot; a new entry replaces it */
			log_debug("%s: ignoring its binding journal entry of an earlier boot", bdf);
			return 0;
		}
	}
	if (errno == ENOENT)
		return 0;
	binding_journal_path(bdf, path, sizeof(path));
	log_error("%s: its binding journal entry %s is %s: check the device's driver and "
		  "driver_override, then remove the entry",
		  bdf, path, errno == EINVAL ? "malformed" : strerror(errno));
	return -1;
}

/* Before the device's binding changes: without the entry `iommutrace restore` could not put it
 * back after a SIGKILL. */
static int journal_binding(const struct device_binding *b, const char *driver_name)
{
	struct binding_journal_entry e;
	char dir[PATH_MAX];

	if (!binding_journal_entry_init(&e, b->bdf)) {
		snprintf(e.orig_driver, sizeof(e.orig_driver), "%s", b->orig_driver);
		snprintf(e.orig_override, sizeof(e.orig_override), "%s", b->orig_override);
		snprintf(e.bound_to, sizeof(e.bound_to), "%s", driver_name);
		if (!binding_journal_write(&e))
			return 0;
	}
	binding_journal_dir(dir, sizeof(dir));
	log_error("%s: cannot write its binding journal entry in %s (%s), without which it is not "
		  "rebound: make that directory writable, or set IOMMUTRACE_RUN_DIR to one that is",
		  b->bdf, dir, binding_journal_strerror(errno));
	return -1;
}

int device_bind(struct device_binding *b, const char *root, const char *bdf,
		const char *driver_name, bool force)
{
	char path[PATH_MAX], driver[SYSFS_NAME_MAX + 1];
	struct stat st;

	memset(b, 0, sizeof(*b));
	b->sysfs_root = root;
	snprintf(b->bdf, sizeof(b->bdf), "%s", bdf);
	if (device_path(b, "", path, NULL, 0))
		return -1;
	if (stat(path, &st)) {
		log_error("no PCI device %s (%s: %s)", bdf, path, strerror(errno));
		return -1;
	}
	if (check_journal(bdf))
		return -1;
	current_driver(b, b->orig_driver, sizeof(b->orig_driver));
	if (!strcmp(b->orig_driver, driver_name))
		return 0;
	/* checked before the device leaves its driver: without them the new one cannot take it */
	if (device_path(b, "/iommu_group", path, NULL, 0))
		return -1;
	if (!strcmp(driver_name, VFIO_PCI) && lstat(path, &st)) {
		log_error("%s has no IOMMU group: the IOMMU is off or absent (boot with intel_iommu=on "
			  "or amd_iommu=on), so VFIO cannot map for it",
			  bdf);
		return -1;
	}
	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/drivers/%s", driver_name) ||
	    stat(path, &st)) {
		log_error("the %s driver is not loaded: modprobe %s", driver_name, driver_name);
		return -1;
	}
	if (device_in_use(b, force))
		return -1;
	current_override(b, b->orig_override, sizeof(b->orig_override));
	if (device_path(b, "/driver_override", path, NULL, 0) || journal_binding(b, driver_name))
		return -1;
	b->bound = true;
	if (write_sysfs(path, driver_name, NULL, 0) || (b->orig_driver[0] && unbind(b, NULL, 0)) ||
	    drivers_probe(b, NULL, 0))
		return -1;
	current_driver(b, driver, sizeof(driver));
	if (strcmp(driver, driver_name)) {
		log_error("%s did not bind to %s (is the %s module loaded?)", bdf, driver_name,
			  driver_name);
		return -1;
	}
	log_debug("%s: bound to %s (was %s)", bdf, driver_name,
		  b->orig_driver[0] ? b->orig_driver : "unbound");
	return 0;
}

int device_bind_vfio(struct device_binding *b, const char *root, const char *bdf, bool force)
{
	return device_bind(b, root, bdf, VFIO_PCI, force);
}

/* Nothing more to put back: the journal entry goes. */
static enum device_put_back forget(const char *bdf, bool dry_run, enum device_put_back result)
{
	if (!dry_run && binding_journal_remove(bdf))
		log_warn("%s: removing its binding journal entry: %s; 'iommutrace restore' drops it",
			 bdf, strerror(errno));
	return result;
}

enum device_put_back device_put_back(const struct device_binding *b, bool dry_run,
				     char was[SYSFS_NAME_MAX + 1], char *why, size_t whylen)
{
	char path[PATH_MAX], override[SYSFS_NAME_MAX + 1], driver[SYSFS_NAME_MAX + 1];
	char note[512] = "";
	bool off_driver;
	struct stat st;
	int rc = 0;

	was[0] = '\0';
	why[0] = '\0';
	if (device_path(b, "", path, why, whylen))
		return DEVICE_PUT_BACK_FAILED;
	if (stat(path, &st) && errno == ENOENT)
		return forget(b->bdf, dry_run, DEVICE_PUT_BACK_GONE);
	current_driver(b, was, SYSFS_NAME_MAX + 1);
	current_override(b, override, sizeof(override));
	/* e.g. a bind that stopped before the device left its driver */
	off_driver = strcmp(was, b->orig_driver) != 0;
	if (!off_driver && !strcmp(override, b->orig_override))
		return forget(b->bdf, dry_run, DEVICE_PUT_BACK_ALREADY);
	if (dry_run)
		return DEVICE_PUT_BACK_DONE;
	if (off_driver && was[0] && unbind(b, why, whylen))
		rc = -1;
	/* a lone newline clears driver_override */
	if (device_path(b, "/driver_override", path, why, whylen) ||
	    write_sysfs(path, b->orig_override[0] ? b->orig_override : "\n", why, whylen))
		rc = -1;
	if (off_driver && b->orig_driver[0] && !rc) {
		if (drivers_probe(b, why, whylen))
			rc = -1;
		current_driver(b, driver, sizeof(driver));
		if (!rc && strcmp(driver, b->orig_driver)) {
			fail(why, whylen, "it is on '%s' after the reprobe", driver);
			rc = -1;
		}
		if (!rc && settle(b, note, sizeof(note), why, whylen))
			rc = -1;
	}
	if (rc)
		return DEVICE_PUT_BACK_FAILED;
	snprintf(why, whylen, "%s", note);
	return forget(b->bdf, false, DEVICE_PUT_BACK_DONE);
}

int device_restore(struct device_binding *b)
{
	char was[SYSFS_NAME_MAX + 1], why[512];
	enum device_put_back result;

	if (!b->bound)
		return 0;
	b->bound = false;
	result = device_put_back(b, false, was, why, sizeof(why));
	if (result == DEVICE_PUT_BACK_GONE)
		log_info("%s was removed from the system while in use; no binding is left to restore",
			 b->bdf);
	else if (result == DEVICE_PUT_BACK_FAILED)
		log_error("%s: not put back on %s: %s; 'iommutrace restore' tries again", b->bdf,
			  b->orig_driver[0] ? b->orig_driver : "no driver", why);
	else if (why[0])
		log_warn("%s: put back on %s, but %s", b->bdf, b->orig_driver, why);
	else
		log_debug("%s: restored to %s", b->bdf,
			  b->orig_driver[0] ? b->orig_driver : "no driver");
	return result == DEVICE_PUT_BACK_FAILED ? -1 : 0;
}
