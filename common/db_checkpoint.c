/* Checkpoints, and the database file's pages dropped from the page cache behind them: by the
 * writing connection after its commits, or by a checkpointer thread. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/db_checkpoint.h"

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
		    SQLITE_OK &&
	    fd >= 0)
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

/* log2 of page_size; SQLite's pages are powers of two from 512 to 65536 bytes */
static uint32_t page_shift_of(long page_size)
{
	uint32_t shift = 9;

	while (shift < 16 && (1l << shift) < page_size)
		shift++;
	return shift;
}

/* `bytes` of pages of 2^page_shift bytes, at least one page and at most PAGES_MAX */
static uint32_t pages_in(size_t bytes, uint32_t page_shift)
{
	uint64_t pages = bytes >> page_shift;

	return pages < 1 ? 1 : pages > PAGES_MAX ? PAGES_MAX : (uint32_t)pages;
}

int db_checkpoint_install(sqlite3 *db, size_t bytes, long page_size)
{
	uint32_t page_shift = page_shift_of(page_size);
	int fd = open_descriptor(sqlite3_db_filename(db, "main"));

	sqlite3_wal_hook(db, after_commit, hook_arg(fd, pages_in(bytes, page_shift), page_shift));
	return fd >= 0;
}

/* The writer restarts the -wal file itself at RESTART_AT x pages, whatever is left to copy at
 * WAIT_AT x pages; below RESTART_AT the checkpointer copies, every `pages`. */
#define RESTART_AT 4
#define WAIT_AT 8

struct db_checkpointer {
	sqlite3 *writer; /* the writing connection, whose hook this is */
	sqlite3 *own; /* the checkpointer's connection to the same file */
	const char *path; /* the file's name, as SQLite keeps it for writer */
	size_t bytes;
	long page_size;
	uint32_t pages, page_shift; /* a checkpoint's pages; log2 of the page size */
	int fd; /* a descriptor of the file, for the drop; -1: none */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	/* under lock */
	bool busy; /* a checkpoint asked for and not yet done */
	bool stop;
	uint32_t asked; /* the -wal file's frames when the checkpointer was last asked */
	uint32_t copied; /* of them, those the checkpoints have copied */
	uint32_t seen; /* frames after the last commit: fewer now, the file restarted */
	uint32_t restarts; /* the -wal file's restarts seen, so that a checkpoint that
					 * ends after one does not count its frames into the new file */
};

/* The drop behind a checkpoint that left `copied` frames of the -wal file copied, `before` of
 * them by the checkpoints before it. */
static void after_checkpoint(struct db_checkpointer *c, uint32_t before, int copied)
{
	if (c->fd >= 0 && copied > 0 && (uint32_t)copied > before)
		drop_written(c->fd, c->path, (uint32_t)copied - before, c->page_shift);
}

static void *checkpointer_run(void *arg)
{
	struct db_checkpointer *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		uint32_t before, restarts;
		int log = 0, copied = 0, rc;

		while (!c->busy && !c->stop)
			pthread_cond_wait(&c->wake, &c->lock);
		if (c->stop)
			break;
		before = c->copied;
		restarts = c->restarts;
		pthread_mutex_unlock(&c->lock);
		/* a failure (a full disk, a reader holding old pages) is not the writer's: the
		 * next checkpoint goes on with it, and the writer's own at WAIT_AT bounds the file */
		rc = sqlite3_wal_checkpoint_v2(c->own, "main", SQLITE_CHECKPOINT_PASSIVE, &log,
					       &copied);
		/* SQLite syncs the database file only after a checkpoint that copied the whole -wal
		 * file, which one that runs beside the writer rarely does: the pages it copied are
		 * then written back here, not by the writer's next checkpoint that syncs (and cannot
		 * be dropped before) */
		if (rc == SQLITE_OK && copied > 0 && (uint32_t)copied > before && c->fd >= 0 &&
		    fdatasync(c->fd))
			rc = SQLITE_IOERR_FSYNC;
		if (rc == SQLITE_OK)
			after_checkpoint(c, before, copied);
		pthread_mutex_lock(&c->lock);
		if (rc == SQLITE_OK && restarts == c->restarts && copied > 0)
			c->copied = (uint32_t)copied;
		c->busy = false;
		pthread_cond_broadcast(&c->idle);
	}
	c->busy = false;
	pthread_cond_broadcast(&c->idle);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* SQLite calls it on the writer's thread after each commit, with the frames now in the -wal
 * file: asks the checkpointer, or restarts the file (db_checkpoint.h). */
static int after_commit_background(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct db_checkpointer *c = arg;
	uint32_t n = frames < 0 ? 0 : (uint32_t)frames, left, before;
	bool here = false;
	int copied = 0;

	pthread_mutex_lock(&c->lock);
	if (n < c->seen) { /* restarted: the frames are counted from the file's start again */
		c->asked = c->copied = 0;
		c->restarts++;
	}
	c->seen = n;
	left = n - (c->copied < n ? c->copied : n);
	if (n >= WAIT_AT * (uint64_t)c->pages) {
		while (c->busy)
			pthread_cond_wait(&c->idle, &c->lock);
		here = true;
	} else if (!c->busy && n >= RESTART_AT * (uint64_t)c->pages && left <= c->pages / 4) {
		/* left 0: nothing to copy, the next transaction restarts the file as it is */
		here = left > 0;
	} else if (!c->busy && (n - (c->asked < n ? c->asked : n) >= c->pages ||
				(n >= RESTART_AT * (uint64_t)c->pages && left > 0))) {
		c->busy = true;
		c->asked = n;
		pthread_cond_signal(&c->wake);
	}
	before = c->copied;
	pthread_mutex_unlock(&c->lock);
	if (here && sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, &copied) ==
			    SQLITE_OK) {
		after_checkpoint(c, before, copied);
		pthread_mutex_lock(&c->lock);
		c->copied = copied > 0 ? (uint32_t)copied : c->copied;
		pthread_mutex_unlock(&c->lock);
	}
	return SQLITE_OK;
}

struct db_checkpointer *db_checkpointer_start(sqlite3 *db, size_t bytes, char *err, size_t errlen)
{
	struct db_checkpointer *c = calloc(1, sizeof(*c));
	const char *path = sqlite3_db_filename(db, "main");
	sqlite3_stmt *st = NULL;
	sigset_t all, old;
	bool wal = false;
	int rc;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->writer = db;
	c->path = path;
	c->bytes = bytes;
	c->fd = -1;
	if (!path || !*path) {
		snprintf(err, errlen, "the database has no file");
		goto fail;
	}
	/* NOMUTEX: this connection is the checkpointer thread's alone */
	if (sqlite3_open_v2(path, &c->own, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "opening a second connection to %s: %s", path,
			 c->own ? sqlite3_errmsg(c->own) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(c->own, 5000);
	/* synchronous NORMAL as the writer's: a checkpoint syncs the -wal file before it copies
	 * and the database file after (OFF would not); the read opens the -wal file, which a
	 * checkpoint of a connection that has not read yet would not find */
	if (sqlite3_exec(c->own, "PRAGMA synchronous = NORMAL; SELECT 1 FROM sqlite_schema LIMIT 1",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(c->own, "PRAGMA journal_mode", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "reading %s through a second connection: %s", path,
			 sqlite3_errmsg(c->own));
		goto fail;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		wal = !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	st = NULL;
	if (!wal) {
		snprintf(err, errlen, "%s is not in WAL mode", path);
		goto fail;
	}
	c->page_size = 4096; /* SQLite's default, should the writer not say */
	if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0)
		c->page_size = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	c->page_shift = page_shift_of(c->page_size);
	c->pages = pages_in(bytes, c->page_shift);
	c->fd = open_descriptor(path);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	pthread_cond_init(&c->idle, NULL);
	/* signals stay the writer's: the thread blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, checkpointer_run, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "starting the checkpointer thread: %s", strerror(rc));
		pthread_cond_destroy(&c->idle);
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		goto fail;
	}
	sqlite3_wal_hook(db, after_commit_background, c);
	return c;
fail:
	sqlite3_close(c->own);
	free(c);
	return NULL;
}

void db_checkpointer_stop(struct db_checkpointer *c)
{
	if (!c)
		return;
	db_checkpoint_install(c->writer, c->bytes, c->page_size);
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->idle);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	/* its descriptor of the file stays open inside SQLite while the writer holds locks on it
	 * (SQLite's own rule for two connections of one process) */
	sqlite3_close(c->own);
	free(c);
}
