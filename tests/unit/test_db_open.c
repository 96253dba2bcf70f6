/* A database is untrusted input (common/db.h): a file another process holds locked is said to be
 * busy, not foreign; a schema version that is not a number this iommutrace knows is refused in one
 * line; a checkpoint that fails on a full disk fails the close, and a full disk is said once per
 * connection; timestamps of 0 are times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include "tests/vfs_shim.h"
#include "common/db.h"
#include "common/schema.h"

struct fixture {
	char dir[64], path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];
	sqlite3 *db;

	snprintf(f->dir, sizeof(f->dir), "/tmp/iommutrace-dbopen-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/x.db", f->dir);
	db = itdb_open(f->path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	if (!db || itdb_close(db))
		return -1;
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

/* Another connection (as another process would) holding lock_sql on the file. */
static sqlite3 *hold(const char *path, const char *lock_sql)
{
	sqlite3 *other;

	assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, lock_sql, NULL, NULL, NULL), SQLITE_OK);
	return other;
}

static void expect_busy(const char *path, enum itdb_open_mode mode)
{
	char err[512];
	sqlite3 *db = itdb_open(path, mode, &it_recorded_schema, err, sizeof(err));

	assert_null(db);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "is locked by another process (busy for 5 s)"));
	assert_null(strstr(err, "not an iommutrace database"));
}

/* BEGIN EXCLUSIVE on a file in rollback mode (as itdb_close leaves it): nobody may read it. */
static void exclusive_lock_is_busy(void **state)
{
	struct fixture *f = *state;
	sqlite3 *other = hold(f->path, "BEGIN EXCLUSIVE");

	expect_busy(f->path, ITDB_READ);
	expect_busy(f->path, ITDB_MIGRATE);
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
}

/* A write in progress (RESERVED): readable, but the switch to WAL waits for it. */
static void write_lock_is_busy(void **state)
{
	struct fixture *f = *state;
	sqlite3 *other = hold(f->path, "BEGIN IMMEDIATE");

	expect_busy(f->path, ITDB_MIGRATE);
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
}

static void set_version(const char *path, const char *sql_value)
{
	char sql[128];
	sqlite3 *db;

	snprintf(sql, sizeof(sql), "UPDATE meta SET value = %s WHERE key = 'schema_version'",
		 sql_value);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* Versions no iommutrace wrote: refused in one line, the file left as it was. */
static void unknown_versions_are_refused(void **state)
{
	static const char *const values[] = { "'0'", "'-1'", "'1.5'", "'abc'", "'8x'",
					      "''",  "' 7'", "'07'",  "1.5",   "X'37'" };
	struct fixture *f = *state;
	char err[512];
	sqlite3 *db;

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		set_version(f->path, values[i]);
		for (int mode = ITDB_APPEND; mode <= ITDB_MIGRATE; mode++) {
			db = itdb_open(f->path, mode, &it_recorded_schema, err, sizeof(err));
			if (db)
				fail_msg("schema version %s opened (mode %d)", values[i], mode);
			print_message("%s\n", err);
			assert_non_null(strstr(err, "no iommutrace writes"));
			assert_null(strchr(err, '\n'));
		}
		assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
		assert_string_equal(sql_rows(db, "SELECT COUNT(*) FROM meta WHERE key = "
						 "'schema_version' AND value = "
						 "(SELECT value FROM meta"
						 " WHERE key = 'schema_version')"),
				    "1;");
		sqlite3_close(db);
	}
	/* a known older version is still migrated */
	set_version(f->path, "'7'");
	db = itdb_open(f->path, ITDB_MIGRATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    SCHEMA_VERSION_ROW);
	assert_int_equal(itdb_close(db), 0);
}

/* Writes to main database files fail as on a full disk once disk_full is set (tests/vfs_shim.h). */
static const sqlite3_io_methods *real_db_io;
static sqlite3_io_methods full_db_io;
static int disk_full;

static int full_write(sqlite3_file *file, const void *buf, int n, sqlite3_int64 off)
{
	return disk_full ? SQLITE_FULL : real_db_io->xWrite(file, buf, n, off);
}

static void full_db_open(sqlite3_file *file, int flags)
{
	if (flags & SQLITE_OPEN_MAIN_DB)
		vfs_shim_swap(file, &real_db_io, &full_db_io)->xWrite = full_write;
}

/* The rows are in the -wal; the database file cannot take them: the close fails. */
/* A session row, so that the connection has pages in its -wal. */
static void insert_session(sqlite3 *db)
{
	assert_int_equal(itdb_exec(db,
				   "INSERT INTO sessions(kind, capture, tool_version)"
				   " VALUES ('record', 'bpf', 'test')",
				   "test"),
			 0);
}

static void close_fails_when_checkpoint_finds_disk_full(void **state)
{
	struct fixture *f = *state;
	char err[256];
	sqlite3 *db;

	vfs_shim_begin(full_db_open);
	db = itdb_open(f->path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	insert_session(db);
	disk_full = 1;
	assert_int_equal(itdb_close(db), -1);
	disk_full = 0;
	vfs_shim_end();
}

/* Fills the -wal of a new connection to f's file and checkpoints it onto a full disk twice, then
 * closes: the connection says the full disk once, whatever fails on it after. */
static void fill_on_full_disk(struct fixture *f)
{
	char err[256];
	sqlite3 *db = itdb_open(f->path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));

	assert_non_null(db);
	insert_session(db);
	disk_full = 1;
	assert_int_equal(itdb_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", "checkpoint"), -1);
	assert_int_equal(itdb_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", "checkpoint"), -1);
	assert_int_equal(itdb_close(db), -1);
	disk_full = 0;
}

/* stderr into a temporary file from stderr_begin() to stderr_end(), which returns what was said
 * there (in @said, at most @len - 1 bytes) */
struct stderr_capture {
	FILE *log;
	int saved;
};

static void stderr_begin(struct stderr_capture *c)
{
	c->log = tmpfile();
	assert_non_null(c->log);
	c->saved = dup(2);
	fflush(stderr);
	dup2(fileno(c->log), 2);
}

static const char *stderr_end(struct stderr_capture *c, char *said, size_t len)
{
	size_t n;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	rewind(c->log);
	n = fread(said, 1, len - 1, c->log);
	said[n] = '\0';
	fclose(c->log);
	return said;
}

/* A full disk is said once per connection (what fails after it on that connection is its
 * consequence), and again on another connection: the state is the connection's. */
static void full_disk_is_said_once_per_connection(void **state)
{
	struct fixture *f = *state;
	struct stderr_capture c;
	char said[4096];
	const char *at;
	int n = 0;

	stderr_begin(&c);
	vfs_shim_begin(full_db_open);
	fill_on_full_disk(f);
	fill_on_full_disk(f);
	vfs_shim_end();
	for (at = stderr_end(&c, said, sizeof(said)); (at = strstr(at, "its disk is full")); at++)
		n++;
	assert_int_equal(n, 2);
}

/* A read that fails on the way (a row SQLite cannot compute) is said in one line; one that reached
 * its end is not. */
static void failed_read_is_said(void **state)
{
	struct stderr_capture c;
	char said[1024];
	sqlite3_stmt *st;
	sqlite3 *db;
	int rc;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT 1 UNION ALL SELECT json('not json')", -1,
					    &st, NULL),
			 SQLITE_OK);
	stderr_begin(&c);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	assert_int_equal(itdb_finalize_read(st, rc, "reading the test rows"), -1);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL), SQLITE_OK);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	assert_int_equal(itdb_finalize_read(st, rc, "reading the other rows"), 0);
	stderr_end(&c, said, sizeof(said));
	sqlite3_close(db);
	assert_string_equal(said, "iommutrace: error: database: reading the test rows: "
				  "malformed JSON\n");
}

/* A trace that starts at 0 (a boot-time trace): its start is 0, not unknown. */
static void zero_times_are_times(void **state)
{
	struct fixture *f = *state;
	char err[256];
	int64_t sid, rec;
	sqlite3 *db = itdb_open(f->path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));

	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "import",
									 .capture = "ftrace-text",
									 .imported = 1 },
					    &sid),
			 0);
	assert_int_equal(itdb_session_end(db, sid,
					  &(struct itdb_session_end){ .has_start_mono_ns = 1,
								      .start_mono_ns = 0,
								      .end_mono_ns = 5000,
								      .end_reason =
									      "end-of-input" }),
			 0);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf",
									 .start_mono_ns = 0,
									 .start_wall_ns = 0 },
					    &rec),
			 0);
	assert_string_equal(sql_rows(db, "SELECT session_id, start_mono_ns, start_wall_ns,"
					 " end_mono_ns FROM sessions ORDER BY session_id"),
			    "1|0|NULL|5000;2|0|0|NULL;");
	assert_int_equal(itdb_close(db), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(exclusive_lock_is_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(write_lock_is_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_versions_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_times_are_times, setup, teardown),
		cmocka_unit_test_setup_teardown(close_fails_when_checkpoint_finds_disk_full, setup,
						teardown),
		cmocka_unit_test_setup_teardown(full_disk_is_said_once_per_connection, setup,
						teardown),
		cmocka_unit_test(failed_read_is_said),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
