/* Per-session summaries of maps and unmaps (see summary.h): counters per domain, a call-size
 * class table per domain, page sizes per domain and source, and a hash table (common/hash_table.h)
 * of map groups, written as rows when the sweep ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/db.h"
#include "common/hash_table.h"
#include "common/log.h"
#include "analyzer/summary.h"

/* Call-size classes: 2^k for k in 0..62 (as report_call_sizes_view's powers of two), then size
 * 0 and below (class 0), then sizes above 2^62 (no class, NULL). */
#define CLASS_ZERO 63
#define CLASS_NONE 64
#define CLASSES 65

/* What audit align and audit bar tell maps apart by (see summary.h, alike_maps). */
struct group_key {
	int64_t domain, size, iova, paddr, entries, written;
	int mix; /* interned composition of pages of several sizes, or -1 */
	int source; /* interned pages_source, or -1 (no pages) */
	bool known, in_bar;
};

struct group {
	struct group_key key;
	int64_t maps, first_map_id, iova, paddr;
};

struct dom {
	int64_t domain;
	bool known;
	int64_t maps, map_bytes, unmaps, unmapped_bytes, remapped_bytes;
	int64_t live, peak, last_ts;
	bool changed;
	int64_t *live_ids;
	size_t nlive, live_cap;
	int64_t class_maps[CLASSES], class_bytes[CLASSES];
};

struct page_row {
	int64_t domain, pgsize, pages, bytes;
	int source;
	bool known;
};

struct bar_range {
	int64_t start, size;
};

struct summary {
	int64_t sid, maps, unmaps;
	int64_t live, peak, last_ts;
	bool changed;
	struct dom *doms;
	size_t ndoms;
	struct page_row *pages;
	size_t npages;
	char **strs; /* interned texts: sources, page mixes */
	size_t nstrs;
	struct hash_table groups; /* struct group by its key */
	struct bar_range *bars;
	size_t nbars;
};

static int load_bars(sqlite3 *db, struct summary *s)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT start_addr, size_bytes FROM bars"
					    " WHERE session_id = ?1");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, s->sid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct bar_range *more = realloc(s->bars, (s->nbars + 1) * sizeof(*more));

		if (!more)
			break;
		s->bars = more;
		s->bars[s->nbars++] = (struct bar_range){ sqlite3_column_int64(st, 0),
							  sqlite3_column_int64(st, 1) };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_error("summarizing the session: reading its BARs failed");
		return -1;
	}
	return 0;
}

struct summary *summary_begin(sqlite3 *db, int64_t sid)
{
	struct summary *s = calloc(1, sizeof(*s));

	if (!s) {
		log_error("summarizing the session: out of memory");
		return NULL;
	}
	s->sid = sid;
	if (hash_table_init(&s->groups, sizeof(struct group), sizeof(struct group_key), NULL,
			    HASH_TABLE_MAX_ENTRIES, 512)) {
		log_error("summarizing the session: out of memory");
		summary_free(s);
		return NULL;
	}
	if (load_bars(db, s)) {
		summary_free(s);
		return NULL;
	}
	return s;
}

void summary_free(struct summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndoms; i++)
		free(s->doms[i].live_ids);
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->doms);
	free(s->pages);
	free(s->strs);
	hash_table_free(&s->groups);
	free(s->bars);
	free(s);
}

static struct dom *dom_of(struct summary *s, bool known, int64_t domain)
{
	struct dom *more;

	for (size_t i = 0; i < s->ndoms; i++)
		if (s->doms[i].known == known && (!known || s->doms[i].domain == domain))
			return &s->doms[i];
	more = realloc(s->doms, (s->ndoms + 1) * sizeof(*more));
	if (!more) {
		log_error("summarizing the session: out of memory");
		return NULL;
	}
	s->doms = more;
	more[s->ndoms] = (struct dom){ .domain = known ? domain : 0, .known = known };
	return &more[s->ndoms++];
}

/* The index of text among the interned ones (added when new), or -1 (out of memory). */
static int intern(struct summary *s, const char *text)
{
	char **more;

	for (size_t i = 0; i < s->nstrs; i++)
		if (!strcmp(s->strs[i], text))
			return (int)i;
	more = realloc(s->strs, (s->nstrs + 1) * sizeof(*more));
	if (!more)
		return -1;
	s->strs = more;
	s->strs[s->nstrs] = strdup(text);
	return s->strs[s->nstrs] ? (int)s->nstrs++ : -1;
}

static int call_class(int64_t size)
{
	int k;

	if (size <= 0)
		return CLASS_ZERO;
	k = size == 1 ? 0 : 64 - __builtin_clzll((uint64_t)size - 1);
	return k > 62 ? CLASS_NONE : k;
}

static int add_pages(struct summary *s, bool known, int64_t domain, int64_t pgsize, int64_t pgcount,
		     int source)
{
	struct page_row *more;

	for (size_t i = 0; i < s->npages; i++) {
		struct page_row *p = &s->pages[i];

		if (p->known == known && (!known || p->domain == domain) && p->pgsize == pgsize &&
		    p->source == source) {
			p->pages += pgcount;
			p->bytes += pgsize * pgcount;
			return 0;
		}
	}
	more = realloc(s->pages, (s->npages + 1) * sizeof(*more));
	if (!more)
		return -1;
	s->pages = more;
	more[s->npages++] = (struct page_row){ .domain = known ? domain : 0,
					       .pgsize = pgsize,
					       .pages = pgcount,
					       .bytes = pgsize * pgcount,
					       .source = source,
					       .known = known };
	return 0;
}

static bool in_a_bar(const struct summary *s, int64_t paddr)
{
	/* wider than the views' test (every BAR row, however odd): a map in doubt keeps its exact
	 * address in its group, which the views then place as they would the map itself */
	for (size_t i = 0; i < s->nbars; i++)
		if ((__int128)paddr >= s->bars[i].start &&
		    (__int128)paddr < (__int128)s->bars[i].start + s->bars[i].size)
			return true;
	return false;
}

static int add_to_group(struct summary *s, const struct group_key *k, int64_t map_id, int64_t iova,
			int64_t paddr)
{
	struct group *g;

	switch (hash_table_insert(&s->groups, hash_table_hash_bytes(k, sizeof(*k)), k,
				  (void **)&g)) {
	case HASH_TABLE_ADDED: /* its key copied as bytes, the rest zeroed */
	case HASH_TABLE_FOUND:
		if (!g->maps++ || map_id < g->first_map_id) {
			g->first_map_id = map_id;
			g->iova = iova;
			g->paddr = paddr;
		}
		return 0;
	default:
		return -1;
	}
}

/* The map's pages as audit align groups them: their total, largest size and source, and, where
 * they have several sizes, their composition (summed per size, largest first) interned. */
static int pages_key(struct summary *s, const struct summary_page *pages, size_t npages,
		     struct group_key *k)
{
	const char *lo = NULL, *hi = NULL;
	int64_t min_size = 0;
	char mix[512];
	size_t used = 0;

	k->mix = -1;
	k->source = -1;
	if (!npages)
		return 0;
	for (size_t i = 0; i < npages; i++) {
		const struct summary_page *p = &pages[i];

		k->entries += p->pgcount;
		if (!i || p->pgsize_bytes > k->written)
			k->written = p->pgsize_bytes;
		if (!i || p->pgsize_bytes < min_size)
			min_size = p->pgsize_bytes;
		if (!lo || strcmp(p->source, lo) < 0)
			lo = p->source;
		if (!hi || strcmp(p->source, hi) > 0)
			hi = p->source;
	}
	k->source = intern(s, strcmp(lo, hi) ? "observed+derived" : lo);
	if (k->source < 0)
		return -1;
	if (min_size == k->written)
		return 0;
	/* sizes from the largest down, each summed: selection over the few rows of one map */
	for (int64_t size = k->written, next; size; size = next) {
		int64_t count = 0;

		next = 0;
		for (size_t i = 0; i < npages; i++) {
			if (pages[i].pgsize_bytes == size)
				count += pages[i].pgcount;
			else if (pages[i].pgsize_bytes < size && pages[i].pgsize_bytes > next)
				next = pages[i].pgsize_bytes;
		}
		if (!next && size != min_size)
			next = min_size;
		used += (size_t)snprintf(mix + used, used < sizeof(mix) ? sizeof(mix) - used : 0,
					 "%lld x %lld;", (long long)size, (long long)count);
		if (size == min_size)
			break;
	}
	k->mix = used < sizeof(mix) ? intern(s, mix) : -1;
	return k->mix < 0 ? -1 : 0;
}

int summary_map(struct summary *s, bool known, int64_t domain, int64_t map_id, int64_t iova,
		int64_t paddr, int64_t size, const struct summary_page *pages, size_t npages)
{
	struct dom *d = dom_of(s, known, domain);
	struct group_key k;
	int c = call_class(size);
	uint64_t span;

	if (!d)
		return -1;
	s->maps++;
	d->maps++;
	d->map_bytes += size;
	d->class_maps[c]++;
	d->class_bytes[c] += size;
	memset(&k, 0, sizeof(k)); /* the key is hashed and compared as bytes */
	k.known = known;
	k.domain = known ? domain : 0;
	k.size = size;
	k.in_bar = in_a_bar(s, paddr);
	/* the offsets within the largest power of two not above the size (at least 4 KiB): finer
	 * than the page the views cap alignments at, so the views can group these further; a map
	 * into a BAR keeps its exact paddr, the window audit bar lists */
	span = size < 8192 ? 4096 : 1ull << (63 - __builtin_clzll((uint64_t)size));
	k.iova = (int64_t)((uint64_t)iova & (span - 1));
	k.paddr = k.in_bar ? paddr : (int64_t)((uint64_t)paddr & (span - 1));
	if (pages_key(s, pages, npages, &k))
		goto oom;
	for (size_t i = 0; i < npages; i++) {
		int source = intern(s, pages[i].source);

		if (source < 0 ||
		    add_pages(s, known, domain, pages[i].pgsize_bytes, pages[i].pgcount, source))
			goto oom;
	}
	if (add_to_group(s, &k, map_id, iova, paddr))
		goto oom;
	return 0;
oom:
	log_error("summarizing the session: out of memory");
	return -1;
}

int summary_unmap(struct summary *s, bool known, int64_t domain, int64_t unmapped_bytes)
{
	struct dom *d = dom_of(s, known, domain);

	if (!d)
		return -1;
	s->unmaps++;
	d->unmaps++;
	d->unmapped_bytes += unmapped_bytes;
	return 0;
}

/* As live_bytes_view: the live bytes after all changes at one time, the peak their largest. */
static void step(int64_t *live, int64_t *peak, int64_t *last_ts, bool *changed, int64_t ts,
		 int64_t delta)
{
	if (*changed && ts != *last_ts && *live > *peak)
		*peak = *live;
	*live += delta;
	*last_ts = ts;
	*changed = true;
}

int summary_change(struct summary *s, bool known, int64_t domain, int64_t ts_ns, int64_t delta,
		   bool remapped)
{
	struct dom *d = dom_of(s, known, domain);

	if (!d)
		return -1;
	step(&d->live, &d->peak, &d->last_ts, &d->changed, ts_ns, delta);
	step(&s->live, &s->peak, &s->last_ts, &s->changed, ts_ns, delta);
	if (remapped)
		d->remapped_bytes -= delta;
	return 0;
}

int summary_live_piece(struct summary *s, bool known, int64_t domain, int64_t map_id)
{
	struct dom *d = dom_of(s, known, domain);

	if (!d)
		return -1;
	if (d->nlive == d->live_cap) {
		size_t cap = d->live_cap ? 2 * d->live_cap : 64;
		int64_t *more = realloc(d->live_ids, cap * sizeof(*more));

		if (!more) {
			log_error("summarizing the session: out of memory");
			return -1;
		}
		d->live_ids = more;
		d->live_cap = cap;
	}
	d->live_ids[d->nlive++] = map_id;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static size_t distinct_ids(int64_t *ids, size_t n)
{
	size_t count = 0;

	if (!n)
		return 0;
	qsort(ids, n, sizeof(*ids), cmp_id);
	for (size_t i = 0; i < n; i++)
		count += !i || ids[i] != ids[i - 1];
	return count;
}

static void bind_domain(sqlite3_stmt *st, int col, bool known, int64_t domain)
{
	if (known)
		sqlite3_bind_int64(st, col, domain);
	else
		sqlite3_bind_null(st, col);
}

static int write_domains(sqlite3_stmt *st, struct summary *s)
{
	for (size_t i = 0; i < s->ndoms; i++) {
		struct dom *d = &s->doms[i];

		if (d->changed && d->live > d->peak)
			d->peak = d->live;
		sqlite3_bind_int64(st, 1, s->sid);
		bind_domain(st, 2, d->known, d->domain);
		sqlite3_bind_int64(st, 3, d->maps);
		sqlite3_bind_int64(st, 4, d->map_bytes);
		sqlite3_bind_int64(st, 5, d->unmaps);
		sqlite3_bind_int64(st, 6, d->unmapped_bytes);
		sqlite3_bind_int64(st, 7, d->peak);
		sqlite3_bind_int64(st, 8, d->live);
		sqlite3_bind_int64(st, 9, (int64_t)distinct_ids(d->live_ids, d->nlive));
		sqlite3_bind_int64(st, 10, d->remapped_bytes);
		if (itdb_step_done(st, "storing the session summary"))
			return -1;
	}
	return 0;
}

static int write_classes(sqlite3_stmt *st, const struct summary *s)
{
	for (size_t i = 0; i < s->ndoms; i++)
		for (int c = 0; c < CLASSES; c++) {
			const struct dom *d = &s->doms[i];

			if (!d->class_maps[c])
				continue;
			sqlite3_bind_int64(st, 1, s->sid);
			bind_domain(st, 2, d->known, d->domain);
			if (c == CLASS_NONE)
				sqlite3_bind_null(st, 3);
			else
				sqlite3_bind_int64(st, 3, c == CLASS_ZERO ? 0 : (int64_t)1 << c);
			sqlite3_bind_int64(st, 4, d->class_maps[c]);
			sqlite3_bind_int64(st, 5, d->class_bytes[c]);
			if (itdb_step_done(st, "storing the session summary"))
				return -1;
		}
	return 0;
}

static int write_pages(sqlite3_stmt *st, const struct summary *s)
{
	for (size_t i = 0; i < s->npages; i++) {
		const struct page_row *p = &s->pages[i];

		sqlite3_bind_int64(st, 1, s->sid);
		bind_domain(st, 2, p->known, p->domain);
		sqlite3_bind_int64(st, 3, p->pgsize);
		sqlite3_bind_text(st, 4, s->strs[p->source], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, p->pages);
		sqlite3_bind_int64(st, 6, p->bytes);
		if (itdb_step_done(st, "storing the session summary"))
			return -1;
	}
	return 0;
}

static int write_groups(sqlite3_stmt *st, const struct summary *s)
{
	const struct group *g;
	size_t pos = 0;

	while ((g = hash_table_next(&s->groups, &pos))) {
		sqlite3_bind_int64(st, 1, s->sid);
		bind_domain(st, 2, g->key.known, g->key.domain);
		sqlite3_bind_int64(st, 3, g->key.size);
		sqlite3_bind_int(st, 4, g->key.in_bar);
		itdb_bind_text(st, 5, g->key.mix >= 0 ? s->strs[g->key.mix] : NULL);
		if (g->key.source >= 0) {
			sqlite3_bind_text(st, 6, s->strs[g->key.source], -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 7, g->key.entries);
			sqlite3_bind_int64(st, 8, g->key.written);
		} else {
			sqlite3_bind_null(st, 6);
			sqlite3_bind_null(st, 7);
			sqlite3_bind_null(st, 8);
		}
		sqlite3_bind_int64(st, 9, g->maps);
		sqlite3_bind_int64(st, 10, g->first_map_id);
		sqlite3_bind_int64(st, 11, g->iova);
		sqlite3_bind_int64(st, 12, g->paddr);
		if (itdb_step_done(st, "storing the session summary"))
			return -1;
	}
	return 0;
}

static const char *const delete_sql[] = {
	"DELETE FROM session_summary WHERE session_id = ?1",
	"DELETE FROM domain_summary WHERE session_id = ?1",
	"DELETE FROM call_size_summary WHERE session_id = ?1",
	"DELETE FROM page_size_summary WHERE session_id = ?1",
	"DELETE FROM alike_maps WHERE session_id = ?1",
};

static const char *const insert_sql[] = {
	"INSERT INTO session_summary(session_id, maps, unmaps, peak_live_bytes)"
	" VALUES (?1, ?2, ?3, ?4)",
	"INSERT INTO domain_summary(session_id, domain_ptr, maps, map_bytes, unmaps,"
	" unmapped_bytes, peak_live_bytes, end_live_bytes, live_maps, remapped_bytes)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	"INSERT INTO call_size_summary(session_id, domain_ptr, call_size_bytes, maps, map_bytes)"
	" VALUES (?1, ?2, ?3, ?4, ?5)",
	"INSERT INTO page_size_summary(session_id, domain_ptr, pgsize_bytes, source, pages,"
	" map_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO alike_maps(session_id, domain_ptr, size_bytes, in_bar, page_mix,"
	" pages_source, entries, written_page_bytes, maps, first_map_id, iova, paddr)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
};

int summary_write(sqlite3 *db, struct summary *s)
{
	sqlite3_stmt *st[5] = { NULL };
	int rc = -1;

	if (s->changed && s->live > s->peak)
		s->peak = s->live;
	for (int i = 0; i < 5; i++) {
		sqlite3_stmt *del = itdb_prepare(db, delete_sql[i]);

		if (!del)
			goto cleanup;
		sqlite3_bind_int64(del, 1, s->sid);
		rc = itdb_step_done(del, "clearing the session summary");
		sqlite3_finalize(del);
		if (rc)
			goto cleanup;
		rc = -1;
		st[i] = itdb_prepare(db, insert_sql[i]);
		if (!st[i])
			goto cleanup;
	}
	sqlite3_bind_int64(st[0], 1, s->sid);
	sqlite3_bind_int64(st[0], 2, s->maps);
	sqlite3_bind_int64(st[0], 3, s->unmaps);
	sqlite3_bind_int64(st[0], 4, s->peak);
	if (itdb_step_done(st[0], "storing the session summary") || write_domains(st[1], s) ||
	    write_classes(st[2], s) || write_pages(st[3], s) || write_groups(st[4], s))
		goto cleanup;
	rc = 0;
cleanup:
	for (int i = 0; i < 5; i++)
		sqlite3_finalize(st[i]);
	return rc;
}
