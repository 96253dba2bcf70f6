/* The journal of original driver bindings: before device_bind takes a device from its driver it
 * writes one small file per device (DIR/bindings/BDF, DIR = $IOMMUTRACE_RUN_DIR or
 * /run/iommutrace), so that `iommutrace restore` can put the device back after the process that
 * took it died without doing so (SIGKILL, a crash). Functions log nothing; they return -1 with
 * errno set (ENOENT: no entry, EINVAL: a malformed entry or value). */
#ifndef IOMMUTRACE_BINDING_JOURNAL_H
#define IOMMUTRACE_BINDING_JOURNAL_H

#include <stdbool.h>
#include <sys/types.h>
#include "common/sysfs_file.h"

#define BINDING_JOURNAL_BOOT_ID_LEN 36 /* /proc/sys/kernel/random/boot_id, a UUID */

struct binding_journal_entry {
	char bdf[13];
	char orig_driver[SYSFS_NAME_MAX + 1]; /* "" when no driver was bound */
	char orig_override[SYSFS_NAME_MAX + 1]; /* "" when driver_override was not set */
	char bound_to[SYSFS_NAME_MAX + 1]; /* the driver it is being bound to */
	pid_t pid; /* the iommutrace process that bound it */
	/* its start time (/proc/PID/stat field 22, clock ticks after boot): a pid reused by
	 * another process has another start time */
	unsigned long long pid_start_ticks;
	char boot_id[BINDING_JOURNAL_BOOT_ID_LEN + 1];
};

/* Whose an entry is, for `restore` and for device_bind, which finds one already there. */
enum binding_journal_owner {
	JOURNAL_OWNER_RUNNING, /* the process that bound the device still runs */
	JOURNAL_OWNER_GONE, /* it ended without putting the device back */
	JOURNAL_OWNER_OTHER_BOOT, /* written before the last boot: means nothing now */
};

/**
 * binding_journal_dir() - The journal's directory of entries: $IOMMUTRACE_RUN_DIR/bindings, or
 * /run/iommutrace/bindings.
 */
int binding_journal_dir(char *out, size_t len);
/**
 * binding_journal_path() - The path of the device's entry.
 */
int binding_journal_path(const char *bdf, char *out, size_t len);

/**
 * binding_journal_entry_init() - Fill bdf, pid, pid_start_ticks and boot_id for this process;
 * the caller adds the drivers.
 */
int binding_journal_entry_init(struct binding_journal_entry *e, const char *bdf);
/**
 * binding_journal_write() - Write the entry atomically (a temporary file in the same directory,
 * fsync, rename), replacing one of the same device; create the directories it needs.
 *
 * A failed write leaves no temporary file.
 *
 * Return: 0, or -1 with errno; EINVAL: a value the reader would refuse; EPERM: a journal folder
 * not of this user or root, or that others can write (or a link).
 */
int binding_journal_write(const struct binding_journal_entry *e);
/**
 * binding_journal_read() - Read and check the device's entry: every field present, in order, and
 * well formed, and the BDF the one named.
 */
int binding_journal_read(const char *bdf, struct binding_journal_entry *e);
/**
 * binding_journal_remove() - Remove the device's entry; no entry is not an error.
 */
int binding_journal_remove(const char *bdf);
/**
 * binding_journal_for_each() - Call @fn with each entry's file name (a BDF, or whatever else lies
 * there: the reader judges), sorted.
 *
 * Names starting with '.' (temporary files) are skipped. No directory: no entries.
 *
 * Return: -1 when the directory cannot be read or is not trusted (EPERM, as for
 * binding_journal_write()), else 0.
 */
int binding_journal_for_each(void (*fn)(const char *name, void *ctx), void *ctx);
/**
 * binding_journal_strerror() - strerror(), with EPERM said as the journal means it.
 */
const char *binding_journal_strerror(int err);

/**
 * binding_journal_boot_id() - This boot's id (/proc/sys/kernel/random/boot_id).
 */
int binding_journal_boot_id(char out[BINDING_JOURNAL_BOOT_ID_LEN + 1]);
/**
 * binding_journal_pid_start() - The start time of process @pid (/proc/PID/stat field 22).
 *
 * Return: 0, or -1 (ENOENT when it does not run).
 */
int binding_journal_pid_start(pid_t pid, unsigned long long *out);
/**
 * binding_journal_owner() - Whether the entry's process still runs (same pid, same start time)
 * and whether it is of this boot.
 *
 * A boot id that cannot be read counts as this boot: nothing is dropped on a guess.
 */
enum binding_journal_owner binding_journal_owner(const struct binding_journal_entry *e);

#endif
