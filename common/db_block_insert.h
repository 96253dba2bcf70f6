/* Rows into one table in blocks: DB_BLOCK_ROWS rows a multi-row INSERT, values bound only when
 * they change. */
#ifndef IOMMUTRACE_DB_BLOCK_INSERT_H
#define IOMMUTRACE_DB_BLOCK_INSERT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sqlite3.h>

/* One INSERT of this many rows saves the per-statement work (cursors, halt, the seek to the
 * table's end) of all but one. */
#define DB_BLOCK_ROWS 32

/**
 * struct db_block_table - a table that takes its rows in blocks
 * @insert:      "INSERT [OR ...] INTO table(session_id, ...)": the columns, session_id first
 * @ncols:       cells of a row: the columns after session_id, and first the row's id when
 *               @assigned_id
 * @assigned_id: cell 0 is the id SQLite gives the row, not a column: for a writer that numbers
 *               its rows itself (SQLite appends a row with no id from the cursor at the table's
 *               end, where a given id costs a seek to check it is free). After each INSERT the
 *               last row must have got the id its cell 0 says, else the block fails.
 * @context:     names the table's rows in an error line
 */
struct db_block_table {
	const char *insert;
	int ncols;
	bool assigned_id;
	const char *context;
};

/* A value waiting in a block: an integer, a real, a text or NULL. */
#define DB_CELL_INT (-1)
#define DB_CELL_NULL (-2)
#define DB_CELL_REAL (-3)
struct db_cell {
	union {
		int64_t value;
		double real;
	};
	const char *text;
	int len; /* text length, or DB_CELL_INT, DB_CELL_NULL, DB_CELL_REAL */
	bool copied; /* text lies in a buffer its writer reuses: bound again every time */
};

/* A table's block: its fields are read and written through the functions below only. */
struct db_block {
	const struct db_block_table *t;
	sqlite3_stmt *many; /* DB_BLOCK_ROWS rows a step */
	sqlite3_stmt *one; /* the rest, at a flush */
	int nrows;
	struct db_cell *cells; /* DB_BLOCK_ROWS rows of t->ncols */
	struct db_cell *bound_many; /* what many's parameters hold, as cells */
	struct db_cell *bound_one; /* what one's hold */
};

/**
 * db_block_new() - A block for rows of @t, @session_id bound once.
 *
 * A text cell is bound without a copy: its bytes must stay as they are until the block is
 * freed, or, marked copied, until its row is inserted. A cell is bound only when its parameter
 * does not hold its value already (a text by its pointer): rows that repeat columns cost less.
 *
 * Return: the block, or NULL (logged).
 */
struct db_block *db_block_new(sqlite3 *db, const struct db_block_table *t, int64_t session_id);
/**
 * db_block_free() - Free @b, its rows waiting not inserted; NULL is accepted.
 */
void db_block_free(struct db_block *b);
/**
 * db_block_flush() - Insert the rows waiting: DB_BLOCK_ROWS a statement, then one at a time.
 *
 * Return: 0, or -1 (logged).
 */
int db_block_flush(struct db_block *b);
/**
 * db_block_end() - Insert the rows waiting unless @rc says a row failed (-1), and free @b.
 *
 * Return: 0, or -1 when @rc was -1 or the insert failed (logged).
 */
int db_block_end(struct db_block *b, int rc);

/**
 * db_block_row() - The cells of the next row, to fill (every one of them), then
 * db_block_row_done().
 *
 * Inline, as the two below: a hot writer calls them for every row.
 */
static inline struct db_cell *db_block_row(struct db_block *b)
{
	return b->cells + b->nrows * b->t->ncols;
}

/**
 * db_block_row_index() - Which row of the block db_block_row() gives: 0 to DB_BLOCK_ROWS - 1.
 */
static inline int db_block_row_index(const struct db_block *b)
{
	return b->nrows;
}

/**
 * db_block_row_done() - The row is complete; a full block is inserted.
 *
 * Return: 0, or -1 when the insert failed (logged).
 */
static inline int db_block_row_done(struct db_block *b)
{
	if (++b->nrows < DB_BLOCK_ROWS)
		return 0;
	return db_block_flush(b);
}

static inline void db_cell_int(struct db_cell *c, int64_t v)
{
	c->value = v;
	c->len = DB_CELL_INT;
	c->copied = false;
}

static inline void db_cell_u64(struct db_cell *c, uint64_t v)
{
	db_cell_int(c, (int64_t)v);
}

static inline void db_cell_null(struct db_cell *c)
{
	c->len = DB_CELL_NULL;
	c->copied = false;
}

/**
 * db_cell_nonzero() - An integer, or NULL when @v is 0.
 */
static inline void db_cell_nonzero(struct db_cell *c, uint64_t v)
{
	db_cell_int(c, (int64_t)v);
	if (!v)
		c->len = DB_CELL_NULL;
}

/**
 * db_cell_int_if() - An integer, or NULL when it is not @known.
 */
static inline void db_cell_int_if(struct db_cell *c, bool known, int64_t v)
{
	if (known)
		db_cell_int(c, v);
	else
		db_cell_null(c);
}

static inline void db_cell_real(struct db_cell *c, double v)
{
	c->real = v;
	c->len = DB_CELL_REAL;
	c->copied = false;
}

/**
 * db_cell_text() - Text that stays unchanged while the block lives (a literal, a probe name, a
 * report's field); NULL or "" is stored as NULL.
 */
static inline void db_cell_text(struct db_cell *c, const char *s)
{
	c->text = s;
	c->len = s && *s ? (int)strlen(s) : DB_CELL_NULL;
	c->copied = false;
}

/**
 * db_cell_text_len() - @len (> 0) bytes of text: unchanged while the block lives or, @copied, in
 * a buffer its writer reuses once the row is inserted.
 */
static inline void db_cell_text_len(struct db_cell *c, const char *s, int len, bool copied)
{
	c->text = s;
	c->len = len;
	c->copied = copied;
}

#endif
