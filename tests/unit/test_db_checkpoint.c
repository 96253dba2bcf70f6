/* Checkpoints of a writing connection (common/db_checkpoint.h): when they come, that the pages
 * each wrote into the database file leave the kernel's page cache while the rest stays, and the
 * checkpointer thread: the writer's syncs it takes, the -wal file's bound, the rows intact. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include "tests/vfs_shim.h"
#include "common/db.h"
#include "common/db_checkpoint.h"
#include "common/schema.h"

#define TMPFS_MAGIC 0x01021994
#define BLOB (512 << 10)

struct fixture {
	char dir[64], path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	/* /var/tmp: on disk on Debian, where /tmp may be a tmpfs (no page cache to drop) */
	snprintf(f->dir, sizeof(f->dir), "/var/tmp/iommutrace-ckpt-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/x.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char err[256];

	itdb_remove(f->path, err, sizeof(err));
	rmdir(f->dir);
	free(f);
	return 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* One transaction adding a row of BLOB bytes */
static void commit_blob(sqlite3 *db)
{
	assert_int_equal(itdb_exec(db, "INSERT INTO t(b) VALUES (zeroblob(524288))", "test"), 0);
}

/* Commits blobs until the database file grows (in WAL mode only a checkpoint writes it); returns
 * the bytes committed by then, or 0 when 64 MiB did not make it grow. */
static size_t bytes_until_checkpoint(sqlite3 *db, const char *path)
{
	off_t before = file_size(path);

	for (size_t bytes = BLOB; bytes <= 64 << 20; bytes += BLOB) {
		commit_blob(db);
		if (file_size(path) != before)
			return bytes;
	}
	return 0;
}

/* A new file has pages of 16 KiB, an older file keeps its own (4 KiB here), and either way a
 * checkpoint comes once 32 MiB of pages are in the -wal file. */
static void checkpoints_come_every_32_mib_of_pages(void **state)
{
	struct fixture *f = *state;
	char err[256];
	size_t bytes;
	sqlite3 *db;

	db = itdb_open(f->path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, "PRAGMA page_size"), "16384;");
	assert_int_equal(itdb_exec(db, "CREATE TABLE t(b BLOB)", "test"), 0);
	bytes = bytes_until_checkpoint(db, f->path);
	/* 32 MiB of pages: the blobs (a 512 KiB blob is 33 pages of 16 KiB, its overflow pages
	 * holding 16380 bytes each) and the schema's pages */
	assert_in_range(bytes, 28 << 20, 32 << 20);
	/* made again with 4 KiB pages, as an older iommutrace made it */
	assert_int_equal(itdb_exec(db,
				   "PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096;"
				   " VACUUM",
				   "test"),
			 0);
	assert_int_equal(itdb_close(db), 0);
	db = itdb_open(f->path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, "PRAGMA page_size"), "4096;");
	bytes = bytes_until_checkpoint(db, f->path);
	assert_in_range(bytes, 28 << 20, 32 << 20);
	assert_int_equal(itdb_close(db), 0);
}

/* Counts the syncs of database and -wal files (through tests/vfs_shim.h), those made on the
 * thread that began counting (the writer's) apart from the others. */
/* [0] the database files', [1] the -wal files' (the unix VFS gives them other methods) */
static const sqlite3_io_methods *real_io[2];
static sqlite3_io_methods counting_io[2];
static pthread_t writer_thread;
static int writer_syncs, other_syncs;

static int count_sync(void)
{
	__atomic_add_fetch(pthread_equal(pthread_self(), writer_thread) ? &writer_syncs :
									  &other_syncs,
			   1, __ATOMIC_RELAXED);
	return 0;
}

static int counting_sync_db(sqlite3_file *file, int flags)
{
	return count_sync() ?: real_io[0]->xSync(file, flags);
}

static int counting_sync_wal(sqlite3_file *file, int flags)
{
	return count_sync() ?: real_io[1]->xSync(file, flags);
}

static void counting_open(sqlite3_file *file, int flags)
{
	int wal = !!(flags & SQLITE_OPEN_WAL);

	if (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL))
		vfs_shim_swap(file, &real_io[wal], &counting_io[wal])->xSync =
			wal ? counting_sync_wal : counting_sync_db;
}

static void sync_count_begin(void)
{
	vfs_shim_begin(counting_open);
	writer_thread = pthread_self();
	writer_syncs = other_syncs = 0;
}

static void sync_count_end(void)
{
	vfs_shim_end();
}

static off_t wal_size(const char *path)
{
	char wal[128];
	struct stat st;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	return stat(wal, &st) ? 0 : st.st_size;
}

/* 32 MiB committed in blobs, checkpoints of 1 MiB: the writer checkpoints every MiB itself (two
 * syncs each) without a checkpointer, at most once per 4 MiB with one (its restarts), the
 * checkpointer's thread the rest; the -wal file stays below 8 MiB plus a commit; every row is
 * in the file after, which is sound. */
static int commit_32_mib(const char *path, int background, off_t *wal_max)
{
	struct db_checkpointer *c = NULL;
	char err[256];
	sqlite3 *db;

	sync_count_begin();
	db = itdb_open(path, ITDB_CREATE_FORCE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	if (background) {
		c = db_checkpointer_start(db, 1 << 20, err, sizeof(err));
		assert_non_null(c);
	} else {
		assert_true(db_checkpoint_install(db, 1 << 20, 16384));
	}
	assert_int_equal(itdb_exec(db, "CREATE TABLE t(b BLOB)", "test"), 0);
	*wal_max = 0;
	for (int i = 0; i < 64; i++) {
		commit_blob(db);
		if (wal_size(path) > *wal_max)
			*wal_max = wal_size(path);
	}
	db_checkpointer_stop(c);
	assert_int_equal(itdb_close(db), 0);
	sync_count_end();
	db = itdb_open(path, ITDB_READ, NULL, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, "SELECT count(*), sum(length(b)) FROM t"), "64|33554432;");
	assert_string_equal(sql_rows(db, "PRAGMA integrity_check"), "ok;");
	sqlite3_close(db);
	return writer_syncs;
}

static void a_checkpointer_takes_the_writers_syncs(void **state)
{
	struct fixture *f = *state;
	off_t wal_max;
	int syncs;

	/* the control: the writer's own checkpoints, two syncs per MiB */
	syncs = commit_32_mib(f->path, 0, &wal_max);
	assert_true(syncs >= 50);
	assert_true(wal_max <= (2 << 20));
	syncs = commit_32_mib(f->path, 1, &wal_max);
	assert_true(syncs <= 2 * 8 + 2); /* + itdb_close's own checkpoint */
	assert_true(other_syncs >= 2);
	assert_true(wal_max <= (9 << 20));
}

/* Once stopped, the writer checkpoints itself every `bytes` again */
static void after_the_checkpointer_the_writer_checkpoints_itself(void **state)
{
	struct fixture *f = *state;
	char err[256];
	sqlite3 *db;
	size_t bytes;

	db = itdb_open(f->path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	db_checkpointer_stop(db_checkpointer_start(db, 4 << 20, err, sizeof(err)));
	assert_int_equal(itdb_exec(db, "CREATE TABLE t(b BLOB)", "test"), 0);
	bytes = bytes_until_checkpoint(db, f->path);
	assert_in_range(bytes, 3 << 20, 4 << 20);
	assert_int_equal(itdb_close(db), 0);
}

/* How many of the file's pages in [from, to) are in the page cache, and how many there are */
static void resident(int fd, off_t size, off_t from, off_t to, size_t *in, size_t *all)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	void *map;

	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	vec = calloc((size + page - 1) / page, 1);
	assert_non_null(vec);
	assert_int_equal(mincore(map, size, vec), 0);
	*in = *all = 0;
	for (off_t p = from / page; p < (to + page - 1) / page; p++) {
		*in += vec[p] & 1;
		(*all)++;
	}
	free(vec);
	munmap(map, size);
}

enum checkpoints { SQLITE_OWN, DROPPING, DROPPING_IN_BACKGROUND };

/* Writes 8 MiB of rows checkpointed every 1 MiB, reads the file's first 2 MiB back, writes 4 MiB
 * more, and says how much of the head and of the last MiB the page cache has. Checkpoints by
 * db_checkpoint_install, or a checkpointer (stopped before the look: the checkpoint it is in
 * ends first), or SQLite's own (the control: then both stay). The test's own descriptor is
 * closed only after the connection (closing it would drop SQLite's locks). */
static void write_and_look(const char *path, enum checkpoints how, size_t head[2], size_t tail[2])
{
	char err[256], *buf = malloc(2 << 20);
	sqlite3 *db = itdb_open(path, ITDB_CREATE_FORCE, &it_recorded_schema, err, sizeof(err));
	struct db_checkpointer *c = NULL;
	off_t size;
	int fd;

	assert_non_null(db);
	assert_non_null(buf);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	if (how == DROPPING)
		assert_true(db_checkpoint_install(db, 1 << 20, 16384));
	else if (how == DROPPING_IN_BACKGROUND)
		assert_non_null(c = db_checkpointer_start(db, 1 << 20, err, sizeof(err)));
	else
		assert_int_equal(sqlite3_wal_autocheckpoint(db, (1 << 20) / 16384), SQLITE_OK);
	assert_int_equal(itdb_exec(db, "CREATE TABLE t(b BLOB)", "test"), 0);
	for (int i = 0; i < 16; i++)
		commit_blob(db);
	assert_int_equal(pread(fd, buf, 2 << 20, 0), 2 << 20);
	for (int i = 0; i < 8; i++)
		commit_blob(db);
	db_checkpointer_stop(c);
	size = file_size(path);
	/* the checkpointer may be a few MiB behind the writer */
	assert_true(size > (how == DROPPING_IN_BACKGROUND ? 4 << 20 : 10 << 20));
	resident(fd, size, 0, 2 << 20, &head[0], &head[1]);
	resident(fd, size, size - (1 << 20), size, &tail[0], &tail[1]);
	assert_int_equal(itdb_close(db), 0);
	close(fd);
	free(buf);
}

static void checkpoints_drop_what_they_wrote_from_the_page_cache(void **state)
{
	struct fixture *f = *state;
	size_t head[2], tail[2];
	struct statfs fs;

	assert_int_equal(statfs(f->dir, &fs), 0);
	if (fs.f_type == TMPFS_MAGIC) {
		printf("SKIP: %s is on tmpfs, whose files are their page cache: nothing to drop\n",
		       f->dir);
		skip();
	}
	/* the control: SQLite's own checkpoints leave every page written or read in the cache */
	write_and_look(f->path, SQLITE_OWN, head, tail);
	assert_int_equal(head[0], head[1]);
	assert_int_equal(tail[0], tail[1]);
	write_and_look(f->path, DROPPING, head, tail);
	assert_int_equal(head[0], head[1]); /* read back after its checkpoints: stays */
	assert_int_equal(tail[0], 0);
	assert_true(tail[1] >= 256);
	write_and_look(f->path, DROPPING_IN_BACKGROUND, head, tail);
	assert_int_equal(head[0], head[1]);
	assert_int_equal(tail[0], 0);
	assert_true(tail[1] >= 256);
}

/* An in-memory database has no file: checkpoints only, and no checkpointer */
static void a_database_without_a_file_only_checkpoints(void **state)
{
	sqlite3 *db;

	char err[256];

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_false(db_checkpoint_install(db, 1 << 20, 4096));
	assert_null(db_checkpointer_start(db, 1 << 20, err, sizeof(err)));
	assert_string_equal(err, "the database has no file");
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(checkpoints_come_every_32_mib_of_pages, setup,
						teardown),
		cmocka_unit_test_setup_teardown(checkpoints_drop_what_they_wrote_from_the_page_cache,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_checkpointer_takes_the_writers_syncs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(after_the_checkpointer_the_writer_checkpoints_itself,
						setup, teardown),
		cmocka_unit_test(a_database_without_a_file_only_checkpoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
