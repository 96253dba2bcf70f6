/* Output paths. What iommutrace writes goes only to a name that is absent, or a regular file it
 * was told to replace: never through a symbolic link, into a device, FIFO, socket or directory,
 * to a name SQLite treats specially (empty, ":memory:", "file:" URIs), nor beside a database's
 * helper files (-wal, -shm, -journal) that are not regular files. Each function that refuses
 * writes one line for the user into err (what and what to do) and returns -1. */
#ifndef IOMMUTRACE_OUT_PATH_H
#define IOMMUTRACE_OUT_PATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/**
 * out_path_check_db() - Check a database path before any work.
 *
 * Checks its name, its length (with the helper files' and the import's private folder's
 * suffixes), the file (absent, empty, or with @replace a regular file; without @replace an
 * existing one names @replace_option), its helper files, and that its folder is writable.
 *
 * Return: 0, or -1 with one line in @err.
 */
int out_path_check_db(const char *path, bool replace, const char *replace_option, char *err,
		      size_t errlen);
/**
 * out_path_check_file() - Check a file that will be replaced by one written elsewhere (a figure):
 * absent or regular.
 *
 * Return: 0, or -1 with one line in @err.
 */
int out_path_check_file(const char *path, char *err, size_t errlen);
/**
 * out_path_claim() - Create @path as an empty file, exclusively and without following a link.
 *
 * Of two processes aimed at one new name, one gets it; the other is told it was created
 * meanwhile. An empty regular file already there is taken as it is.
 *
 * Return: 0, or -1 with one line in @err.
 */
int out_path_claim(const char *path, char *err, size_t errlen);
/* A folder only this user can enter, beside a database path (in its folder, named
 * "NAME.partial-XXXXXX"), in which a database is built before it is moved to the path. */
struct private_dir {
	char dir[PATH_MAX];
	char files[4][PATH_MAX + 16]; /* DIR/db, then its -wal, -shm and -journal files */
};

int private_dir_make(struct private_dir *pd, const char *path, char *err, size_t errlen);
/**
 * private_dir_remove() - Remove the files, then the folder.
 *
 * Context: async-signal-safe.
 * Return: 0, or -1 with errno.
 */
int private_dir_remove(const struct private_dir *pd);
/**
 * out_path_install() - Move the finished file @from to @path.
 * @replace: over a regular file (its helper files removed first, so that none is replayed into
 *           the new one); without, only where @path is still absent or an empty regular
 *           file (else: created meanwhile by another process, nothing replaced)
 *
 * Return: 0, or -1 with one line in @err.
 */
int out_path_install(const char *from, const char *path, bool replace, const char *replace_option,
		     char *err, size_t errlen);

#endif
