/* Reading the small text files, symlinks and directories of sysfs and procfs under a chosen root
 * directory ("/" on the live system, a fixture tree in tests), defensively: every read is
 * bounded, every value is checked, nothing is trusted to be well formed.
 *
 * Functions return 0 on success and -1 with errno set on failure: ENOENT when the file or link
 * is missing, EFBIG when a file is larger than the caller's buffer, EINVAL when its content is
 * malformed, ENAMETOOLONG when a path does not fit, or the errno of the failed system call.
 * They log nothing; the caller knows whether a missing or malformed file matters, and says so
 * with sysfs_report(). sysfs_for_each_entry() is the exception: it lists a whole inventory
 * directory and reports on it itself. */
#ifndef IOMMUTRACE_SYSFS_FILE_H
#define IOMMUTRACE_SYSFS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest sysfs identifier we keep (driver, unit and group type names are far shorter). */
#define SYSFS_NAME_MAX 64

/**
 * sysfs_path() - Join a directory (the root, or one under it) and the printf-style relative path.
 * @root: "/", "" or NULL gives "/sys/..."; "/tmp/x" or "/tmp/x/" gives "/tmp/x/sys/..."
 * @fmt: must start with '/'
 *
 * A path that does not fit leaves @out "" (ENAMETOOLONG).
 */
int sysfs_path(char *out, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * sysfs_read_text() - Read the whole file into @buf as a string with trailing newlines removed.
 *
 * Fails with EFBIG when it does not fit in @len - 1 bytes and with EINVAL when it contains a NUL
 * byte.
 */
int sysfs_read_text(const char *path, char *buf, size_t len);

/**
 * sysfs_read_hex() - Read a file holding one hexadecimal number, with or without 0x (sysfs prints
 * both).
 */
int sysfs_read_hex(const char *path, uint64_t *out);

/**
 * sysfs_read_long() - Read a file holding one decimal integer in [@min, @max].
 */
int sysfs_read_long(const char *path, long min, long max, long *out);

/**
 * sysfs_link_name() - Write the last component of the symlink's target into @out: "nvme" for
 * driver -> ../../../bus/pci/drivers/nvme.
 * @len: at least 2
 *
 * EINVAL when @path is not a symlink or the component is not a sysfs_name_ok() name.
 */
int sysfs_link_name(const char *path, char *out, size_t len);

/**
 * sysfs_parse_hex() - Parse hex digits (a value that fits in 64 bits) with an optional 0x prefix,
 * nothing else: no sign, no spaces.
 */
int sysfs_parse_hex(const char *s, uint64_t *out);

/**
 * sysfs_parse_long() - Parse an optional '-' and decimal digits, nothing else, in [@min, @max].
 */
int sysfs_parse_long(const char *s, long min, long max, long *out);

/**
 * sysfs_name_ok() - Whether @s looks like a kernel object, driver or domain type name.
 *
 * Return: true for a non-empty name of at most SYSFS_NAME_MAX printable ASCII characters without
 * '/' that is not "." or "..".
 */
bool sysfs_name_ok(const char *s);

/**
 * sysfs_for_each_entry() - Call @fn for each entry of the directory ROOT/@rel whose name does not
 * start with '.', in readdir order.
 * @rel: as for sysfs_path(), without format directives
 * @what: a plural such as "PCI devices", for messages
 * @fn: validates the name itself; @dir is the directory's path, for building entry paths and
 *      for messages. Returns 0 to go on, or -1 when out of memory, which stops the walk.
 *
 * A directory that cannot be opened holds nothing: a debug line "no <what>" when it is missing,
 * otherwise a warning.
 *
 * Return: 0, or -1 with errno ENOMEM when @fn ran out of memory (logged as "reading <what>: out
 * of memory").
 */
int sysfs_for_each_entry(const char *root, const char *rel, const char *what,
			 int (*fn)(const char *dir, const char *name, void *ctx), void *ctx);

/**
 * sysfs_report() - Log why @path could not be used, for a value then left unknown.
 * @err: the errno; ENOENT (an optional file) gives a debug line, others a warning ("malformed",
 *       "too large", ...)
 */
void sysfs_report(const char *path, int err);

#endif
