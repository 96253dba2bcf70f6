/* Test helper: a database in a new temporary file with the current schema, filled from a fixture
 * (tests/fixtures/analyzer/NAME.sql: plain SQL inserts of sessions, maps, unmaps, driver_maps,
 * domains, bars, runs ...), then map lifetimes computed for each of its sessions, as the recorder
 * leaves a session. Known answers are then pinned with sql_rows() or the analyzer's output.
 * Include after <cmocka.h>. */
#ifndef IOMMUTRACE_TEST_ANALYZER_FIXTURE_H
#define IOMMUTRACE_TEST_ANALYZER_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sqlite3.h>
#include "common/db.h"
#include "analyzer/lifetimes.h"
#include "tests/full_schema.h"

struct fixture_db {
	char dir[64];
	char path[128];
	sqlite3 *db;
};

static inline void fixture_db_open(struct fixture_db *f, const char *name)
{
	char fixture[256], err[256];
	sqlite3_stmt *st;
	FILE *in;
	char *sql;
	long n;

	snprintf(f->dir, sizeof(f->dir), "/tmp/iommutrace-fixture-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/%s.db", f->dir, name);
	f->db = itdb_open(f->path, ITDB_CREATE, &test_full_schema, err, sizeof(err));
	assert_non_null(f->db);
	snprintf(fixture, sizeof(fixture), "tests/fixtures/analyzer/%s.sql", name);
	in = fopen(fixture, "r");
	assert_non_null(in);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	n = ftell(in);
	rewind(in);
	sql = calloc(1, (size_t)n + 1);
	assert_non_null(sql);
	assert_int_equal(fread(sql, 1, (size_t)n, in), (size_t)n);
	fclose(in);
	assert_int_equal(itdb_exec(f->db, sql, fixture), 0);
	free(sql);
	assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT session_id FROM sessions", -1, &st,
					    NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		assert_int_equal(lifetimes_compute(f->db, sqlite3_column_int64(st, 0)), 0);
	sqlite3_finalize(st);
}

/* Closes and removes the database. */
static inline void fixture_db_close(struct fixture_db *f)
{
	itdb_close(f->db);
	unlink(f->path);
	rmdir(f->dir);
}

#endif
