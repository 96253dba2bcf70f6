/* `iommutrace restore`: puts back on their original drivers the devices that a map or io took
 * and never returned (it was killed with SIGKILL, or crashed), from the binding journal
 * (probes/binding_journal.h), the way device_restore does on every other exit path. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/privilege.h"
#include "probes/binding_journal.h"
#include "probes/device_binding.h"
#include "cli/commands.h"
#include "cli/options.h"

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace restore [--dry-run] [-v]\n"
"\n"
"Puts back every device that an iommutrace map or io took from its driver and did not return\n"
"because it was killed with SIGKILL or crashed: on its original driver (or none) with its\n"
"original driver_override, as map and io do themselves on every other exit. Before they\n"
"change a device's binding they note the original in a journal, one file per device in\n"
"DIR/bindings/ (DIR: $IOMMUTRACE_RUN_DIR, or /run/iommutrace), and remove it once the device\n"
"is back. One line per entry: the device back, and the driver it was on; left alone, because\n"
"the iommutrace that bound it still runs; or its entry dropped, because the device is no longer\n"
"in the system, is already as it was, or the entry is of an earlier boot. A malformed entry is\n"
"named and left as it is.\n"
"\n"
"      --dry-run   say what it would do; change nothing\n"
"  -v, --verbose   debug messages (each entry's content)\n"
"  -h, --help      this text\n"
"\n"
"Needs CAP_DAC_OVERRIDE (root) to rebind devices; --dry-run needs none. exit status: 0 every\n"
"device back, or nothing to do; 1 a device not put back, or a malformed entry; 2 bad usage;\n"
"4 missing privilege\n");
}
/* clang-format on */

struct restore_run {
	bool dry_run;
	unsigned entries, failed;
};

/* One result line; flushed so that it keeps its place among the error lines on stderr. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* "on nvme", or "without a driver" */
static const char *on(const char *driver, char *buf, size_t len)
{
	if (!driver[0])
		return "without a driver";
	snprintf(buf, len, "on %s", driver);
	return buf;
}

static void put_back(struct restore_run *r, const struct binding_journal_entry *e)
{
	struct device_binding b = { .bound = true };
	char was[SYSFS_NAME_MAX + 1], to_on[SYSFS_NAME_MAX + 4], was_on[SYSFS_NAME_MAX + 4],
		why[512];
	const char *to = on(e->orig_driver, to_on, sizeof(to_on));

	snprintf(b.bdf, sizeof(b.bdf), "%s", e->bdf);
	snprintf(b.orig_driver, sizeof(b.orig_driver), "%s", e->orig_driver);
	snprintf(b.orig_override, sizeof(b.orig_override), "%s", e->orig_override);
	switch (device_put_back(&b, r->dry_run, was, why, sizeof(why))) {
	case DEVICE_PUT_BACK_DONE:
		if (!strcmp(was, e->orig_driver))
			say("%s: %s already; %s\n", e->bdf, to,
			    r->dry_run ? "would put back its driver_override" :
					 "driver_override put back");
		else
			say("%s: %s %s (%s %s)\n", e->bdf, r->dry_run ? "would go back" : "back",
			    to, r->dry_run ? "now" : "was", on(was, was_on, sizeof(was_on)));
		if (why[0])
			log_warn("%s: %s", e->bdf, why);
		break;
	case DEVICE_PUT_BACK_ALREADY:
		say("%s: already %s, as it was; %s\n", e->bdf, to,
		    r->dry_run ? "would drop its entry" : "entry dropped");
		break;
	case DEVICE_PUT_BACK_GONE:
		say("%s: no longer in the system; %s\n", e->bdf,
		    r->dry_run ? "would drop its entry" : "entry dropped");
		break;
	case DEVICE_PUT_BACK_FAILED:
		log_error("%s: not put back %s: %s; its entry stays for another try", e->bdf, to,
			  why);
		r->failed++;
		break;
	}
}

static void restore_entry(const char *name, void *ctx)
{
	struct restore_run *r = ctx;
	struct binding_journal_entry e;
	char path[PATH_MAX];

	r->entries++;
	if (binding_journal_read(name, &e)) {
		binding_journal_path(name, path, sizeof(path));
		log_error("%s: %s; left as it is", path,
			  errno == EINVAL ? "not a binding journal entry (malformed)" :
					    strerror(errno));
		r->failed++;
		return;
	}
	log_debug("%s: driver '%s', driver_override '%s', bound to %s by pid %d (start %llu), "
		  "boot %s",
		  e.bdf, e.orig_driver, e.orig_override, e.bound_to, (int)e.pid, e.pid_start_ticks,
		  e.boot_id);
	switch (binding_journal_owner(&e)) {
	case JOURNAL_OWNER_OTHER_BOOT:
		if (!r->dry_run && binding_journal_remove(e.bdf)) {
			log_error("%s: removing its entry of an earlier boot: %s", e.bdf,
				  strerror(errno));
			r->failed++;
			return;
		}
		say("%s: entry of an earlier boot; %s\n", e.bdf,
		    r->dry_run ? "would drop it" : "dropped");
		return;
	case JOURNAL_OWNER_RUNNING:
		say("%s: left alone: the iommutrace that bound it to %s (pid %d) still runs\n",
		    e.bdf, e.bound_to, (int)e.pid);
		return;
	case JOURNAL_OWNER_GONE:
		put_back(r, &e);
		return;
	}
}

static void count_entry(const char *name, void *ctx)
{
	(*(int *)ctx)++;
}

static int on_option(void *ctx, int opt, const char *arg)
{
	struct restore_run *r = ctx;

	if (opt == 'n')
		r->dry_run = true;
	return 0;
}

int cmd_restore(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "restore",
		.short_opts = "",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_NO_OPERANDS,
	};
	struct restore_run r = { 0 };
	char dir[PATH_MAX];
	int status, entries = 0;

	if (!cli_parse(&cmd, argc, argv, &r, &status))
		return status;
	if (binding_journal_dir(dir, sizeof(dir))) {
		log_error("the binding journal's path is too long: shorten IOMMUTRACE_RUN_DIR");
		return IT_EXIT_FAILURE;
	}
	if (binding_journal_for_each(count_entry, &entries)) {
		log_error("reading the binding journal %s: %s; fix its owner and mode, or set"
			  " IOMMUTRACE_RUN_DIR to one that is",
			  dir, binding_journal_strerror(errno));
		return IT_EXIT_FAILURE;
	}
	if (entries && !r.dry_run &&
	    privilege_require("restore", PRIV_DAC_OVERRIDE,
			      "it writes the devices' driver bindings in sysfs, which are root's"))
		return IT_EXIT_PRIVILEGE;
	if (binding_journal_for_each(restore_entry, &r)) {
		log_error("reading the binding journal %s: %s; fix its owner and mode, or set"
			  " IOMMUTRACE_RUN_DIR to one that is",
			  dir, binding_journal_strerror(errno));
		return IT_EXIT_FAILURE;
	}
	if (!r.entries)
		say("nothing to restore: no entries in %s\n", dir);
	return r.failed ? IT_EXIT_FAILURE : IT_EXIT_OK;
}
