/* Test helper: a shim of SQLite's default VFS, for tests that count what SQLite does to its files.
 * Between vfs_shim_begin(on_open) and vfs_shim_end() the shim is the default VFS: it opens each
 * file through the real one, then calls on_open(file, flags), which may point file->pMethods at
 * a copy of the real methods with some of them replaced (vfs_shim_swap). Begin and end with no
 * connection open. Include after <cmocka.h>. */
#ifndef IOMMUTRACE_TEST_VFS_SHIM_H
#define IOMMUTRACE_TEST_VFS_SHIM_H

#include <sqlite3.h>

typedef void (*vfs_shim_open_fn)(sqlite3_file *file, int flags);

/* static: a test that fails between begin and end leaves the shim registered */
static sqlite3_vfs *vfs_shim_real, vfs_shim_vfs;
static vfs_shim_open_fn vfs_shim_on_open;

static inline int vfs_shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
				int *out_flags)
{
	int rc = vfs_shim_real->xOpen(vfs_shim_real, name, file, flags, out_flags);

	(void)vfs;
	if (rc == SQLITE_OK && file->pMethods)
		vfs_shim_on_open(file, flags);
	return rc;
}

static inline void vfs_shim_begin(vfs_shim_open_fn on_open)
{
	/* one a failed test left registered goes first: it must not shim itself */
	sqlite3_vfs_unregister(&vfs_shim_vfs);
	vfs_shim_real = sqlite3_vfs_find(NULL);
	vfs_shim_vfs = *vfs_shim_real;
	vfs_shim_vfs.zName = "iommutrace-test-vfs-shim";
	vfs_shim_vfs.xOpen = vfs_shim_open;
	vfs_shim_on_open = on_open;
	assert_int_equal(sqlite3_vfs_register(&vfs_shim_vfs, 1), SQLITE_OK);
}

static inline void vfs_shim_end(void)
{
	assert_int_equal(sqlite3_vfs_unregister(&vfs_shim_vfs), SQLITE_OK);
}

/* Points file at *shim: a copy of its real methods, kept in *real, that the caller then changes.
 * One shim serves every file of a kind (the unix VFS gives all main databases one set of
 * methods, all -wal files another). */
static inline sqlite3_io_methods *vfs_shim_swap(sqlite3_file *file, const sqlite3_io_methods **real,
						sqlite3_io_methods *shim)
{
	*real = file->pMethods;
	*shim = *file->pMethods;
	file->pMethods = shim;
	return shim;
}

#endif
