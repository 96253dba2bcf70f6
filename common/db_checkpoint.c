/* Checkpoints, and the database file's pages dropped from the page cache behind them. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "db_checkpoint.h"

/* The hook's argument packs what it needs, so that nothing is allocated that the connection's
 * close would have to free: the pages that make a checkpoint (bits 0-23), log2 of the page size
 * (bits 24-31), and the descriptor plus one (bits 32-63; 0: none). */
#define PAGES_BITS 24
#define PAGES_MAX ((1u << PAGES_BITS) - 1)

static void *hook_arg(int fd, uint32_t pages, uint32_t page_shift)
{
	return (void *)(uintptr_t)((uint64_t)(uint32_t)(fd + 1) << 32 | page_shift << PAGES_BITS |
				   pages);
}

/* A checkpoint of `frames` pages has copied them into the database file and synced it (in
 * WAL mode SQLite syncs the file at each checkpoint unless synchronous is OFF): the pages are
 * clean and can go at once. Those the file grew by are its last `frames` pages (our writers
 * append rows); a few b-tree pages it rewrote in place lie before, and stay, being the ones
 * written again and again. The range reaches back over twice that, for pages that were still
 * being written back at the checkpoint before (synchronous OFF). The rest of the file, read again
 * at the session's end (its indexes are made from it), stays too. */
static void drop_written(int fd, const char *path, uint64_t frames, uint32_t page_shift)
{
	uint64_t span = 2 * (frames << page_shift);
	struct stat st, named;

	/* still the database's: the descriptor found may have been another connection's to the
	 * same file, since closed and its number taken by some other file */
	if (fstat(fd, &st) || !path || stat(path, &named) || st.st_dev != named.st_dev ||
	    st.st_ino != named.st_ino || st.st_size <= 0)
		return;
	posix_fadvise(fd, (uint64_t)st.st_size > span ? st.st_size - span : 0, 0,
		      POSIX_FADV_DONTNEED);
}

/* SQLite calls it after each commit with the pages now in the -wal file. */
static int after_commit(void *arg, sqlite3 *db, const char *name, int frames)
{
	uint64_t v = (uintptr_t)arg;
	uint32_t pages = v & PAGES_MAX, page_shift = (v >> PAGES_BITS) & 0xff;
	int fd = (int)(v >> 32) - 1;

	if (frames < 0 || (uint32_t)frames < pages)
		return SQLITE_OK;
	/* as SQLite's own: a checkpoint stopped short (a reader holds old pages) is not an error of
	 * the commit; the next commit goes on with it */
	if (sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) ==
	    SQLITE_OK && fd >= 0)
		drop_written(fd, sqlite3_db_filename(db, name), (uint32_t)frames, page_shift);
	return SQLITE_OK;
}

/* The descriptor through which this process has path's file open, or -1. */
static int open_descriptor(const char *path)
{
	struct stat want, st;
	struct dirent *d;
	DIR *dir;
	int fd = -1;

	if (!path || !*path || stat(path, &want))
		return -1;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while (fd < 0 && (d = readdir(dir))) {
		char *end;
		long n = strtol(d->d_name, &end, 10);

		if (*end || end == d->d_name || n == dirfd(dir) || n > INT32_MAX)
			continue;
		if (!fstat((int)n, &st) && S_ISREG(st.st_mode) && st.st_dev == want.st_dev &&
		    st.st_ino == want.st_ino)
			fd = (int)n;
	}
	closedir(dir);
	return fd;
}

int db_checkpoint_install(sqlite3 *db, size_t bytes, long page_size)
{
	uint32_t page_shift = 9;	/* SQLite's pages: powers of two from 512 to 65536 bytes */
	uint64_t pages;
	int fd;

	while (page_shift < 16 && (1l << page_shift) < page_size)
		page_shift++;
	pages = bytes >> page_shift;
	pages = pages < 1 ? 1 : pages > PAGES_MAX ? PAGES_MAX : pages;
	fd = open_descriptor(sqlite3_db_filename(db, "main"));
	sqlite3_wal_hook(db, after_commit, hook_arg(fd, (uint32_t)pages, page_shift));
	return fd >= 0;
}
