/* Rows in blocks (common/db_block_insert.h): every row as given and in order, in full blocks and
 * the rest; a cell bound again whenever its value changes in its place, from NULL to 0, from a
 * real to an integer, a copied text rewritten in its buffer; ids SQLite assigns checked; a
 * failed INSERT said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "common/db_block_insert.h"
#include "tests/sql_rows.h"

static const struct db_block_table plain = { "INSERT INTO t(session_id, a, b, c)", 3, false,
					     "test: insert t" };
static const struct db_block_table numbered = { "INSERT OR FAIL INTO n(session_id, a)", 2, true,
						"test: insert n" };

static sqlite3 *open_db(void)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "CREATE TABLE t(session_id INTEGER NOT NULL, a, b, c);"
				      "CREATE TABLE n(id INTEGER PRIMARY KEY, session_id INTEGER,"
				      " a INTEGER NOT NULL)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	return db;
}

/* 70 rows: two blocks of 32 and a rest of 6 inserted one at a time, every value where it was
 * put, and the session in every row. */
static void rows_in_order(void **state)
{
	sqlite3 *db = open_db();
	struct db_block *b = db_block_new(db, &plain, 7);

	(void)state;
	assert_non_null(b);
	for (int i = 0; i < 70; i++) {
		struct db_cell *c = db_block_row(b);

		assert_int_equal(db_block_row_index(b), i % DB_BLOCK_ROWS);
		db_cell_int(&c[0], i);
		db_cell_text(&c[1], i % 2 ? "odd" : "even");
		db_cell_real(&c[2], i / 4.0);
		assert_int_equal(db_block_row_done(b), 0);
	}
	assert_string_equal(sql_rows(db, "SELECT COUNT(*) FROM t"), "64;");
	assert_int_equal(db_block_flush(b), 0);
	assert_string_equal(sql_rows(db, "SELECT COUNT(*), SUM(session_id = 7), SUM(a = rowid - 1),"
					 " SUM(b = CASE a % 2 WHEN 1 THEN 'odd' ELSE 'even' END),"
					 " SUM(c = a / 4.0), SUM(typeof(c) = 'real') FROM t"),
			    "70|70|70|70|70|70;");
	/* a flush with nothing waiting inserts nothing */
	assert_int_equal(db_block_flush(b), 0);
	assert_string_equal(sql_rows(db, "SELECT COUNT(*) FROM t"), "70;");
	db_block_free(b);
	sqlite3_close(db);
}

/* Each place of a block's statement sees its value change kind: NULL, 0, a real 0, a text; a
 * copied text rewritten in place between rows; NULL and "" texts stored as NULL. */
static void changes_bound_again(void **state)
{
	sqlite3 *db = open_db();
	struct db_block *b = db_block_new(db, &plain, 1);
	char buffer[8];

	(void)state;
	assert_non_null(b);
	for (int i = 0; i < 5 * DB_BLOCK_ROWS; i++) {
		struct db_cell *c = db_block_row(b);
		int round = i / DB_BLOCK_ROWS;

		/* the same place, one round after another: NULL, 0, 0.0, "0", 5 */
		if (round == 0)
			db_cell_null(&c[0]);
		else if (round == 2)
			db_cell_real(&c[0], 0.0);
		else if (round == 3)
			db_cell_text(&c[0], "0");
		else if (round == 1)
			db_cell_int(&c[0], 0);
		else
			db_cell_nonzero(&c[0], 5);
		/* one buffer rewritten for every row of the last two rounds, longer in the last */
		if (round >= 3) {
			db_cell_text_len(&c[1], buffer,
					 snprintf(buffer, sizeof(buffer),
						  round == 3 ? "r3" : "r4x"),
					 true);
		} else {
			db_cell_text(&c[1], round ? "" : NULL);
		}
		db_cell_int_if(&c[2], round % 2, round);
		assert_int_equal(db_block_row_done(b), 0);
	}
	assert_int_equal(db_block_flush(b), 0);
	assert_string_equal(sql_rows(db, "SELECT quote(a), quote(b), quote(c), COUNT(*) FROM t"
					 " GROUP BY (rowid - 1) / 32 ORDER BY rowid"),
			    "NULL|NULL|NULL|32;0|NULL|1|32;0.0|NULL|NULL|32;'0'|'r3'|3|32;"
			    "5|'r4x'|NULL|32;");
	db_block_free(b);
	sqlite3_close(db);
}

/* Rows whose ids SQLite assigns: the ids the writer gave them, checked after every INSERT; a row
 * another writer adds meanwhile fails the next block. */
static void assigned_ids_checked(void **state)
{
	sqlite3 *db = open_db();
	struct db_block *b = db_block_new(db, &numbered, 1);
	int64_t id = 1;

	(void)state;
	assert_non_null(b);
	for (; id <= 40; id++) {
		struct db_cell *c = db_block_row(b);

		db_cell_int(&c[0], id);
		db_cell_int(&c[1], id * 10);
		assert_int_equal(db_block_row_done(b), 0);
	}
	assert_int_equal(db_block_flush(b), 0);
	assert_string_equal(sql_rows(db, "SELECT COUNT(*), SUM(a = id * 10) FROM n"), "40|40;");
	assert_int_equal(sqlite3_exec(db, "INSERT INTO n(session_id, a) VALUES (2, 0)", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	db_cell_int(&db_block_row(b)[0], id);
	db_cell_int(&db_block_row(b)[1], 0);
	assert_int_equal(db_block_row_done(b), 0);
	assert_int_equal(db_block_flush(b), -1);
	db_block_free(b);
	sqlite3_close(db);
}

/* A row the table refuses fails its block, full or not. */
static void failed_insert(void **state)
{
	sqlite3 *db = open_db();
	struct db_block *b = db_block_new(db, &numbered, 1);
	int rc = 0;

	(void)state;
	assert_non_null(b);
	for (int i = 1; i <= DB_BLOCK_ROWS && !rc; i++) {
		struct db_cell *c = db_block_row(b);

		db_cell_int(&c[0], i);
		db_cell_nonzero(&c[1], i == 5 ? 0 : 1);
		rc = db_block_row_done(b);
	}
	assert_int_equal(rc, -1);
	assert_int_equal(db_block_end(db_block_new(db, &numbered, 1), -1), -1);
	db_block_free(b);
	/* a table that does not exist: no block */
	assert_null(db_block_new(db,
				 &(struct db_block_table){ "INSERT INTO none(session_id, a)", 1,
							   false, "test" },
				 1));
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_in_order),
		cmocka_unit_test(changes_bound_again),
		cmocka_unit_test(assigned_ids_checked),
		cmocka_unit_test(failed_insert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
