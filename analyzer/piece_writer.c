/* Writing map_pieces rows in bulk (see piece_writer.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/db.h"
#include "common/log.h"
#include "analyzer/analyzer_schema.h"
#include "analyzer/piece_writer.h"

/* Rows per INSERT: per row, SQLite's work per statement counts. */
#define BATCH 64
#define PIECE_COLUMNS 10

/* The indexes of map_pieces, by name and the SQL that makes them: this text, never what a
 * database's sqlite_master says, which a crafted file could end with statements of its own. */
static const struct {
	const char *name, *sql;
} piece_indexes[] = {
	{ "map_pieces_by_session", ANALYZER_MAP_PIECES_INDEX_SQL },
	/* report_live_mappings_view reads the pieces live at the end: few, found without a scan */
	{ "map_pieces_live", "CREATE INDEX IF NOT EXISTS map_pieces_live ON map_pieces(session_id)"
			     " WHERE unmapped_ns IS NULL" },
};
#define PIECE_INDEXES (sizeof(piece_indexes) / sizeof(piece_indexes[0]))

struct piece_writer {
	sqlite3 *db;
	int64_t sid;
	sqlite3_stmt *insert, *insert_batch; /* one row; BATCH rows */
	struct piece_row rows[BATCH];
	size_t nrows;
	bool dropped[PIECE_INDEXES]; /* piece_indexes set aside for the sweep */
};

/* Our indexes of map_pieces, dropped for the sweep (marked in dropped) and made again after it:
 * one sort per index instead of a B-tree descent per piece, far cheaper for millions of pieces.
 * SQLite drops nothing while another statement of the connection runs (a caller looping over
 * sessions): then the indexes stay, and the sweep is only slower; so does an index of map_pieces
 * that is not ours. */
static int drop_piece_indexes(sqlite3 *db, bool *dropped)
{
	sqlite3_stmt *st =
		itdb_prepare(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"
				 " AND tbl_name = 'map_pieces' AND name = ?1");
	char sql[96];

	if (!st) {
		log_error("computing map lifetimes: could not set the indexes of map_pieces aside");
		return -1;
	}
	for (size_t i = 0; i < PIECE_INDEXES; i++) {
		sqlite3_bind_text(st, 1, piece_indexes[i].name, -1, SQLITE_STATIC);
		dropped[i] = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
		sqlite3_reset(st);
		snprintf(sql, sizeof(sql), "DROP INDEX %s", piece_indexes[i].name);
		if (dropped[i] && sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			dropped[i] = false; /* kept: not to be made again */
	}
	sqlite3_finalize(st);
	return 0;
}

static int make_piece_indexes(sqlite3 *db, const bool *dropped)
{
	for (size_t i = 0; i < PIECE_INDEXES; i++)
		if (dropped[i] && itdb_exec(db, piece_indexes[i].sql, "indexing map pieces"))
			return -1;
	return 0;
}

/* INSERT of rows map_pieces rows, their values all parameters. OR FAIL: no statement journal
 * (a copy of the table's last pages per statement, tracer/event_writer.c says why it costs); on
 * a failure lifetimes_compute rolls its savepoint back, the rows this INSERT left with it. */
static sqlite3_stmt *prepare_insert(sqlite3 *db, size_t rows)
{
	static const char head[] =
		"INSERT OR FAIL INTO map_pieces(session_id, map_id, domain_ptr,"
		" iova, paddr, size_bytes, mapped_ns, unmapped_ns, unmap_id, end_reason) VALUES ";
	static const char row[] = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?),";
	char sql[sizeof(head) + BATCH * (sizeof(row) - 1)];
	size_t used = sizeof(head) - 1;

	memcpy(sql, head, used);
	for (size_t i = 0; i < rows; i++, used += sizeof(row) - 1)
		memcpy(sql + used, row, sizeof(row) - 1);
	sql[used - 1] = '\0'; /* the last comma */
	return itdb_prepare(db, sql);
}

/* Binds row r to the columns of st from parameter first on. */
static void bind_row(sqlite3_stmt *st, int first, int64_t sid, const struct piece_row *r)
{
	sqlite3_bind_int64(st, first, sid);
	sqlite3_bind_int64(st, first + 1, r->map_id);
	if (r->known)
		sqlite3_bind_int64(st, first + 2, r->domain);
	sqlite3_bind_int64(st, first + 3, r->iova);
	sqlite3_bind_int64(st, first + 4, r->paddr);
	sqlite3_bind_int64(st, first + 5, r->size);
	sqlite3_bind_int64(st, first + 6, r->mapped_ns);
	if (r->end_ns >= 0)
		sqlite3_bind_int64(st, first + 7, r->end_ns);
	if (r->unmap_id >= 0)
		sqlite3_bind_int64(st, first + 8, r->unmap_id);
	if (r->reason)
		sqlite3_bind_text(st, first + 9, r->reason, -1, SQLITE_STATIC);
}

/* Writes the rows waiting: BATCH at once, fewer one by one (the last ones). */
static int flush(struct piece_writer *s)
{
	int rc = 0;

	if (s->nrows == BATCH) {
		for (size_t i = 0; i < BATCH; i++)
			bind_row(s->insert_batch, 1 + (int)i * PIECE_COLUMNS, s->sid, &s->rows[i]);
		rc = itdb_step_done(s->insert_batch, "storing map pieces");
	} else {
		for (size_t i = 0; i < s->nrows && !rc; i++) {
			bind_row(s->insert, 1, s->sid, &s->rows[i]);
			rc = itdb_step_done(s->insert, "storing map pieces");
		}
	}
	s->nrows = 0;
	return rc;
}

/* 1 or 0, or -1 when the question failed (logged) */
static int has_pieces_table(sqlite3 *db)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
					    " AND name = 'map_pieces'");
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		sqlite3_finalize(st);
		return 1;
	}
	return itdb_finalize_read(st, rc, "computing map lifetimes") ? -1 : 0;
}

struct piece_writer *piece_writer_begin(sqlite3 *db, int64_t session_id)
{
	struct piece_writer *w = calloc(1, sizeof(*w));
	sqlite3_stmt *del = NULL;

	if (!w) {
		log_error("computing map lifetimes: out of memory");
		return NULL;
	}
	w->db = db;
	w->sid = session_id;
	switch (has_pieces_table(db)) {
	case 0:
		log_error("computing map lifetimes: the database lacks map_pieces (schema 7)");
		/* fall through */
	case -1:
		goto fail;
	}
	if (itdb_exec(db, piece_indexes[1].sql, "computing map lifetimes") ||
	    drop_piece_indexes(db, w->dropped))
		goto fail;
	del = itdb_prepare(db, "DELETE FROM map_pieces WHERE session_id = ?1");
	w->insert = prepare_insert(db, 1);
	w->insert_batch = prepare_insert(db, BATCH);
	if (!del || !w->insert || !w->insert_batch)
		goto fail;
	sqlite3_bind_int64(del, 1, session_id);
	if (itdb_step_done(del, "clearing map pieces"))
		goto fail;
	sqlite3_finalize(del);
	return w;
fail:
	sqlite3_finalize(del);
	piece_writer_free(w);
	return NULL;
}

int piece_writer_add(struct piece_writer *w, const struct piece_row *r)
{
	w->rows[w->nrows++] = *r;
	return w->nrows == BATCH ? flush(w) : 0;
}

int piece_writer_end(struct piece_writer *w)
{
	return flush(w) || make_piece_indexes(w->db, w->dropped) ? -1 : 0;
}

void piece_writer_free(struct piece_writer *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->insert);
	sqlite3_finalize(w->insert_batch);
	free(w);
}
