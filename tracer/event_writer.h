/* The event writer: turns struct it_event records (from the ring buffer, the tracefs fallback or an
 * importer) into rows of one session, in batched transactions of prepared statements.
 *
 * Joins done here, on the fly: a driver map_pages/unmap_pages record precedes, on the same thread,
 * the iommu:map/unmap event of the call it belongs to; it is held until that event arrives and
 * stored with its map_id/unmap_id. A map that arrives with no observed driver pages gets the leaf
 * rule's pages as source='derived', right then (the domain's page-size set when known, else the
 * fallback set). An unmap with no driver record gets, as source='derived', the pages of the live
 * mappings it took away (tracer/live_maps.h).
 *
 * Rows of maps, unmaps and driver_maps wait in blocks of 32 and are inserted a block at a time;
 * every row is in the database, even as this connection sees it, once the batch is committed.
 *
 * Memory is bounded however long the trace, by about 42 MiB: driver records waiting for their
 * event, at most 4096 of 128 bytes in 8192 slots (1.3 MiB with their links and their threads'
 * table, allocated at start; tracer/pending_records.h); live mappings, at most 3 x 2^18 in a
 * hash table of 2^20 slots of 36 bytes (36 MiB; beyond that, mappings are not tracked and unmaps
 * of them get no derived pages); domains' page sizes, at most 2^16 (2.5 MiB; beyond that, the
 * fallback set); the row blocks, with what their statements' parameters hold (56 KiB); comms, at
 * most 192 kept (5 KiB; beyond that, a comm is copied for its row); and SQLite's page cache of
 * the connection (itdb_open: 2000 KiB) and prepared statements. The -wal file is on disk:
 * checkpointed every 32 MiB of pages, and below 256 MiB where a checkpointer does it
 * (common/db_checkpoint.h: record and import).
 *
 * Not thread-safe: one writer per capture thread. */
#ifndef IOMMUTRACE_EVENT_WRITER_H
#define IOMMUTRACE_EVENT_WRITER_H

#include <stdint.h>
#include <sqlite3.h>
#include "bpf/iommutrace.h"

struct event_writer;

/* Intel VT-d with superpages, the common case, when nothing says otherwise: 4K | 2M | 1G */
#define EVENT_WRITER_DEFAULT_PGSIZES ((1ull << 12) | (1ull << 21) | (1ull << 30))

struct event_writer_opts {
	uint32_t batch_events; /* commit after this many events (0: default 65536) */
	/* page sizes for derived pages when a map's domain is unknown
	 * (0: EVENT_WRITER_DEFAULT_PGSIZES) */
	uint64_t fallback_pgsize_bitmap;
	/* names of probe ids, for driver_maps.function (may be NULL); each name stays valid and
	 * unchanged while the writer lives (statements keep pointing at it) */
	const char *(*probe_name)(void *ctx, uint32_t probe_id);
	void *probe_name_ctx;
};

struct event_writer *event_writer_new(sqlite3 *db, int64_t session_id,
				      const struct event_writer_opts *opts);
/* Adds one record. Returns 0, or -1 when the database refused it (logged; the writer is then
 * unusable, and event_writer_free still rolls back only the open batch). */
int event_writer_add(struct event_writer *w, const struct it_event *e);
/* Commits the open batch (also done every batch_events and by finish). */
int event_writer_commit(struct event_writer *w);
/* Stores a lost-event count (per CPU and event kind) in the open batch. */
int event_writer_add_loss(struct event_writer *w, uint32_t cpu, const char *event, uint64_t lost,
			  const char *reason);
/* Stores the driver records still held (unjoined: their call failed or its event was lost) and
 * commits. */
int event_writer_finish(struct event_writer *w);
uint64_t event_writer_count(const struct event_writer *w);
/* Name of an event kind as summaries and the losses table use it ("map", "unmap", ...). */
const char *it_event_kind_name(uint32_t kind);
void event_writer_free(struct event_writer *w);

#endif
