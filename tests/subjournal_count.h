/* Test helper: counts what SQLite writes into statement journals. Between subjournal_count_begin()
 * and subjournal_count_end() the journals' spill threshold is 0, so that SQLite opens a file for
 * one as soon as a statement copies a page into it, and a shim of the default VFS
 * (tests/vfs_shim.h) counts those opens (subjournal_opens) and the writes into those files
 * (subjournal_writes). Begin before opening the database, end after closing it (SQLite is shut
 * down and started again around each: no connection may be open). Include after <cmocka.h>. */
#ifndef IOMMUTRACE_TEST_SUBJOURNAL_COUNT_H
#define IOMMUTRACE_TEST_SUBJOURNAL_COUNT_H

#include <sqlite3.h>
#include "tests/vfs_shim.h"

static const sqlite3_io_methods *subjournal_real_io;
static sqlite3_io_methods subjournal_counting_io;
static int subjournal_opens, subjournal_writes;

static inline int subjournal_counting_write(sqlite3_file *file, const void *buf, int n,
					    sqlite3_int64 offset)
{
	subjournal_writes++;
	return subjournal_real_io->xWrite(file, buf, n, offset);
}

/* A statement journal's methods, but for xWrite, which counts and calls the real one */
static inline void subjournal_counting_open(sqlite3_file *file, int flags)
{
	if (!(flags & SQLITE_OPEN_SUBJOURNAL))
		return;
	subjournal_opens++;
	vfs_shim_swap(file, &subjournal_real_io, &subjournal_counting_io)->xWrite =
		subjournal_counting_write;
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
	vfs_shim_begin(subjournal_counting_open);
	subjournal_opens = subjournal_writes = 0;
}

static inline void subjournal_count_end(void)
{
	vfs_shim_end();
	subjournal_spill(64 << 10); /* SQLite's default */
}

#endif
