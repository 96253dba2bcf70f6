/* Test helper: the rows of a query as text, "a|b|c;" per row and "NULL" for SQL NULL, so a test
 * pins a table's content with one exact string. Include after <cmocka.h>. */
#ifndef IOMMUTRACE_TEST_SQL_ROWS_H
#define IOMMUTRACE_TEST_SQL_ROWS_H

#include <stdio.h>
#include <sqlite3.h>
#include "common/schema.h"

#define SQL_ROWS_TEXT_(x) #x
#define SQL_ROWS_TEXT(x) SQL_ROWS_TEXT_(x)
/* The schema version as sql_rows prints the meta table's row ("8;") */
#define SCHEMA_VERSION_ROW SQL_ROWS_TEXT(IT_SCHEMA_VERSION) ";"

/* The returned buffer is static: valid until the next call. */
static inline const char *sql_rows(sqlite3 *db, const char *sql)
{
	static char out[8192];
	sqlite3_stmt *st;
	size_t used = 0;

	out[0] = '\0';
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const char *v = (const char *)sqlite3_column_text(st, c);

			used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s",
						 c ? "|" : "", v ? v : "NULL");
			assert_true(used < sizeof(out));
		}
		used += (size_t)snprintf(out + used, sizeof(out) - used, ";");
		assert_true(used < sizeof(out));
	}
	sqlite3_finalize(st);
	return out;
}

#endif
