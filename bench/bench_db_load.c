/* Item 4 of `make bench`, the load: a synthetic 10 M-event stream (event_stream.h; BENCH_EVENTS
 * sets the count) through the real event writer into a database file, the session then ended as
 * `record` ends it (lifetimes, indexes) and closed; its peer is a naive batched insert of the
 * same rows (one prepared INSERT per table, COMMIT every 65536 rows, no joins) into the same
 * schema. The database it leaves (argv[1]) is the one bench/run times the analyzers on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer/analysis.h"
#include "bench/event_stream.h"
#include "bench/rows.h"
#include "common/db.h"
#include "common/schema.h"
#include "common/db_checkpoint.h"
#include "tracer/event_writer.h"
#include "cli/db_schema.h"

#define SEED 0x1077u
#define NAIVE_BATCH 65536

/* the GPU and its BAR1, so that audit bar has a BAR to find the GPU domain's maps in */
static int store_gpu(sqlite3 *db, int64_t sid)
{
	sqlite3_stmt *dev = itdb_prepare(db, "INSERT INTO devices(session_id, bdf, vendor_id,"
					     " device_id, class_code, driver, iommu_group)"
					     " VALUES (?, ?, 4318, 8711, 196608, 'nvidia', 12)");
	sqlite3_stmt *bar = itdb_prepare(db, "INSERT INTO bars(session_id, bdf, bar_index,"
					     " start_addr, size_bytes, is_64bit, prefetchable)"
					     " VALUES (?, ?, 1, ?, ?, 1, 1)");
	int ret = -1;

	if (!dev || !bar)
		goto out;
	sqlite3_bind_int64(dev, 1, sid);
	sqlite3_bind_text(dev, 2, EVENT_STREAM_GPU_BDF, -1, SQLITE_STATIC);
	sqlite3_bind_int64(bar, 1, sid);
	sqlite3_bind_text(bar, 2, EVENT_STREAM_GPU_BDF, -1, SQLITE_STATIC);
	sqlite3_bind_int64(bar, 3, (int64_t)EVENT_STREAM_GPU_BAR1);
	sqlite3_bind_int64(bar, 4, (int64_t)EVENT_STREAM_GPU_BAR1_SIZE);
	ret = itdb_step_done(dev, "bench: device") || itdb_step_done(bar, "bench: bar") ? -1 : 0;
out:
	sqlite3_finalize(dev);
	sqlite3_finalize(bar);
	return ret;
}

static sqlite3 *open_session(const char *path, int64_t *sid)
{
	char err[512];
	sqlite3 *db = itdb_open(path, ITDB_CREATE_FORCE, &iommutrace_schema, err, sizeof(err));

	if (!db) {
		fprintf(stderr, "bench_db_load: %s\n", err);
		return NULL;
	}
	if (itdb_session_begin(db,
			       &(struct itdb_session_info){ .kind = "record",
							    .capture = "bpf",
							    .trace_clock = "mono",
							    .start_mono_ns = 1000000000ull },
			       sid) ||
	    store_gpu(db, *sid)) {
		itdb_close(db);
		return NULL;
	}
	return db;
}

static int discard(const struct it_event *e, void *ctx)
{
	return 0;
}

static int to_writer(const struct it_event *e, void *ctx)
{
	return event_writer_add(ctx, e);
}

/* The naive peer: the same rows, no joins (driver rows name no map), no derived pages */
struct naive {
	sqlite3 *db;
	int64_t sid, next_map_id, next_unmap_id;
	sqlite3_stmt *map, *unmap, *driver;
	uint64_t rows;
};

static int naive_add(const struct it_event *e, void *ctx)
{
	struct naive *n = ctx;
	sqlite3_stmt *st;
	int k = 1;

	switch (e->h.kind) {
	case IT_EV_MAP:
		st = n->map;
		sqlite3_bind_int64(st, k++, n->next_map_id++);
		break;
	case IT_EV_UNMAP:
		st = n->unmap;
		sqlite3_bind_int64(st, k++, n->next_unmap_id++);
		break;
	case IT_EV_DRIVER_MAP:
	case IT_EV_DRIVER_UNMAP:
		st = n->driver;
		break;
	default:
		return 0; /* the few domain and attach records */
	}
	sqlite3_bind_int64(st, k++, n->sid);
	sqlite3_bind_int64(st, k++, (int64_t)e->h.ts_ns);
	sqlite3_bind_int64(st, k++, e->h.cpu);
	sqlite3_bind_int64(st, k++, e->h.tid);
	if (st == n->driver) {
		sqlite3_bind_text(st, k++, e->h.kind == IT_EV_DRIVER_MAP ? "map" : "unmap", -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(st, k++, event_stream_probe_name(NULL, e->h.probe_id), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, k++, (int64_t)e->driver.domain);
		sqlite3_bind_int64(st, k++, (int64_t)e->driver.iova);
		sqlite3_bind_int64(st, k++, (int64_t)e->driver.paddr);
		sqlite3_bind_int64(st, k++, (int64_t)e->driver.pgsize);
		sqlite3_bind_int64(st, k++, (int64_t)e->driver.pgcount);
	} else {
		sqlite3_bind_int64(st, k++, e->h.pid);
		sqlite3_bind_text(st, k++, e->h.comm, strnlen(e->h.comm, IT_COMM_LEN),
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, k++, (int64_t)e->map.domain);
		sqlite3_bind_int64(st, k++, (int64_t)e->map.iova);
		/* map: paddr, size; unmap: size, unmapped (the same offsets in both records) */
		sqlite3_bind_int64(st, k++, (int64_t)e->map.paddr);
		sqlite3_bind_int64(st, k++, (int64_t)e->map.size);
	}
	if (itdb_step_done(st, "bench: naive insert"))
		return -1;
	if (++n->rows % NAIVE_BATCH == 0 && (itdb_exec(n->db, "COMMIT", "bench: naive commit") ||
					     itdb_exec(n->db, "BEGIN", "bench: naive begin")))
		return -1;
	return 0;
}

/* rows/s of the naive insert of count events into path, or NAN */
static double naive_load(const char *path, uint64_t count)
{
	struct naive n = { .next_map_id = 1, .next_unmap_id = 1 };
	double start, rate = NAN;

	n.db = open_session(path, &n.sid);
	if (!n.db)
		return NAN;
	n.map = itdb_prepare(n.db,
			     "INSERT INTO maps(map_id, session_id, ts_ns, cpu, tid, pid,"
			     " comm, domain_ptr, iova, paddr, size_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
	n.unmap = itdb_prepare(n.db, "INSERT INTO unmaps(unmap_id, session_id, ts_ns, cpu, tid,"
				     " pid, comm, domain_ptr, iova, size_bytes, unmapped_bytes)"
				     " VALUES (?,?,?,?,?,?,?,?,?,?,?)");
	n.driver = itdb_prepare(n.db,
				"INSERT INTO driver_maps(session_id, ts_ns, cpu, tid, op,"
				" function, domain_ptr, iova, paddr, pgsize_bytes, pgcount, source)"
				" VALUES (?,?,?,?,?,?,?,?,?,?,?,'observed')");
	if (!n.map || !n.unmap || !n.driver)
		goto out;
	start = bench_now();
	if (itdb_exec(n.db, "BEGIN", "bench: naive begin") ||
	    event_stream_run(count, SEED, naive_add, &n) < 0 ||
	    itdb_exec(n.db, "COMMIT", "bench: naive commit"))
		goto out;
	rate = n.rows / (bench_now() - start);
out:
	sqlite3_finalize(n.map);
	sqlite3_finalize(n.unmap);
	sqlite3_finalize(n.driver);
	itdb_close(n.db);
	return rate;
}

static int64_t count_rows(sqlite3 *db)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "SELECT (SELECT count(*) FROM maps) +"
			     " (SELECT count(*) FROM unmaps) + (SELECT count(*) FROM driver_maps)");
	int64_t rows = -1;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		rows = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rows;
}

struct writer_load {
	int64_t events, rows;
	double load_s; /* first event to event_writer_finish */
	double end_s; /* the session's end as import's: indexes, lifetimes, close */
};

/* count events through the event writer into path, the session ended as record ends it */
static int writer_load(const char *path, uint64_t count, struct writer_load *out)
{
	struct event_writer *w = NULL;
	struct db_checkpointer *ckpt = NULL;
	char err[256];
	double start;
	int64_t sid;
	sqlite3 *db = open_session(path, &sid);
	int ret = -1;

	if (!db)
		return -1;
	ckpt = db_checkpointer_start(db, DB_CHECKPOINT_BYTES, err, sizeof(err));
	if (!ckpt) {
		fprintf(stderr, "bench_db_load: %s\n", err);
		goto cleanup;
	}
	w = event_writer_new(db, sid,
			     &(struct event_writer_opts){ .probe_name = event_stream_probe_name });
	if (!w)
		goto cleanup;
	start = bench_now();
	out->events = event_stream_run(count, SEED, to_writer, w);
	if (out->events < 0 || event_writer_finish(w))
		goto cleanup;
	out->load_s = bench_now() - start;
	db_checkpointer_stop(ckpt);
	ckpt = NULL;
	out->rows = count_rows(db);
	start = bench_now();
	if (itdb_session_end(db, sid,
			     &(struct itdb_session_end){ .end_reason = "end-of-input",
							 .end_mono_ns = 2000000000ull +
									(uint64_t)out->events * 97,
							 .events_total = event_writer_count(w) }) ||
	    itdb_exec(db, it_capture_index_sql, "create the capture's indexes") ||
	    analysis_session_finish(db, sid))
		goto cleanup;
	event_writer_free(w);
	w = NULL;
	ret = itdb_close(db);
	db = NULL;
	out->end_s = bench_now() - start;
cleanup:
	event_writer_free(w);
	db_checkpointer_stop(ckpt);
	itdb_close(db);
	return ret;
}

int main(int argc, char **argv)
{
	uint64_t count = bench_env_ull("BENCH_EVENTS", 10000000);
	const char *path = argv[1];
	char naive_path[512], figure[128], err[256];
	struct writer_load load = {};
	double start, naive_rate, gen_s;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_db_load DB (bench/run runs it)\n");
		return 2;
	}
	start = bench_now();
	event_stream_run(count, SEED, discard, NULL);
	gen_s = bench_now() - start;
	if (writer_load(path, count, &load)) {
		fprintf(stderr, "bench_db_load: loading %s failed (the lines above say why)\n",
			path);
		return 1;
	}
	/* BENCH_NO_PEER=1 (bench/run --profile): ours alone, so that the profile is ours */
	naive_rate = NAN;
	if (!bench_env_ull("BENCH_NO_PEER", 0)) {
		snprintf(naive_path, sizeof(naive_path), "%s.naive", path);
		naive_rate = naive_load(naive_path, count);
		if (itdb_remove(naive_path, err, sizeof(err)))
			fprintf(stderr, "bench_db_load: %s\n", err);
	}
	snprintf(figure, sizeof(figure), "load of %.3gM events through event_writer",
		 load.events / 1e6);
	bench_row(4, figure, load.rows / load.load_s, "rows/s", "naive insert", naive_rate,
		  "higher", ">=1000000");
	snprintf(figure, sizeof(figure), "session end on %.3gM events (lifetimes, indexes, close)",
		 load.events / 1e6);
	bench_row(4, figure, load.end_s, "s", NULL, NAN, "lower", NULL);
	bench_note("item 4: %lld rows from %lld events in %.1f s (stream generation included: %.2f s "
		   "of it); naive insert: same rows, same schema and pragmas, COMMIT every %d, no "
		   "joins",
		   (long long)load.rows, (long long)load.events, load.load_s, gen_s, NAIVE_BATCH);
	return 0;
}
