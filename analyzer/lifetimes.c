/* Lifetimes of mapped IOVA ranges (see lifetimes.h): the session's maps and unmaps read in time
 * order (two cursors over the by-time indexes, merged here), a live set per domain kept as an
 * array sorted by IOVA, and a map_pieces row written for every piece that ends, and for every
 * piece still live at the end. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/db.h"
#include "common/log.h"
#include "lifetimes.h"

struct piece {
	uint64_t iova, size, paddr;
	int64_t map_id, mapped_ns;
};

struct live {
	int64_t domain;
	bool known;		/* domain_ptr was not NULL */
	struct piece *p;	/* sorted by iova, none overlapping */
	size_t n, cap;
};

struct state {
	int64_t sid;
	sqlite3_stmt *insert;
	struct live *domains;
	size_t ndomains;
	uint64_t pieces;
};

/* One event: a map, or an unmap (paddr unused). */
struct event {
	bool unmap;
	int64_t id, ts_ns, domain;
	bool known;
	uint64_t iova, paddr, size;
};

static struct live *live_of(struct state *s, const struct event *e)
{
	struct live *more;

	for (size_t i = 0; i < s->ndomains; i++)
		if (s->domains[i].known == e->known && (!e->known || s->domains[i].domain == e->domain))
			return &s->domains[i];
	more = realloc(s->domains, (s->ndomains + 1) * sizeof(*more));
	if (!more)
		return NULL;
	s->domains = more;
	more[s->ndomains] = (struct live){ .domain = e->domain, .known = e->known };
	return &more[s->ndomains++];
}

/* Writes the piece [iova, + size) of p, ended at end_ns by unmap_id (or by reason), or live at the
 * end of the session (end_ns < 0). */
static int emit(struct state *s, const struct live *l, const struct piece *p, uint64_t iova,
		uint64_t size, int64_t end_ns, int64_t unmap_id, const char *reason)
{
	sqlite3_stmt *st = s->insert;

	sqlite3_bind_int64(st, 1, s->sid);
	sqlite3_bind_int64(st, 2, p->map_id);
	if (l->known)
		sqlite3_bind_int64(st, 3, l->domain);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, (int64_t)iova);
	sqlite3_bind_int64(st, 5, (int64_t)(p->paddr + (iova - p->iova)));
	sqlite3_bind_int64(st, 6, (int64_t)size);
	sqlite3_bind_int64(st, 7, p->mapped_ns);
	if (end_ns >= 0)
		sqlite3_bind_int64(st, 8, end_ns);
	else
		sqlite3_bind_null(st, 8);
	if (unmap_id >= 0)
		sqlite3_bind_int64(st, 9, unmap_id);
	else
		sqlite3_bind_null(st, 9);
	itdb_bind_text(st, 10, reason);
	s->pieces++;
	return itdb_step_done(st, "storing map pieces");
}

/* First piece that ends after addr. */
static size_t first_ending_after(const struct live *l, uint64_t addr)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->p[mid].iova + l->p[mid].size > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int reserve(struct live *l, size_t extra)
{
	struct piece *more;
	size_t cap;

	if (l->n + extra <= l->cap)
		return 0;
	cap = l->cap ? l->cap * 2 : 64;
	while (cap < l->n + extra)
		cap *= 2;
	more = realloc(l->p, cap * sizeof(*more));
	if (!more)
		return -1;
	l->p = more;
	l->cap = cap;
	return 0;
}

/* Ends what the live set holds of [start, end) at e's time, by e when it is an unmap, else as
 * 'remapped'. The parts of pieces outside the range live on. Returns the index where the range
 * was, or -1. */
static long cut(struct state *s, struct live *l, uint64_t start, uint64_t end,
		const struct event *e)
{
	size_t i = first_ending_after(l, start), j = i;
	struct piece keep[2];
	size_t nkeep = 0;

	while (j < l->n && l->p[j].iova < end)
		j++;
	for (size_t k = i; k < j; k++) {
		const struct piece *p = &l->p[k];
		uint64_t a = p->iova > start ? p->iova : start;
		uint64_t b = p->iova + p->size < end ? p->iova + p->size : end;

		if (emit(s, l, p, a, b - a, e->ts_ns, e->unmap ? e->id : -1,
			 e->unmap ? "unmap" : "remapped"))
			return -1;
	}
	if (i < j && l->p[i].iova < start) {
		keep[nkeep] = l->p[i];
		keep[nkeep++].size = start - l->p[i].iova;
	}
	if (i < j && l->p[j - 1].iova + l->p[j - 1].size > end) {
		struct piece right = l->p[j - 1];

		right.paddr += end - right.iova;
		right.size = right.iova + right.size - end;
		right.iova = end;
		keep[nkeep++] = right;
	}
	if (reserve(l, nkeep))
		return -1;
	if (l->n > j)
		memmove(&l->p[i + nkeep], &l->p[j], (l->n - j) * sizeof(*l->p));
	l->n = l->n - (j - i) + nkeep;
	if (nkeep)
		memcpy(&l->p[i], keep, nkeep * sizeof(*keep));
	/* where a piece starting at start would go */
	return (long)(i + (nkeep && keep[0].iova < start ? 1 : 0));
}

static int apply(struct state *s, const struct event *e)
{
	struct live *l = live_of(s, e);
	long at;

	if (!l)
		return -1;
	if (!e->size)
		return 0;
	at = cut(s, l, e->iova, e->iova + e->size, e);
	if (at < 0 || e->unmap)
		return at < 0 ? -1 : 0;
	if (reserve(l, 1))
		return -1;
	if (l->n > (size_t)at)
		memmove(&l->p[at + 1], &l->p[at], (l->n - (size_t)at) * sizeof(*l->p));
	l->p[at] = (struct piece){ .iova = e->iova, .size = e->size, .paddr = e->paddr,
				   .map_id = e->id, .mapped_ns = e->ts_ns };
	l->n++;
	return 0;
}

/* Reads the next row of st into e; 0 at the end, 1 with a row, -1 on error. */
static int next(sqlite3_stmt *st, bool unmap, struct event *e)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return -1;
	*e = (struct event){
		.unmap = unmap, .id = sqlite3_column_int64(st, 0), .ts_ns = sqlite3_column_int64(st, 1),
		.known = sqlite3_column_type(st, 2) != SQLITE_NULL,
		.domain = sqlite3_column_int64(st, 2), .iova = (uint64_t)sqlite3_column_int64(st, 3),
		.paddr = (uint64_t)sqlite3_column_int64(st, 4),
		.size = (uint64_t)sqlite3_column_int64(st, 5) };
	return 1;
}

static int sweep(sqlite3 *db, struct state *s)
{
	sqlite3_stmt *maps = itdb_prepare(db,
		"SELECT map_id, ts_ns, domain_ptr, iova, paddr, size_bytes FROM maps"
		" WHERE session_id = ?1 ORDER BY ts_ns, map_id");
	sqlite3_stmt *unmaps = itdb_prepare(db,
		"SELECT unmap_id, ts_ns, domain_ptr, iova, 0, unmapped_bytes FROM unmaps"
		" WHERE session_id = ?1 ORDER BY ts_ns, unmap_id");
	struct event m, u;
	int hm = -1, hu = -1, rc = -1;

	if (!maps || !unmaps)
		goto cleanup;
	sqlite3_bind_int64(maps, 1, s->sid);
	sqlite3_bind_int64(unmaps, 1, s->sid);
	hm = next(maps, false, &m);
	hu = next(unmaps, true, &u);
	while (hm > 0 || hu > 0) {
		/* at equal times the map first: a range is mapped before it is unmapped */
		bool take_map = hm > 0 && (hu <= 0 || m.ts_ns <= u.ts_ns);

		if (apply(s, take_map ? &m : &u))
			goto cleanup;
		if (take_map)
			hm = next(maps, false, &m);
		else
			hu = next(unmaps, true, &u);
	}
	if (hm < 0 || hu < 0) {
		log_error("reading the session's maps and unmaps: %s", sqlite3_errmsg(db));
		goto cleanup;
	}
	for (size_t d = 0; d < s->ndomains; d++)
		for (size_t i = 0; i < s->domains[d].n; i++) {
			const struct piece *p = &s->domains[d].p[i];

			if (emit(s, &s->domains[d], p, p->iova, p->size, -1, -1, NULL))
				goto cleanup;
		}
	rc = 0;
cleanup:
	sqlite3_finalize(maps);
	sqlite3_finalize(unmaps);
	return rc;
}

static int note_done(sqlite3 *db, int64_t sid, uint64_t pieces)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"INSERT OR REPLACE INTO map_pieces_state(session_id, maps, unmaps, pieces)"
		" VALUES (?1, (SELECT COUNT(*) FROM maps WHERE session_id = ?1),"
		" (SELECT COUNT(*) FROM unmaps WHERE session_id = ?1), ?2)");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	sqlite3_bind_int64(st, 2, (int64_t)pieces);
	rc = itdb_step_done(st, "noting the map pieces");
	sqlite3_finalize(st);
	return rc;
}

int lifetimes_compute(sqlite3 *db, int64_t session_id)
{
	struct state s = { .sid = session_id };
	sqlite3_stmt *del = NULL;
	int rc = -1;

	/* a savepoint, not BEGIN: this also runs inside a schema migration's transaction */
	if (itdb_exec(db, "SAVEPOINT lifetimes", "computing map lifetimes"))
		return -1;
	del = itdb_prepare(db, "DELETE FROM map_pieces WHERE session_id = ?1");
	s.insert = itdb_prepare(db,
		"INSERT INTO map_pieces(session_id, map_id, domain_ptr, iova, paddr, size_bytes,"
		" mapped_ns, unmapped_ns, unmap_id, end_reason)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
	if (!del || !s.insert)
		goto cleanup;
	sqlite3_bind_int64(del, 1, session_id);
	if (itdb_step_done(del, "clearing map pieces") || sweep(db, &s) ||
	    note_done(db, session_id, s.pieces))
		goto cleanup;
	rc = 0;
cleanup:
	if (rc) {
		if (!s.insert || !del)
			log_error("computing map lifetimes: the database lacks map_pieces (schema 7)");
		itdb_exec(db, "ROLLBACK TO lifetimes", "computing map lifetimes");
	}
	itdb_exec(db, "RELEASE lifetimes", "computing map lifetimes");
	sqlite3_finalize(del);
	sqlite3_finalize(s.insert);
	for (size_t d = 0; d < s.ndomains; d++)
		free(s.domains[d].p);
	free(s.domains);
	return rc;
}

int lifetimes_ensure(sqlite3 *db, int64_t session_id)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"SELECT 1 FROM map_pieces_state WHERE session_id = ?1"
		" AND maps = (SELECT COUNT(*) FROM maps WHERE session_id = ?1)"
		" AND unmaps = (SELECT COUNT(*) FROM unmaps WHERE session_id = ?1)");
	int done;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	done = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return done ? 0 : lifetimes_compute(db, session_id);
}
