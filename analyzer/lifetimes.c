/* Lifetimes of mapped IOVA ranges (see lifetimes.h): the session's maps (with their driver pages)
 * and unmaps read in time order (two cursors over the by-time indexes, merged here), a live set
 * per domain kept as an array sorted by IOVA, and a map_pieces row written for every piece that
 * ends, and for every piece still live at the end (through piece_writer.h); the same sweep
 * feeds the session's summaries (summary.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/db.h"
#include "common/log.h"
#include "analyzer/lifetimes.h"
#include "analyzer/piece_writer.h"
#include "analyzer/summary.h"

struct piece {
	uint64_t iova, size, paddr;
	int64_t map_id, mapped_ns;
};

struct live {
	int64_t domain;
	bool known; /* domain_ptr was not NULL */
	struct piece *p; /* sorted by iova, none overlapping */
	size_t n, cap;
};

struct state {
	int64_t sid;
	struct piece_writer *out;
	struct summary *sum;
	struct live *domains;
	size_t ndomains;
	uint64_t pieces;
};

/* One event: a map with its driver pages, or an unmap (paddr and pages unused). */
struct event {
	bool unmap;
	int64_t id, ts_ns, domain;
	bool known;
	uint64_t iova, paddr, size;
	const struct summary_page *pages;
	size_t npages;
};

/* The maps of a session with their driver pages, one row per page (or one without): a map's
 * rows are read together, the row after them kept for the next map. */
struct map_reader {
	sqlite3_stmt *st;
	int pending; /* 1: st holds the next map's first row; 0: done; -1: failed */
	struct summary_page *pages;
	size_t npages, cap;
	char *text; /* the pages' sources, one after another */
	size_t *text_at, used, text_cap;
};

static struct live *live_of(struct state *s, const struct event *e)
{
	struct live *more;

	for (size_t i = 0; i < s->ndomains; i++)
		if (s->domains[i].known == e->known &&
		    (!e->known || s->domains[i].domain == e->domain))
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
	struct piece_row r = { .map_id = p->map_id,
			       .domain = l->domain,
			       .known = l->known,
			       .iova = (int64_t)iova,
			       .paddr = (int64_t)(p->paddr + (iova - p->iova)),
			       .size = (int64_t)size,
			       .mapped_ns = p->mapped_ns,
			       .end_ns = end_ns,
			       .unmap_id = unmap_id,
			       .reason = reason };

	s->pieces++;
	if (end_ns >= 0 ? summary_change(s->sum, l->known, l->domain, end_ns, -(int64_t)size,
					 unmap_id < 0) :
			  summary_live_piece(s->sum, l->known, l->domain, p->map_id))
		return -1;
	return piece_writer_add(s->out, &r);
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
	if (e->unmap ? summary_unmap(s->sum, e->known, e->domain, (int64_t)e->size) :
		       summary_map(s->sum, e->known, e->domain, e->id, (int64_t)e->iova,
				   (int64_t)e->paddr, (int64_t)e->size, e->pages, e->npages))
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
	l->p[at] = (struct piece){ .iova = e->iova,
				   .size = e->size,
				   .paddr = e->paddr,
				   .map_id = e->id,
				   .mapped_ns = e->ts_ns };
	l->n++;
	return summary_change(s->sum, l->known, l->domain, e->ts_ns, (int64_t)e->size, false);
}

/* Reads the next row of st into e; 0 at the end, 1 with a row, -1 on error. */
static int next(sqlite3_stmt *st, bool unmap, struct event *e)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return -1;
	*e = (struct event){ .unmap = unmap,
			     .id = sqlite3_column_int64(st, 0),
			     .ts_ns = sqlite3_column_int64(st, 1),
			     .known = sqlite3_column_type(st, 2) != SQLITE_NULL,
			     .domain = sqlite3_column_int64(st, 2),
			     .iova = (uint64_t)sqlite3_column_int64(st, 3),
			     .paddr = (uint64_t)sqlite3_column_int64(st, 4),
			     .size = (uint64_t)sqlite3_column_int64(st, 5) };
	return 1;
}

/* Keeps the page of the reader's current row, if it has one. */
static int keep_page(struct map_reader *r)
{
	const char *source;
	size_t len;

	if (sqlite3_column_type(r->st, 6) == SQLITE_NULL)
		return 0;
	source = (const char *)sqlite3_column_text(r->st, 8);
	len = strlen(source ? source : "") + 1;
	if (r->npages == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct summary_page *more = realloc(r->pages, cap * sizeof(*more));
		size_t *at = more ? realloc(r->text_at, cap * sizeof(*at)) : NULL;

		if (more)
			r->pages = more;
		if (!at)
			return -1;
		r->text_at = at;
		r->cap = cap;
	}
	while (r->used + len > r->text_cap) {
		size_t cap = r->text_cap ? 2 * r->text_cap : 256;
		char *more = realloc(r->text, cap);

		if (!more)
			return -1;
		r->text = more;
		r->text_cap = cap;
	}
	memcpy(r->text + r->used, source ? source : "", len);
	r->text_at[r->npages] = r->used;
	r->used += len;
	r->pages[r->npages++] =
		(struct summary_page){ .pgsize_bytes = sqlite3_column_int64(r->st, 6),
				       .pgcount = sqlite3_column_int64(r->st, 7) };
	return 0;
}

/* Reads the next map with its pages into e; 0 at the end, 1 with a map, -1 on error. */
static int next_map(struct map_reader *r, struct event *e)
{
	int rc;

	if (r->pending <= 0)
		return r->pending;
	*e = (struct event){ .id = sqlite3_column_int64(r->st, 0),
			     .ts_ns = sqlite3_column_int64(r->st, 1),
			     .known = sqlite3_column_type(r->st, 2) != SQLITE_NULL,
			     .domain = sqlite3_column_int64(r->st, 2),
			     .iova = (uint64_t)sqlite3_column_int64(r->st, 3),
			     .paddr = (uint64_t)sqlite3_column_int64(r->st, 4),
			     .size = (uint64_t)sqlite3_column_int64(r->st, 5) };
	r->npages = r->used = 0;
	if (keep_page(r))
		return -1;
	while ((rc = sqlite3_step(r->st)) == SQLITE_ROW && sqlite3_column_int64(r->st, 0) == e->id)
		if (keep_page(r))
			return -1;
	r->pending = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
	for (size_t i = 0; i < r->npages; i++)
		r->pages[i].source = r->text + r->text_at[i];
	e->pages = r->pages;
	e->npages = r->npages;
	return 1;
}

static int sweep(sqlite3 *db, struct state *s)
{
	/* a map's driver rows come together: the join runs per map, in the index's order */
	struct map_reader mr = {
		.st = itdb_prepare(db,
				   "SELECT m.map_id, m.ts_ns, m.domain_ptr, m.iova, m.paddr, m.size_bytes,"
				   " d.pgsize_bytes, d.pgcount, d.source FROM maps m"
				   " LEFT JOIN driver_maps d ON d.map_id = m.map_id AND d.op = 'map'"
				   " WHERE m.session_id = ?1 ORDER BY m.ts_ns, m.map_id")
	};
	sqlite3_stmt *maps = mr.st;
	sqlite3_stmt *unmaps =
		itdb_prepare(db,
			     "SELECT unmap_id, ts_ns, domain_ptr, iova, 0, unmapped_bytes FROM unmaps"
			     " WHERE session_id = ?1 ORDER BY ts_ns, unmap_id");
	struct event m, u;
	int hm = -1, hu = -1, rc = -1;

	if (!maps || !unmaps)
		goto cleanup;
	sqlite3_bind_int64(maps, 1, s->sid);
	sqlite3_bind_int64(unmaps, 1, s->sid);
	rc = sqlite3_step(maps);
	mr.pending = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
	rc = -1;
	hm = next_map(&mr, &m);
	hu = next(unmaps, true, &u);
	while (hm > 0 || hu > 0) {
		/* at equal times the map first: a range is mapped before it is unmapped */
		bool take_map = hm > 0 && (hu <= 0 || m.ts_ns <= u.ts_ns);

		if (apply(s, take_map ? &m : &u))
			goto cleanup;
		if (take_map)
			hm = next_map(&mr, &m);
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
	free(mr.pages);
	free(mr.text_at);
	free(mr.text);
	return rc;
}

static int note_done(sqlite3 *db, int64_t sid, uint64_t pieces)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
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
	int rc = -1;

	/* a savepoint, not BEGIN: it nests in a caller's transaction, if one is open */
	if (itdb_exec(db, "SAVEPOINT lifetimes", "computing map lifetimes"))
		return -1;
	s.out = piece_writer_begin(db, session_id);
	s.sum = s.out ? summary_begin(db, session_id) : NULL;
	if (!s.sum || sweep(db, &s) || piece_writer_end(s.out) || summary_write(db, s.sum) ||
	    note_done(db, session_id, s.pieces))
		goto cleanup;
	rc = 0;
cleanup:
	if (rc)
		itdb_exec(db, "ROLLBACK TO lifetimes", "computing map lifetimes");
	itdb_exec(db, "RELEASE lifetimes", "computing map lifetimes");
	piece_writer_free(s.out);
	summary_free(s.sum);
	for (size_t d = 0; d < s.ndomains; d++)
		free(s.domains[d].p);
	free(s.domains);
	return rc;
}

int lifetimes_ensure(sqlite3 *db, int64_t session_id)
{
	sqlite3_stmt *st;
	int done;

	/* a file migrated from before the summaries (version 9) has map_pieces but none of them */
	st = itdb_prepare(db,
			  "SELECT 1 FROM map_pieces_state p JOIN session_summary s USING (session_id)"
			  " WHERE session_id = ?1"
			  " AND p.maps = (SELECT COUNT(*) FROM maps WHERE session_id = ?1)"
			  " AND p.unmaps = (SELECT COUNT(*) FROM unmaps WHERE session_id = ?1)"
			  " AND s.maps = p.maps AND s.unmaps = p.unmaps");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	done = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return done ? 0 : lifetimes_compute(db, session_id);
}
