/* The event writer (see event_writer.h): records into rows, batched, with the driver-page join. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "common/db.h"
#include "common/db_block_insert.h"
#include "common/hash_table.h"
#include "common/leaf.h"
#include "common/log.h"
#include "tracer/event_writer.h"
#include "tracer/live_maps.h"
#include "tracer/pending_records.h"

#define DEFAULT_BATCH 65536
/* Driver records wait on their thread's iommu:map/unmap (pending_records.h); a record that waits
 * behind this many others, or behind MAX_PENDING_THREAD of its thread's, or longer than
 * MAX_PENDING_NS, belonged to a call that failed or whose event was lost, and is stored unjoined.
 * A thread's calls in progress (an interrupt's call nests in the thread's, a few levels deep)
 * hold a few records each: one per run of pages of one size (__iommu_map, __iommu_unmap). */
#define MAX_PENDING 4096
#define MAX_PENDING_THREAD 64
#define MAX_PENDING_NS 1000000000ull
#define MAX_RUNS 64
/* Live mappings remembered for unmaps with no driver record: as many as a hash table of 2^20
 * slots holds (36 bytes each, 36 MiB) */
#define MAX_LIVE_MAPS (3u << 18)
/* Domains whose page sizes are remembered (40 bytes each at most, with the table's slack) */
#define MAX_DOMAINS (1u << 16)

/* The rare tables: one row a statement. */
enum stmt_id { ST_ATTACH, ST_FAULT, ST_FLUSH, ST_DOMAIN, ST_LOSS, ST_COUNT };

static const char *const stmt_sql[ST_COUNT] = {
	[ST_ATTACH] = "INSERT INTO attaches(session_id, ts_ns, cpu, pid, tid, comm, event, device,"
		      " group_id, domain_ptr, domain_source, domain_type)"
		      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_FAULT] =
		"INSERT INTO faults(session_id, ts_ns, cpu, pid, tid, comm, device, iova, flags)"
		" VALUES (?,?,?,?,?,?,?,?,?)",
	[ST_FLUSH] = "INSERT INTO flushes(session_id, ts_ns, cpu, pid, tid, comm, event, device,"
		     " domain_id, descriptor_type, start_addr, end_addr, addr, pages, mask,"
		     " qw0, qw1, qw2, qw3) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_DOMAIN] = "INSERT OR IGNORE INTO domains(session_id, domain_ptr, domain_type,"
		      " pgsize_bitmap, first_seen_ns) VALUES (?,?,?,?,?)",
	[ST_LOSS] = "INSERT INTO losses(session_id, cpu, event, lost, reason) VALUES (?,?,?,?,?)",
};

/* The hot tables take their rows in blocks (common/db_block_insert.h), never held past a commit.
 * maps and unmaps leave their ids to SQLite, which appends without the seek a given id costs;
 * the writer still numbers them, as driver rows name their map before its block goes in.
 * The blocks go in with OR FAIL, which keeps no statement journal (a copy of the pages each
 * block changes): the writer rolls its transaction back on any error instead (w->failed). */
enum block_id { B_MAP, B_UNMAP, B_DRIVER, B_COUNT };

static const struct db_block_table block_tables[B_COUNT] = {
	[B_MAP] = { "INSERT OR FAIL INTO maps(session_id, ts_ns, cpu, pid, tid, comm,"
		    " domain_ptr, domain_source, iova, paddr, size_bytes)",
		    11, true, "insert maps" },
	[B_UNMAP] = { "INSERT OR FAIL INTO unmaps(session_id, ts_ns, cpu, pid, tid, comm,"
		      " domain_ptr, domain_source, iova, size_bytes, unmapped_bytes)",
		      11, true, "insert unmaps" },
	[B_DRIVER] = { "INSERT OR FAIL INTO driver_maps(session_id, op, map_id, unmap_id,"
		       " ts_ns, cpu, tid, function, domain_ptr, iova, paddr, pgsize_bytes, pgcount,"
		       " source)",
		       13, false, "insert driver page records" },
};

/* Comms seen, each kept once (its text padded with zeros: the key), unchanged, while the writer
 * lives: their cells are equal when their pointers are. The table is made at its bound, so that a
 * kept comm never moves; beyond the bound a new comm is copied for its row (comm_copies). */
#define MAX_COMMS 192

struct domain_entry {
	uint64_t domain;
	uint64_t pgsize_bitmap;
};

struct event_writer {
	sqlite3 *db;
	int64_t session_id;
	struct event_writer_opts opts;
	sqlite3_stmt *st[ST_COUNT];
	struct db_block *blocks[B_COUNT];
	/* comms the table does not keep, copied for their rows: a row's copy lasts until it is
	 * inserted */
	char comm_copies[B_COUNT][DB_BLOCK_ROWS][IT_COMM_LEN];
	int in_txn;
	int failed;
	uint64_t refused; /* records out_of_range refused */
	uint32_t in_batch;
	uint64_t count;
	int64_t next_map_id;
	int64_t next_unmap_id;
	/* driver records waiting for their iommu:map/unmap */
	struct pending_records *pending;
	struct live_maps *live;
	struct hash_table domains; /* struct domain_entry by domain */
	struct hash_table comms; /* char[IT_COMM_LEN] */
};

static int flush_blocks(struct event_writer *w)
{
	for (int i = 0; i < B_COUNT; i++)
		if (db_block_flush(w->blocks[i]))
			return -1;
	return 0;
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "comm_intern: a comm's first byte is "
							 "the low byte of its first word");

/* comm (n bytes, 0 < n <= IT_COMM_LEN) as kept in the table, or NULL when the table is full */
static const char *comm_intern(struct hash_table *t, const char *comm, size_t n)
{
	uint64_t key[IT_COMM_LEN / sizeof(uint64_t)], hash;
	void *kept;

	/* the comm's bytes and zeros after them, in two words read whole */
	memcpy(key, comm, IT_COMM_LEN);
	if (n < 8) {
		key[0] &= (1ull << 8 * n) - 1;
		key[1] = 0;
	} else if (n < 16) {
		key[1] &= (1ull << 8 * (n - 8)) - 1;
	}
	hash = hash_table_hash_u64(key[0] ^ hash_table_hash_u64(key[1]));
	kept = hash_table_find(t, hash, key);
	if (!kept)
		hash_table_insert(t, hash, key, &kept);
	return kept;
}

/* The comm of a record (which does not outlive this call): interned, or copied for its row. */
static void cell_comm(struct event_writer *w, enum block_id id, struct db_cell *c,
		      const struct it_event_header *h)
{
	size_t n = strnlen(h->comm, IT_COMM_LEN);
	const char *kept;
	char *copy;

	if (!n) {
		db_cell_null(c);
		return;
	}
	kept = comm_intern(&w->comms, h->comm, n);
	if (kept) {
		db_cell_text_len(c, kept, (int)n, false);
		return;
	}
	copy = w->comm_copies[id][db_block_row_index(w->blocks[id])];
	memcpy(copy, h->comm, n);
	db_cell_text_len(c, copy, (int)n, true);
}

/* The header columns maps and unmaps share, from cells[1]: ts, cpu, pid, tid, comm. */
static void cells_header(struct event_writer *w, enum block_id id, struct db_cell *c,
			 const struct it_event_header *h)
{
	db_cell_u64(&c[1], h->ts_ns);
	db_cell_int(&c[2], (int)h->cpu);
	db_cell_int(&c[3], h->pid);
	db_cell_int(&c[4], h->tid);
	cell_comm(w, id, &c[5], h);
}

static int64_t next_id(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = itdb_prepare(db, sql);
	int64_t id = 1;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0) + 1;
	sqlite3_finalize(st);
	return id;
}

struct event_writer *event_writer_new(sqlite3 *db, int64_t session_id,
				      const struct event_writer_opts *opts)
{
	struct event_writer *w = calloc(1, sizeof(*w));

	if (!w)
		goto fail;
	w->db = db;
	w->session_id = session_id;
	if (opts)
		w->opts = *opts;
	if (!w->opts.batch_events)
		w->opts.batch_events = DEFAULT_BATCH;
	if (!w->opts.fallback_pgsize_bitmap)
		w->opts.fallback_pgsize_bitmap = EVENT_WRITER_DEFAULT_PGSIZES;
	for (int i = 0; i < ST_COUNT; i++) {
		w->st[i] = itdb_prepare(db, stmt_sql[i]);
		if (!w->st[i])
			goto fail;
	}
	for (int i = 0; i < B_COUNT; i++) {
		w->blocks[i] = db_block_new(db, &block_tables[i], session_id);
		if (!w->blocks[i])
			goto fail;
	}
	w->next_map_id = next_id(db, "SELECT IFNULL(MAX(map_id), 0) FROM maps");
	w->next_unmap_id = next_id(db, "SELECT IFNULL(MAX(unmap_id), 0) FROM unmaps");
	w->pending = pending_records_new(MAX_PENDING);
	w->live = live_maps_new(MAX_LIVE_MAPS);
	if (!w->pending || !w->live ||
	    hash_table_init(&w->domains, sizeof(struct domain_entry), sizeof(uint64_t), NULL,
			    MAX_DOMAINS, 0) ||
	    hash_table_init(&w->comms, IT_COMM_LEN, IT_COMM_LEN, NULL, MAX_COMMS, MAX_COMMS))
		goto fail;
	return w;
fail:
	log_error("event writer: cannot start (out of memory or database error)");
	event_writer_free(w);
	return NULL;
}

void event_writer_free(struct event_writer *w)
{
	if (!w)
		return;
	if (w->in_txn)
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(w->st[i]);
	for (int i = 0; i < B_COUNT; i++)
		db_block_free(w->blocks[i]);
	pending_records_free(w->pending);
	hash_table_free(&w->domains);
	hash_table_free(&w->comms);
	live_maps_free(w->live);
	free(w);
}

const char *it_event_kind_name(uint32_t kind)
{
	static const char *const names[IT_EV_KIND_MAX] = {
		[IT_EV_MAP] = "map",
		[IT_EV_UNMAP] = "unmap",
		[IT_EV_ATTACH] = "attach",
		[IT_EV_GROUP_ADD] = "group_add",
		[IT_EV_GROUP_REMOVE] = "group_remove",
		[IT_EV_FAULT] = "io_page_fault",
		[IT_EV_DRIVER_MAP] = "driver_map",
		[IT_EV_DRIVER_UNMAP] = "driver_unmap",
		[IT_EV_DRIVER_MAP_RANGE] = "driver_map_range",
		[IT_EV_DOMAIN] = "domain",
		[IT_EV_QI_SUBMIT] = "qi_submit",
		[IT_EV_CACHE_TAG_FLUSH] = "cache_tag_flush",
		[IT_EV_DOMAIN_DEVICE] = "domain_device",
	};

	return kind < IT_EV_KIND_MAX && names[kind] ? names[kind] : "unknown";
}

uint64_t event_writer_count(const struct event_writer *w)
{
	return w->count;
}

static int begin_batch(struct event_writer *w)
{
	if (w->in_txn)
		return 0;
	if (itdb_exec(w->db, "BEGIN", "begin batch"))
		return -1;
	w->in_txn = 1;
	return 0;
}

int event_writer_commit(struct event_writer *w)
{
	if (!w->in_txn)
		return 0;
	if (flush_blocks(w) || itdb_exec(w->db, "COMMIT", "commit batch")) {
		w->failed = 1;
		return -1;
	}
	w->in_txn = 0;
	w->in_batch = 0;
	return 0;
}

static int remember_domain(struct event_writer *w, uint64_t domain, uint64_t pgsize_bitmap)
{
	struct domain_entry *e;

	if (!domain)
		return 0;
	switch (hash_table_insert(&w->domains, hash_table_hash_u64(domain), &domain, (void **)&e)) {
	case HASH_TABLE_NOMEM:
		log_error("event writer: out of memory for the domains' page sizes");
		return -1;
	case HASH_TABLE_FULL:
		/* beyond the bound a new domain is not remembered: its maps get the fallback page
		 * sizes */
		return 0;
	default:
		e->pgsize_bitmap = pgsize_bitmap;
		return 0;
	}
}

static uint64_t domain_pgsizes(const struct event_writer *w, uint64_t domain)
{
	const struct domain_entry *e =
		domain ? hash_table_find(&w->domains, hash_table_hash_u64(domain), &domain) : NULL;

	return e && e->pgsize_bitmap ? e->pgsize_bitmap : w->opts.fallback_pgsize_bitmap;
}

static const char *domain_source(uint32_t flags)
{
	if (flags & IT_F_DOMAIN_FROM_DRIVER)
		return "driver";
	if (flags & IT_F_DOMAIN_FROM_CALL)
		return "call";
	if (flags & IT_F_DOMAIN_FROM_GROUP)
		return "group";
	return NULL;
}

/* Binds the columns every event table starts with: session, ts, cpu, pid, tid, comm. */
static void bind_header(struct event_writer *w, sqlite3_stmt *st, int first,
			const struct it_event_header *h)
{
	char comm[IT_COMM_LEN + 1];

	memcpy(comm, h->comm, IT_COMM_LEN);
	comm[IT_COMM_LEN] = '\0';
	sqlite3_bind_int64(st, first, w->session_id);
	sqlite3_bind_int64(st, first + 1, (sqlite3_int64)h->ts_ns);
	sqlite3_bind_int(st, first + 2, (int)h->cpu);
	sqlite3_bind_int64(st, first + 3, h->pid);
	sqlite3_bind_int64(st, first + 4, h->tid);
	itdb_bind_text(st, first + 5, comm);
}

static void bind_fixed_text(sqlite3_stmt *st, int idx, const char *s, size_t len)
{
	size_t n = strnlen(s, len);

	if (n)
		sqlite3_bind_text(st, idx, s, (int)n, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, idx);
}

static void bind_u64(sqlite3_stmt *st, int idx, uint64_t v)
{
	sqlite3_bind_int64(st, idx, (sqlite3_int64)v);
}

static const char *probe_name(const struct event_writer *w, uint32_t probe_id)
{
	return w->opts.probe_name ? w->opts.probe_name(w->opts.probe_name_ctx, probe_id) : NULL;
}

/* One driver_maps row; owner_id is the map_id or unmap_id it belongs to (0: none). */
static int insert_driver_row(struct event_writer *w, const char *op, int64_t owner_id,
			     const struct it_event_header *h, const char *function, uint64_t domain,
			     uint64_t iova, uint64_t paddr, uint64_t pgsize, uint64_t pgcount,
			     const char *source)
{
	struct db_cell *c = db_block_row(w->blocks[B_DRIVER]);
	int is_map = op[0] == 'm';

	db_cell_text(&c[0], op);
	db_cell_nonzero(&c[1], is_map ? (uint64_t)owner_id : 0);
	db_cell_nonzero(&c[2], is_map ? 0 : (uint64_t)owner_id);
	db_cell_u64(&c[3], h->ts_ns);
	db_cell_int(&c[4], (int)h->cpu);
	db_cell_int(&c[5], h->tid);
	db_cell_text(&c[6], function);
	db_cell_nonzero(&c[7], domain);
	db_cell_u64(&c[8], iova);
	/* an unmap's physical pages are known only when derived from the live mappings */
	if (is_map || source[0] == 'd')
		db_cell_u64(&c[9], paddr);
	else
		db_cell_null(&c[9]);
	db_cell_u64(&c[10], pgsize);
	db_cell_u64(&c[11], pgcount);
	db_cell_text(&c[12], source);
	return db_block_row_done(w->blocks[B_DRIVER]);
}

/* The leaf rule's pages for a mapping (op "map") or what an unmap took away (op "unmap"), as
 * source='derived' rows of map or unmap owner_id. */
static int insert_derived(struct event_writer *w, const char *op, int64_t owner_id,
			  const struct it_event_header *h, const char *function, uint64_t domain,
			  uint64_t iova, uint64_t paddr, uint64_t size)
{
	struct leaf_run runs[MAX_RUNS];
	long n = leaf_pages(iova, paddr, size, domain_pgsizes(w, domain), runs, MAX_RUNS);

	/* a mapping the page table could not hold has no pages to derive */
	if (n < 0)
		return 0;
	if (n > MAX_RUNS)
		n = MAX_RUNS;
	for (long i = 0; i < n; i++)
		if (insert_driver_row(w, op, owner_id, h, function, domain, runs[i].iova,
				      runs[i].paddr, runs[i].pgsize, runs[i].pgcount, "derived"))
			return -1;
	return 0;
}

static int store_pending(struct event_writer *w, const struct it_event *p, int64_t owner_id,
			 uint64_t fallback_domain)
{
	const struct it_driver *d = &p->driver;
	uint64_t domain = d->domain ? d->domain : fallback_domain;
	const char *fn = probe_name(w, p->h.probe_id);

	switch (p->h.kind) {
	case IT_EV_DRIVER_MAP:
		return insert_driver_row(w, "map", owner_id, &p->h, fn, domain, d->iova, d->paddr,
					 d->pgsize, d->pgcount, "observed");
	case IT_EV_DRIVER_UNMAP:
		return insert_driver_row(w, "unmap", owner_id, &p->h, fn, domain, d->iova, 0,
					 d->pgsize, d->pgcount, "observed");
	default: /* IT_EV_DRIVER_MAP_RANGE: the leaf is chosen inside the driver */
		return insert_derived(w, "map", owner_id, &p->h, fn, domain, d->iova, d->paddr,
				      d->len);
	}
}

/* Whether pending driver record p belongs to the map (paddr known) or unmap (paddr_delta unused)
 * of thread h over [iova, iova+size) in domain (0: unknown): same thread, same operation, an IOVA
 * inside, the same domain where both are known, and for maps the same iova-to-paddr offset. */
static int belongs_to(const struct it_event *p, const struct it_event_header *h, int unmap,
		      uint64_t iova, uint64_t size, uint64_t paddr_delta, uint64_t domain)
{
	const struct it_driver *d = &p->driver;

	/* the idle tasks of all CPUs share tid 0 */
	if (p->h.tid != h->tid || (!h->tid && p->h.cpu != h->cpu))
		return 0;
	if ((p->h.kind == IT_EV_DRIVER_UNMAP) != unmap || d->iova < iova || d->iova - iova >= size)
		return 0;
	if (unmap)
		return !domain || !d->domain || domain == d->domain;
	/* a map's domain may be unknown or, when an interrupt on this thread mapped in between,
	 * another's: the driver's own domain argument is what counts (see exact_map_domain) */
	return d->paddr - d->iova == paddr_delta;
}

/* The domain of a map as its driver record names it (the driver's first argument: exact), or 0
 * when no observed driver record of the map is pending. */
static uint64_t exact_map_domain(const struct event_writer *w, const struct it_event *e)
{
	uint32_t slot = PENDING_NONE;

	while ((slot = pending_records_next_of_thread(w->pending, &e->h, slot)) != PENDING_NONE) {
		const struct it_event *p = pending_records_at(w->pending, slot);

		if (p->h.kind == IT_EV_DRIVER_MAP && p->driver.domain &&
		    belongs_to(p, &e->h, 0, e->map.iova, e->map.size, e->map.paddr - e->map.iova,
			       0))
			return p->driver.domain;
	}
	return 0;
}

/* Stores the pending record in slot unjoined; 0, or -1. */
static int store_unjoined(struct event_writer *w, uint32_t slot)
{
	if (store_pending(w, pending_records_at(w->pending, slot), 0, 0))
		return -1;
	pending_records_remove(w->pending, slot);
	return 0;
}

/* Stores the pending driver records that belong to the map or unmap (see belongs_to) with
 * owner_id, then, oldest first, those of any thread that waited too long before h's time,
 * unjoined. Others stay: an interrupt runs on the thread it interrupts, so a thread's records of
 * one call can be interleaved with another call's. Returns how many were joined, or -1. */
static long join_pending(struct event_writer *w, const struct it_event_header *h, int unmap,
			 uint64_t iova, uint64_t size, uint64_t paddr_delta, int64_t owner_id,
			 uint64_t domain)
{
	uint32_t slot = pending_records_next_of_thread(w->pending, h, PENDING_NONE), next;
	long joined = 0;

	for (; slot != PENDING_NONE; slot = next) {
		const struct it_event *p = pending_records_at(w->pending, slot);

		next = pending_records_next_of_thread(w->pending, h, slot);
		if (!belongs_to(p, h, unmap, iova, size, paddr_delta, domain))
			continue;
		if (store_pending(w, p, owner_id, domain))
			return -1;
		joined++;
		pending_records_remove(w->pending, slot);
	}
	while ((slot = pending_records_oldest(w->pending)) != PENDING_NONE &&
	       pending_records_at(w->pending, slot)->h.ts_ns + MAX_PENDING_NS < h->ts_ns)
		if (store_unjoined(w, slot))
			return -1;
	return joined;
}

static int hold_driver_record(struct event_writer *w, const struct it_event *e)
{
	if (pending_records_thread_count(w->pending, &e->h) >= MAX_PENDING_THREAD &&
	    store_unjoined(w, pending_records_next_of_thread(w->pending, &e->h, PENDING_NONE)))
		return -1;
	if (pending_records_full(w->pending) &&
	    store_unjoined(w, pending_records_oldest(w->pending)))
		return -1;
	pending_records_push(w->pending, e);
	return 0;
}

static int add_map(struct event_writer *w, const struct it_event *e)
{
	struct db_cell *c = db_block_row(w->blocks[B_MAP]);
	int64_t id = w->next_map_id++;
	uint64_t exact = exact_map_domain(w, e), domain = exact ? exact : e->map.domain;
	long joined;

	db_cell_int(&c[0], id);
	cells_header(w, B_MAP, c, &e->h);
	db_cell_nonzero(&c[6], domain);
	db_cell_text(&c[7], exact ? "driver" : domain_source(e->h.flags));
	db_cell_u64(&c[8], e->map.iova);
	db_cell_u64(&c[9], e->map.paddr);
	db_cell_u64(&c[10], e->map.size);
	if (db_block_row_done(w->blocks[B_MAP]))
		return -1;
	joined = join_pending(w, &e->h, 0, e->map.iova, e->map.size, e->map.paddr - e->map.iova, id,
			      domain);
	if (joined < 0)
		return -1;
	/* no pages derived where the capture counted this map's driver calls */
	if (!joined && !(e->h.flags & IT_F_DRIVER_CALLS_COUNTED) &&
	    insert_derived(w, "map", id, &e->h, NULL, domain, e->map.iova, e->map.paddr,
			   e->map.size))
		return -1;
	return live_maps_add(w->live, &(struct live_map){ domain, e->map.iova, e->map.paddr,
							  e->map.size }) < 0 ?
		       -1 :
		       0;
}

struct unmap_ctx {
	struct event_writer *w;
	const struct it_event *e;
	int64_t unmap_id;
	int derive;
};

/* A piece of live mapping an unmap took away: its pages, derived, when no driver record said. */
static int unmapped_piece(const struct live_map *piece, void *ctx)
{
	struct unmap_ctx *u = ctx;

	if (!u->derive)
		return 0;
	return insert_derived(u->w, "unmap", u->unmap_id, &u->e->h, NULL, piece->domain,
			      piece->iova, piece->paddr, piece->size);
}

static int add_unmap(struct event_writer *w, const struct it_event *e)
{
	struct db_cell *c = db_block_row(w->blocks[B_UNMAP]);
	int64_t id = w->next_unmap_id++;
	struct unmap_ctx u;
	long joined;

	db_cell_int(&c[0], id);
	cells_header(w, B_UNMAP, c, &e->h);
	db_cell_nonzero(&c[6], e->unmap.domain);
	db_cell_text(&c[7], domain_source(e->h.flags));
	db_cell_u64(&c[8], e->unmap.iova);
	db_cell_u64(&c[9], e->unmap.size);
	db_cell_u64(&c[10], e->unmap.unmapped_size);
	if (db_block_row_done(w->blocks[B_UNMAP]))
		return -1;
	joined = join_pending(w, &e->h, 1, e->unmap.iova, e->unmap.size, 0, id, e->unmap.domain);
	if (joined < 0)
		return -1;
	u = (struct unmap_ctx){ w, e, id, !joined && !(e->h.flags & IT_F_DRIVER_CALLS_COUNTED) };
	return live_maps_remove(w->live, e->unmap.domain, e->unmap.iova, e->unmap.unmapped_size,
				unmapped_piece, &u) < 0 ?
		       -1 :
		       0;
}

static int add_device(struct event_writer *w, const struct it_event *e)
{
	static const char *const names[] = {
		[IT_EV_ATTACH] = "attach",
		[IT_EV_GROUP_ADD] = "group_add",
		[IT_EV_GROUP_REMOVE] = "group_remove",
		[IT_EV_DOMAIN_DEVICE] = "dma_api",
	};
	sqlite3_stmt *st = w->st[ST_ATTACH];

	bind_header(w, st, 1, &e->h);
	sqlite3_bind_text(st, 7, names[e->h.kind], -1, SQLITE_STATIC);
	bind_fixed_text(st, 8, e->device.dev_name, sizeof(e->device.dev_name));
	if (e->device.group_id >= 0)
		sqlite3_bind_int(st, 9, e->device.group_id);
	if (e->device.domain) {
		bind_u64(st, 10, e->device.domain);
		sqlite3_bind_int64(st, 12, e->device.domain_type);
	}
	itdb_bind_text(st, 11, domain_source(e->h.flags));
	return itdb_step_done(st, "insert attach");
}

static int add_fault(struct event_writer *w, const struct it_event *e)
{
	sqlite3_stmt *st = w->st[ST_FAULT];

	bind_header(w, st, 1, &e->h);
	bind_fixed_text(st, 7, e->fault.dev_name, sizeof(e->fault.dev_name));
	bind_u64(st, 8, e->fault.iova);
	sqlite3_bind_int(st, 9, e->fault.flags);
	return itdb_step_done(st, "insert fault");
}

/* VT-d invalidation descriptor types (qw0 bits 3:0 and 11:9), as the spec numbers them. */
static const char *qi_type_name(uint64_t qw0)
{
	static const char *const names[] = {
		[1] = "context", [2] = "iotlb",	      [3] = "dev_tlb",	   [4] = "iec",
		[5] = "wait",	 [6] = "pasid_iotlb", [7] = "pasid_cache", [8] = "dev_tlb_pasid",
	};
	uint64_t type = (qw0 & 0xf) | ((qw0 >> 5) & 0x70);

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "other";
}

static int add_qi(struct event_writer *w, const struct it_event *e)
{
	sqlite3_stmt *st = w->st[ST_FLUSH];
	const __u64 *qw = e->qi.qw;
	const char *type = qi_type_name(qw[0]);

	bind_header(w, st, 1, &e->h);
	sqlite3_bind_text(st, 7, "qi_submit", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, type, -1, SQLITE_STATIC);
	/* IOTLB and PASID-IOTLB descriptors: DID in qw0 31:16; address in qw1 63:12, its
	 * address mask (2^am pages) in qw1 5:0 */
	if (!strcmp(type, "iotlb") || !strcmp(type, "pasid_iotlb")) {
		sqlite3_bind_int64(st, 9, (qw[0] >> 16) & 0xffff);
		bind_u64(st, 13, qw[1] & ~0xfffull);
		sqlite3_bind_int64(st, 15, qw[1] & 0x3f);
	}
	for (int i = 0; i < 4; i++)
		bind_u64(st, 16 + i, qw[i]);
	return itdb_step_done(st, "insert qi_submit");
}

static int add_cache_tag_flush(struct event_writer *w, const struct it_event *e)
{
	sqlite3_stmt *st = w->st[ST_FLUSH];
	const struct it_cache_tag_flush *f = &e->flush;

	bind_header(w, st, 1, &e->h);
	sqlite3_bind_text(st, 7, f->np ? "cache_tag_flush_range_np" : "cache_tag_flush_range", -1,
			  SQLITE_STATIC);
	bind_fixed_text(st, 8, f->dev_name, sizeof(f->dev_name));
	sqlite3_bind_int64(st, 9, f->domain_id);
	bind_u64(st, 11, f->start);
	bind_u64(st, 12, f->end);
	bind_u64(st, 13, f->addr);
	if (f->pages)
		bind_u64(st, 14, f->pages);
	bind_u64(st, 15, f->mask);
	return itdb_step_done(st, "insert cache_tag_flush_range");
}

static int add_domain(struct event_writer *w, const struct it_event *e)
{
	sqlite3_stmt *st = w->st[ST_DOMAIN];

	if (remember_domain(w, e->domain.domain, e->domain.pgsize_bitmap))
		return -1;
	sqlite3_bind_int64(st, 1, w->session_id);
	bind_u64(st, 2, e->domain.domain);
	sqlite3_bind_int64(st, 3, e->domain.type);
	bind_u64(st, 4, e->domain.pgsize_bitmap);
	bind_u64(st, 5, e->h.ts_ns);
	return itdb_step_done(st, "insert domain");
}

/* The first value of e that no column can hold: SQLite's integers are signed 64-bit, and a time,
 * size or page count from 2^63 on would read negative (addresses, domains and descriptors are
 * stored as their 64 bits: their *_hex columns show them). NULL when every value fits. */
static const char *out_of_range(const struct it_event *e)
{
	const struct it_driver *d = &e->driver;

	if (e->h.ts_ns > INT64_MAX)
		return "timestamp";
	switch (e->h.kind) {
	case IT_EV_MAP:
		return e->map.size > INT64_MAX ? "size" : NULL;
	case IT_EV_UNMAP:
		return e->unmap.size > INT64_MAX	  ? "size" :
		       e->unmap.unmapped_size > INT64_MAX ? "unmapped size" :
							    NULL;
	case IT_EV_DRIVER_MAP:
	case IT_EV_DRIVER_UNMAP:
	case IT_EV_DRIVER_MAP_RANGE:
		return d->pgsize > INT64_MAX || d->pgcount > INT64_MAX || d->len > INT64_MAX ?
			       "page size, count or length" :
			       NULL;
	default:
		return NULL;
	}
}

/* A record out_of_range: not stored, but counted in losses (reason out-of-range), said once. */
static int refuse(struct event_writer *w, const struct it_event *e, const char *what)
{
	if (!w->refused++)
		log_warn("event writer: a %s record at %llu ns has a %s beyond 2^63-1, more than the "
			 "database holds: such records are counted as lost (out-of-range), not stored",
			 it_event_kind_name(e->h.kind), (unsigned long long)e->h.ts_ns, what);
	return event_writer_add_loss(w, e->h.cpu, it_event_kind_name(e->h.kind), 1, "out-of-range");
}

int event_writer_add(struct event_writer *w, const struct it_event *e)
{
	const char *what = out_of_range(e);
	int ret;

	if (w->failed || begin_batch(w))
		return -1;
	if (what)
		return refuse(w, e, what);
	switch (e->h.kind) {
	case IT_EV_MAP:
		ret = add_map(w, e);
		break;
	case IT_EV_UNMAP:
		ret = add_unmap(w, e);
		break;
	case IT_EV_ATTACH:
	case IT_EV_GROUP_ADD:
	case IT_EV_GROUP_REMOVE:
	case IT_EV_DOMAIN_DEVICE:
		ret = add_device(w, e);
		break;
	case IT_EV_FAULT:
		ret = add_fault(w, e);
		break;
	case IT_EV_DRIVER_MAP:
	case IT_EV_DRIVER_UNMAP:
	case IT_EV_DRIVER_MAP_RANGE:
		ret = hold_driver_record(w, e);
		break;
	case IT_EV_DOMAIN:
		ret = add_domain(w, e);
		break;
	case IT_EV_QI_SUBMIT:
		ret = add_qi(w, e);
		break;
	case IT_EV_CACHE_TAG_FLUSH:
		ret = add_cache_tag_flush(w, e);
		break;
	default:
		log_debug("event writer: skipping record of unknown kind %u", e->h.kind);
		return 0;
	}
	if (ret) {
		w->failed = 1;
		return -1;
	}
	w->count++;
	if (++w->in_batch >= w->opts.batch_events)
		return event_writer_commit(w);
	return 0;
}

int event_writer_add_loss(struct event_writer *w, uint32_t cpu, const char *event, uint64_t lost,
			  const char *reason)
{
	sqlite3_stmt *st = w->st[ST_LOSS];

	if (w->failed || begin_batch(w))
		return -1;
	sqlite3_bind_int64(st, 1, w->session_id);
	sqlite3_bind_int(st, 2, (int)cpu);
	itdb_bind_text(st, 3, event);
	bind_u64(st, 4, lost);
	itdb_bind_text(st, 5, reason);
	if (itdb_step_done(st, "insert loss")) {
		w->failed = 1;
		return -1;
	}
	return 0;
}

int event_writer_finish(struct event_writer *w)
{
	if (w->failed || begin_batch(w))
		return -1;
	/* records whose iommu:map/unmap never came: the call failed or its event was lost */
	while (pending_records_count(w->pending)) {
		if (store_unjoined(w, pending_records_oldest(w->pending))) {
			w->failed = 1;
			return -1;
		}
	}
	return event_writer_commit(w);
}
