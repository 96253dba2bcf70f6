/* Test helper: counts what SQLite writes into statement journals. Between subjournal_count_begin()
 * and subjournal_count_end() the journals' spill threshold is 0, so that SQLite opens a file for
 * one as soon as a statement copies a page into it, and a shim of the default VFS counts those
 * opens (subjournal_opens) and the writes into those files (subjournal_writes). Begin before
 * opening the database, end after closing it (SQLite is shut down and started again around
 * each: no connection may be open). Include after <cmocka.h>. */
#ifndef IOMMUTRACE_TEST_SUBJOURNAL_COUNT_H
#define IOMMUTRACE_TEST_SUBJOURNAL_COUNT_H

#include <sqlite3.h>

/* static: a test that fails between begin and end leaves the shim registered */
static sqlite3_vfs *subjournal_real_vfs, subjournal_counting_vfs;
static const sqlite3_io_methods *subjournal_real_io;
static sqlite3_io_methods subjournal_counting_io;
static int subjournal_opens, subjournal_writes;

static inline int subjournal_counting_write(sqlite3_file *file, const void *buf, int n,
					    sqlite3_int64 offset)
{
	subjournal_writes++;
	return subjournal_real_io->xWrite(file, buf, n, offset);
}

/* The real file's own methods, but for xWrite, which counts and calls the real one */
static inline int subjournal_counting_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file,
					   int flags, int *out_flags)
{
	int rc = subjournal_real_vfs->xOpen(subjournal_real_vfs, name, file, flags, out_flags);

	(void)vfs;
	if (rc == SQLITE_OK && (flags & SQLITE_OPEN_SUBJOURNAL) && file->pMethods) {
		subjournal_opens++;
		subjournal_real_io = file->pMethods;
		subjournal_counting_io = *file->pMethods;
		subjournal_counting_io.xWrite = subjournal_counting_write;
		file->pMethods = &subjournal_counting_io;
	}
	return rc;
}

static inline void subjournal_spill(int bytes)
{
	assert_int_equal(sqlite3_shutdown(), SQLITE_OK);
	assert_int_equal(sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes), SQLITE_OK);
	assert_int_equal(sqlite3_initialize(), SQLITE_OK);
}

static inline void subjournal_count_begin(void)
{
	subjournal_spill(0);
	subjournal_real_vfs = sqlite3_vfs_find(NULL);
	subjournal_counting_vfs = *subjournal_real_vfs;
	subjournal_counting_vfs.zName = "iommutrace-test-subjournal-count";
	subjournal_counting_vfs.xOpen = subjournal_counting_open;
	assert_int_equal(sqlite3_vfs_register(&subjournal_counting_vfs, 1), SQLITE_OK);
	subjournal_opens = subjournal_writes = 0;
}

static inline void subjournal_count_end(void)
{
	assert_int_equal(sqlite3_vfs_unregister(&subjournal_counting_vfs), SQLITE_OK);
	subjournal_spill(64 << 10);	/* SQLite's default */
}

#endif
