/* Rows in blocks (see db_block_insert.h): a statement of DB_BLOCK_ROWS rows and one of a single
 * row, each with what its parameters hold, so that a cell is bound only when it changes. */
#include <stdio.h>
#include <stdlib.h>
#include "common/db.h"
#include "common/db_block_insert.h"
#include "common/log.h"

/* "INSERT ... VALUES (?1,?,...),..." for nrows rows; NULL when out of memory. */
static char *block_sql(const struct db_block_table *t, int nrows)
{
	int ncols = t->ncols - t->assigned_id;
	size_t head = strlen(t->insert), tuple = 4 + 2 * (size_t)ncols;
	char *sql = malloc(head + 8 + nrows * (tuple + 1) + 1), *p;

	if (!sql)
		return NULL;
	p = sql + sprintf(sql, "%s VALUES", t->insert);
	for (int r = 0; r < nrows; r++) {
		p += sprintf(p, "%s(?1", r ? "," : " ");
		for (int c = 0; c < ncols; c++)
			p += sprintf(p, ",?");
		*p++ = ')';
	}
	*p = '\0';
	return sql;
}

void db_block_free(struct db_block *b)
{
	if (!b)
		return;
	sqlite3_finalize(b->many);
	sqlite3_finalize(b->one);
	free(b->cells);
	free(b->bound_many);
	free(b->bound_one);
	free(b);
}

struct db_block *db_block_new(sqlite3 *db, const struct db_block_table *t, int64_t session_id)
{
	struct db_block *b = calloc(1, sizeof(*b)), *ret = NULL;
	char *many = block_sql(t, DB_BLOCK_ROWS), *one = block_sql(t, 1);

	if (b) {
		b->t = t;
		/* what a parameter holds starts as a cell of len 0, which matches no value */
		b->cells = calloc(DB_BLOCK_ROWS * t->ncols, sizeof(*b->cells));
		b->bound_many = calloc(DB_BLOCK_ROWS * t->ncols, sizeof(*b->bound_many));
		b->bound_one = calloc(t->ncols, sizeof(*b->bound_one));
	}
	if (!b || !many || !one || !b->cells || !b->bound_many || !b->bound_one) {
		log_error("%s: out of memory", t->context);
		goto cleanup;
	}
	b->many = itdb_prepare(db, many);
	b->one = itdb_prepare(db, one);
	if (!b->many || !b->one)
		goto cleanup;
	sqlite3_bind_int64(b->many, 1, session_id);
	sqlite3_bind_int64(b->one, 1, session_id);
	ret = b;
	b = NULL;
cleanup:
	free(many);
	free(one);
	db_block_free(b);
	return ret;
}

/* Does the parameter that holds bound hold c's value? (A real is compared as its bits; a copied
 * text may have changed.) */
static bool cell_is_bound(const struct db_cell *bound, const struct db_cell *c)
{
	if (bound->len != c->len)
		return false;
	if (c->len == DB_CELL_INT)
		return bound->value == c->value;
	if (c->len >= 0)
		return bound->text == c->text && !c->copied;
	return c->len == DB_CELL_NULL || bound->value == c->value;
}

/* Binds a row's cells from parameter first on, those its parameters do not hold already
 * (bindings are never cleared); bound[] is what they hold. */
static void bind_cells(sqlite3_stmt *st, int first, const struct db_cell *c, struct db_cell *bound,
		       int ncols)
{
	for (int i = 0; i < ncols; i++) {
		if (cell_is_bound(&bound[i], &c[i]))
			continue;
		if (c[i].len == DB_CELL_INT)
			sqlite3_bind_int64(st, first + i, c[i].value);
		else if (c[i].len == DB_CELL_NULL)
			sqlite3_bind_null(st, first + i);
		else if (c[i].len == DB_CELL_REAL)
			sqlite3_bind_double(st, first + i, c[i].real);
		else
			sqlite3_bind_text(st, first + i, c[i].text, c[i].len, SQLITE_STATIC);
		bound[i] = c[i];
	}
}

static int step_reset(sqlite3_stmt *st, const char *context)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 0;
	itdb_log_failure(sqlite3_db_handle(st), context, sqlite3_errmsg(sqlite3_db_handle(st)));
	return -1;
}

/* After an INSERT of rows whose ids SQLite assigned: did the last get the id its writer gave it?
 * Not when another connection added rows to the table since the writer started. */
static int check_assigned_id(sqlite3 *db, const struct db_block_table *t, int64_t expected)
{
	int64_t got = sqlite3_last_insert_rowid(db);

	if (got == expected)
		return 0;
	log_error("%s: the row numbered %lld got the id %lld: another program wrote to this table"
		  " during the recording; record into a database file no other program writes",
		  t->context, (long long)expected, (long long)got);
	return -1;
}

int db_block_flush(struct db_block *b)
{
	const struct db_block_table *t = b->t;
	int skip = t->assigned_id, stride = t->ncols, ncols = stride - skip;
	const struct db_cell *row = b->cells, *end = b->cells + b->nrows * stride;

	while (row < end) {
		int n = end - row >= DB_BLOCK_ROWS * stride ? DB_BLOCK_ROWS : 1;
		sqlite3_stmt *st = n == DB_BLOCK_ROWS ? b->many : b->one;
		struct db_cell *bound = n == DB_BLOCK_ROWS ? b->bound_many : b->bound_one;

		for (int r = 0; r < n; r++, row += stride, bound += stride)
			bind_cells(st, 2 + r * ncols, row + skip, bound, ncols);
		if (step_reset(st, t->context))
			return -1;
		if (skip && check_assigned_id(sqlite3_db_handle(st), t, row[-stride].value))
			return -1;
	}
	b->nrows = 0;
	return 0;
}

int db_block_end(struct db_block *b, int rc)
{
	rc = rc || db_block_flush(b) ? -1 : 0;
	db_block_free(b);
	return rc;
}
