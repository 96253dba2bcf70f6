/* Migration of real databases: every earlier schema version, as the commit that last wrote it made
 * it (tests/fixtures/schema, made by its make-fixtures in the testbed), opened by the analyzer as a
 * user's old file would be. Each keeps its rows, passes integrity_check, reaches the current schema
 * version, has every table, column, index and view a new file has (views as now defined), answers
 * every view and gets map lifetimes for every map. A schema version without
 * a fixture fails: a version bump must bring the files of the one before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "common/db.h"
#include "common/schema.h"
#include "analyzer/analysis.h"
#include "tests/sql_rows.h"
#include "tests/full_schema.h"

#define FIXTURES "tests/fixtures/schema"

/* Tables whose rows a migration must keep, where the old file has them. */
static const char *const kept_tables[] = {
	"sessions",	  "maps",     "unmaps",	 "driver_maps", "flushes",    "attaches",
	"pci_devices",	  "map_runs", "io_runs", "io_points",	"io_devices", "map_dma_segments",
	"map_aggregates",
};
#define NKEPT (sizeof(kept_tables) / sizeof(kept_tables[0]))

/* gunzip SRC into DST */
static void gunzip_to(const char *src, const char *dst)
{
	char buf[65536];
	gzFile in = gzopen(src, "rb");
	FILE *out = fopen(dst, "wb");
	int n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = gzread(in, buf, sizeof(buf))) > 0)
		assert_int_equal(fwrite(buf, 1, (size_t)n, out), (size_t)n);
	assert_int_equal(n, 0);
	gzclose(in);
	assert_int_equal(fclose(out), 0);
}

static int table_exists(sqlite3 *db, const char *name)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'", name);
	return strcmp(sql_rows(db, sql), "1;") == 0;
}

/* COUNT(*) of each kept table as "name=N;" pieces, -1 where the table is absent */
static void count_rows(sqlite3 *db, long long counts[NKEPT])
{
	char sql[128];

	for (size_t i = 0; i < NKEPT; i++) {
		counts[i] = -1;
		if (!table_exists(db, kept_tables[i]))
			continue;
		snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", kept_tables[i]);
		counts[i] = atoll(sql_rows(db, sql));
	}
}

/* Every view answers: prepared and stepped to its first row (or its end) without an error. */
static void views_answer(sqlite3 *db, const char *fixture)
{
	sqlite3_stmt *views, *st;
	char sql[256];

	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT name FROM sqlite_master WHERE type = 'view'"
					    " ORDER BY name",
					    -1, &views, NULL),
			 SQLITE_OK);
	while (sqlite3_step(views) == SQLITE_ROW) {
		int rc;

		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" LIMIT 1",
			 sqlite3_column_text(views, 0));
		rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			fail_msg("%s: %s: %s", fixture, sql, sqlite3_errmsg(db));
		sqlite3_finalize(st);
	}
	sqlite3_finalize(views);
}

/* The migrated file has what a new file has: every table with every column, every index, and every
 * view as the current schema defines it (a view of the old definition kept would read old columns). */
static void like_a_new_file(sqlite3 *db, const char *fresh, const char *fixture)
{
	char sql[1024];
	const char *missing;

	snprintf(sql, sizeof(sql), "ATTACH '%s' AS fresh", fresh);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	missing =
		sql_rows(db,
			 "SELECT 'column ' || m.name || '.' || c.name FROM fresh.sqlite_master m,"
			 " pragma_table_info(m.name, 'fresh') c WHERE m.type = 'table' AND NOT EXISTS"
			 " (SELECT 1 FROM pragma_table_info(m.name, 'main') d WHERE d.name = c.name)"
			 " UNION ALL SELECT f.type || ' ' || f.name FROM fresh.sqlite_master f"
			 " WHERE f.type IN ('table', 'index', 'view') AND f.name NOT LIKE 'sqlite_%' AND NOT EXISTS"
			 " (SELECT 1 FROM main.sqlite_master o WHERE o.name = f.name AND o.type = f.type"
			 "  AND (f.type != 'view' OR o.sql = f.sql))");
	if (*missing)
		fail_msg("%s: not as a new file after the migration (missing, or a view's old definition"
			 " kept): %s",
			 fixture, missing);
	assert_int_equal(sqlite3_exec(db, "DETACH fresh", NULL, NULL, NULL), SQLITE_OK);
}

/* One fixture: what it holds before, the analyzer's open, what it holds after. */
static void migrate_one(const char *name, const char *dir, const char *fresh)
{
	char src[512], path[512];
	long long before[NKEPT], after[NKEPT];
	struct analysis a;
	sqlite3 *db;

	snprintf(src, sizeof(src), FIXTURES "/%s", name);
	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(strlen(name) - 3), name);
	gunzip_to(src, path);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	count_rows(db, before);
	assert_true(before[0] > 0); /* a session, at least */
	sqlite3_close(db);

	assert_int_equal(analysis_open(&a, path, &test_full_schema, -1), 0);
	analysis_close(&a);

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_string_equal(sql_rows(db, "PRAGMA integrity_check"), "ok;");
	assert_string_equal(sql_rows(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    SCHEMA_VERSION_ROW);
	count_rows(db, after);
	for (size_t i = 0; i < NKEPT; i++)
		if (before[i] >= 0 && before[i] != after[i])
			fail_msg("%s: %s had %lld rows, has %lld after the migration", name,
				 kept_tables[i], before[i], after[i]);
	views_answer(db, name);
	like_a_new_file(db, fresh, name);
	assert_string_equal(sql_rows(db, "SELECT (SELECT COUNT(DISTINCT map_id) FROM map_pieces) ="
					 " (SELECT COUNT(*) FROM maps)"),
			    "1;");
	sqlite3_close(db);
	unlink(path);
}

static void every_earlier_version_migrates(void **state)
{
	char dir[] = "/tmp/iommutrace-fixtures-XXXXXX", fresh[64], err[256];
	int seen[IT_SCHEMA_VERSION + 1] = { 0 };
	struct analysis a;
	struct dirent *e;
	sqlite3 *db;
	DIR *d;

	assert_non_null(mkdtemp(dir));
	/* a new file of the current schema, with the analyzer's views, to hold the migrated ones to */
	snprintf(fresh, sizeof(fresh), "%s/fresh.db", dir);
	db = itdb_open(fresh, ITDB_CREATE, &test_full_schema, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(itdb_exec(db,
				   "INSERT INTO sessions(session_id, kind, capture, tool_version)"
				   " VALUES (1, 'record', 'bpf', 'test')",
				   "test"),
			 0);
	itdb_close(db);
	assert_int_equal(analysis_open(&a, fresh, &test_full_schema, -1), 0);
	analysis_close(&a);
	d = opendir(FIXTURES);
	assert_non_null(d);
	while ((e = readdir(d))) {
		int version;
		size_t len = strlen(e->d_name);

		if (len < 4 || strcmp(e->d_name + len - 3, ".gz") ||
		    sscanf(e->d_name, "v%d-", &version) != 1)
			continue;
		assert_true(version >= 1 && version < IT_SCHEMA_VERSION);
		print_message("migrating %s (schema %d)\n", e->d_name, version);
		migrate_one(e->d_name, dir, fresh);
		seen[version]++;
	}
	closedir(d);
	unlink(fresh);
	rmdir(dir);
	for (int v = 1; v < IT_SCHEMA_VERSION; v++)
		if (!seen[v])
			fail_msg("no fixture of schema %d in " FIXTURES
				 " (make-fixtures there makes them)",
				 v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_earlier_version_migrates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
