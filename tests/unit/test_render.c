/* Rendering query rows (analyzer/render.h): the same rows as aligned text with units, as one
 * JSON document, and as CSV with its section lines; columns formatted by their names, NULL in
 * each format, quoting, notes, an empty section, and a query that fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analyzer/render.h"

#define ROWS "SELECT 1 AS n, 2097152 AS size_bytes, 4294967296 AS iova, 12.345 AS share_pct," \
	     " 'a,\"b\"' AS name, NULL AS x UNION ALL SELECT 22, 1536, 0, 0.5, 'c', 7"

static char *render_all(enum render_format format, const char *sql)
{
	sqlite3 *db;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct render r;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	render_begin(&r, format, f, "test", "x.db");
	assert_int_equal(render_query(&r, db, "rows", "Some rows", sql, -1), 2);
	render_note(&r, "a note with %d", 42);
	assert_int_equal(render_query(&r, db, "none", "No rows", "SELECT 1 AS n WHERE 0", -1), 0);
	assert_int_equal(render_end(&r), 0);
	fclose(f);
	sqlite3_close(db);
	return out;
}

static void text(void **state)
{
	char *out = render_all(RENDER_TEXT, ROWS);

	assert_string_equal(out,
		"\nSome rows\n"
		"   n  size_bytes         iova  share_pct  name   x\n"
		"   1       2 MiB  0x100000000      12.3%  a,\"b\"  -\n"
		"  22     1.5 KiB          0x0       0.5%  c      7\n"
		"  a note with 42\n"
		"\nNo rows\n  (none)\n");
	free(out);
}

static void json(void **state)
{
	char *out = render_all(RENDER_JSON, ROWS);

	assert_non_null(strstr(out, "\"command\": \"test\""));
	assert_non_null(strstr(out, "\"name\": \"rows\""));
	assert_non_null(strstr(out, "\"size_bytes\": 2097152"));
	assert_non_null(strstr(out, "\"iova\": \"0x100000000\""));
	assert_non_null(strstr(out, "\"share_pct\": 12.345"));
	assert_non_null(strstr(out, "\"name\": \"a,\\\"b\\\"\""));
	assert_non_null(strstr(out, "\"x\": null"));
	assert_non_null(strstr(out, "\"notes\": [\n"));
	assert_non_null(strstr(out, "\"a note with 42\""));
	assert_non_null(strstr(out, "\"rows\": []"));
	free(out);
}

static void csv(void **state)
{
	char *out = render_all(RENDER_CSV, ROWS);

	assert_string_equal(out,
		"# rows: Some rows\n"
		"n,size_bytes,iova,share_pct,name,x\n"
		"1,2097152,0x100000000,12.345000000000001,\"a,\"\"b\"\"\",\n"
		"22,1536,0x0,0.5,c,7\n"
		"# note: a note with 42\n"
		"\n# none: No rows\n"
		"n\n");
	free(out);
}

static void failing_query(void **state)
{
	sqlite3 *db;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct render r;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	render_begin(&r, RENDER_JSON, f, "test", "x.db");
	assert_int_equal(render_query(&r, db, "bad", "Bad", "SELECT * FROM no_such_table", -1), -1);
	assert_int_equal(render_end(&r), -1);
	fclose(f);
	sqlite3_close(db);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text),
		cmocka_unit_test(json),
		cmocka_unit_test(csv),
		cmocka_unit_test(failing_query),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
