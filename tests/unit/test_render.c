/* Rendering query rows (analyzer/render.h): the same rows as aligned text with units, as one
 * JSON document, and as CSV with its section lines; columns formatted by their names, NULL in
 * each format, quoting, notes, an empty section, hostile text, and a query that fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analyzer/render.h"

#define ROWS \
	"SELECT 1 AS n, 2097152 AS size_bytes, 4294967296 AS iova, 12.345 AS share_pct," \
	" 'a,\"b\"' AS name, NULL AS x UNION ALL SELECT 22, 1536, 0, 0.5, 'c', 7"

/* Renders sql as section "rows" (expecting nrows rows) with note under it, then an empty
 * section "none". */
static char *render_all(enum render_format format, const char *sql, const char *title, long nrows,
			const char *note)
{
	sqlite3 *db;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct render r;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	render_begin(&r, format, f, "test", "x.db");
	assert_int_equal(render_query(&r, db, "rows", title, sql, -1), nrows);
	render_note(&r, "%s", note);
	assert_int_equal(render_query(&r, db, "none", "No rows", "SELECT 1 AS n WHERE 0", -1), 0);
	assert_int_equal(render_end(&r), 0);
	fclose(f);
	sqlite3_close(db);
	return out;
}

static void text(void **state)
{
	char *out = render_all(RENDER_TEXT, ROWS, "Some rows", 2, "a note with 42");

	assert_string_equal(out, "\nSome rows\n"
				 "   n  size_bytes         iova  share_pct  name   x\n"
				 "   1       2 MiB  0x100000000      12.3%  a,\"b\"  -\n"
				 "  22     1.5 KiB          0x0       0.5%  c      7\n"
				 "  a note with 42\n"
				 "\nNo rows\n  (none)\n");
	free(out);
}

static void json(void **state)
{
	char *out = render_all(RENDER_JSON, ROWS, "Some rows", 2, "a note with 42");

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
	char *out = render_all(RENDER_CSV, ROWS, "Some rows", 2, "a note with 42");

	assert_string_equal(out, "# rows: Some rows\n"
				 "n,size_bytes,iova,share_pct,name,x\n"
				 "1,2097152,0x100000000,12.345000000000001,\"a,\"\"b\"\"\",\n"
				 "22,1536,0x0,0.5,c,7\n"
				 "# note: a note with 42\n"
				 "\n# none: No rows\n"
				 "n\n");
	free(out);
}

/* Text from a database on its way out: escape sequences (ESC, the C1 CSI U+009B, DEL), a line
 * break and bytes that are not UTF-8 become '?' in text and in notes; CSV quotes what a
 * spreadsheet would run as a formula, and keeps the bytes; JSON escapes them. */
#define HOSTILE \
	"SELECT 'a' || char(27) || '[2J' || char(155) || char(127) || char(10) || 'b' AS" \
	" device, '=HYPERLINK(\"x\")' AS formula, CAST(x'ff41c3a9' AS TEXT) AS bytes, -5 AS n"

static char *render_hostile(enum render_format format)
{
	/* the note quotes the device as the database has it */
	return render_all(format, HOSTILE, "Rows", 1, "device a\x1b[2J\xc2\x9b\x7f\nb");
}

static void hostile_text(void **state)
{
	char *out = render_hostile(RENDER_TEXT);

	assert_string_equal(out, "\nRows\n"
				 "  device      formula          bytes   n\n"
				 "  a?[2J????b  =HYPERLINK(\"x\")  ?A\xc3\xa9    -5\n"
				 "  device a?[2J????b\n"
				 "\nNo rows\n  (none)\n");
	free(out);
	out = render_hostile(RENDER_CSV);
	assert_string_equal(out, "# rows: Rows\n"
				 "device,formula,bytes,n\n"
				 "\"a\x1b[2J\xc2\x9b\x7f\nb\",\"'=HYPERLINK(\"\"x\"\")\",\xff"
				 "A\xc3\xa9,-5\n"
				 "# note: device a?[2J????b\n"
				 "\n# none: No rows\n"
				 "n\n");
	free(out);
	out = render_hostile(RENDER_JSON);
	assert_non_null(strstr(out, "\"device\": \"a\\u001b[2J\xc2\x9b\x7f\\nb\""));
	assert_non_null(strstr(out, "\"bytes\": \"\\ufffdA\xc3\xa9\""));
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
		cmocka_unit_test(text),		 cmocka_unit_test(json),
		cmocka_unit_test(csv),		 cmocka_unit_test(hostile_text),
		cmocka_unit_test(failing_query),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
