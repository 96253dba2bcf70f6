/* The capture's tables (tracer/: record and import write them, the analyzer reads them): the
 * probes attached, domains, maps, unmaps, the driver's pages, attaches, faults, invalidations,
 * losses and the counts of the counting modes, with their views and indexes. */
#include "common/schema.h"

/* SQL text: 2^col bytes as people read it ("4 KiB"), for the aggregates' size classes */
#define POW2_TEXT(col) \
	"(CASE WHEN " col " >= 40 THEN (1 << (" col " - 40)) || ' TiB'" \
	" WHEN " col " >= 30 THEN (1 << (" col " - 30)) || ' GiB'" \
	" WHEN " col " >= 20 THEN (1 << (" col " - 20)) || ' MiB'" \
	" WHEN " col " >= 10 THEN (1 << (" col " - 10)) || ' KiB'" \
	" ELSE (1 << " col ") || ' B' END)"

/* SQL text, laid out as SQL */
/* clang-format off */
static const char capture_sql[] =
"CREATE TABLE IF NOT EXISTS probes ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  probe_id INTEGER NOT NULL,"
"  role TEXT NOT NULL,"
"  target TEXT NOT NULL,"
"  mechanism TEXT,"			/* fentry | kprobe | tp_btf | raw_tp | tracefs | NULL */
"  attached INTEGER NOT NULL,"
"  reason TEXT,"
"  PRIMARY KEY (session_id, probe_id));"
"CREATE TABLE IF NOT EXISTS domains ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  domain_ptr INTEGER NOT NULL,"
"  domain_type INTEGER,"			/* IOMMU_DOMAIN_* bits as the kernel stores them */
"  pgsize_bitmap INTEGER,"
"  first_seen_ns INTEGER,"
"  PRIMARY KEY (session_id, domain_ptr));"
"CREATE TABLE IF NOT EXISTS maps ("
"  map_id INTEGER PRIMARY KEY,"
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  ts_ns INTEGER NOT NULL, cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT,"
"  domain_ptr INTEGER,"
"  domain_source TEXT,"			/* driver | call | group | NULL (unknown) */
"  iova INTEGER NOT NULL,"
"  paddr INTEGER NOT NULL,"
"  size_bytes INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS unmaps ("
"  unmap_id INTEGER PRIMARY KEY,"
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  ts_ns INTEGER NOT NULL, cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT,"
"  domain_ptr INTEGER,"
"  domain_source TEXT,"
"  iova INTEGER NOT NULL,"
"  size_bytes INTEGER NOT NULL,"
"  unmapped_bytes INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS driver_maps ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  op TEXT NOT NULL,"			/* map | unmap */
"  map_id INTEGER,"			/* the iommu:map (or unmap_id for op=unmap) it belongs to */
"  unmap_id INTEGER,"
"  ts_ns INTEGER, cpu INTEGER, tid INTEGER,"
"  function TEXT,"			/* driver function probed; NULL when derived from the map alone */
"  domain_ptr INTEGER,"
"  iova INTEGER NOT NULL,"
"  paddr INTEGER,"
"  pgsize_bytes INTEGER NOT NULL,"
"  pgcount INTEGER NOT NULL,"
"  source TEXT NOT NULL);"		/* observed | derived */
"CREATE TABLE IF NOT EXISTS attaches ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  ts_ns INTEGER NOT NULL, cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT,"
"  event TEXT NOT NULL,"			/* attach | group_add | group_remove | dma_api */
"  device TEXT,"
"  group_id INTEGER,"
"  domain_ptr INTEGER,"
"  domain_source TEXT,"
"  domain_type INTEGER);"
"CREATE TABLE IF NOT EXISTS faults ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  ts_ns INTEGER NOT NULL, cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT,"
"  device TEXT,"
"  iova INTEGER NOT NULL,"
"  flags INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS flushes ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  ts_ns INTEGER NOT NULL, cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT,"
"  event TEXT NOT NULL,"			/* qi_submit | cache_tag_flush_range | cache_tag_flush_range_np */
"  device TEXT,"
"  domain_id INTEGER,"			/* hardware domain id (DID) */
"  descriptor_type TEXT,"		/* qi_submit: iotlb | dev_tlb | context | pasid_iotlb | ... */
"  start_addr INTEGER, end_addr INTEGER, addr INTEGER,"
"  pages INTEGER, mask INTEGER,"
"  qw0 INTEGER, qw1 INTEGER, qw2 INTEGER, qw3 INTEGER);"
"CREATE TABLE IF NOT EXISTS losses ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  cpu INTEGER NOT NULL,"
"  event TEXT NOT NULL,"
"  lost INTEGER NOT NULL,"
"  reason TEXT NOT NULL);"		/* ringbuf-full | tracefs-overrun | aggregates-full | ... */
/* How a record session captured (schema 8): sessions without a row recorded every call. */
"CREATE TABLE IF NOT EXISTS capture_settings ("
"  session_id INTEGER PRIMARY KEY REFERENCES sessions,"
"  mode TEXT NOT NULL,"			/* per-event | aggregate | threshold */
"  threshold_bytes INTEGER,"		/* threshold: calls from this size on are rows */
"  flush_interval_ns INTEGER,"		/* aggregate, threshold: how often counts were stored */
"  aggregate_entries INTEGER);"		/* aggregate, threshold: classes the BPF hash holds */
/* Calls counted instead of recorded (aggregate and threshold modes, schema 8): per flush, what
 * each class of call added since the previous flush. Sum over flush_ns for a session's totals. */
"CREATE TABLE IF NOT EXISTS map_aggregates ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  flush_ns INTEGER NOT NULL,"		/* CLOCK_MONOTONIC when the counts were read */
"  domain_ptr INTEGER,"			/* NULL: unknown, or none (invalidations) */
"  op TEXT NOT NULL,"			/* map | unmap | driver_map | driver_unmap | driver_map_range */
					/* | qi_submit | cache_tag_flush */
"  size_log2 INTEGER NOT NULL,"		/* floor(log2(call length)); 0: none (qi_submit) */
"  pgsize_bytes INTEGER NOT NULL,"	/* driver_map / driver_unmap: the page size; else 0 */
"  align_log2 INTEGER NOT NULL,"	/* trailing zero bits of iova|paddr (map), iova (unmap), */
					/* capped at 30 */
"  count INTEGER NOT NULL,"
"  bytes INTEGER NOT NULL,"		/* mapped, unmapped (as the kernel reports) or flushed */
"  pages INTEGER NOT NULL);"		/* driver records: page-table entries; flushes: pages */
"CREATE VIEW IF NOT EXISTS maps_view AS SELECT map_id, session_id, ts_ns, comm, tid,"
"  " HEX("domain_ptr") " AS domain, domain_source, printf('0x%x', iova) AS iova_hex,"
"  printf('0x%x', paddr) AS paddr_hex, size_bytes FROM maps;"
"CREATE VIEW IF NOT EXISTS unmaps_view AS SELECT unmap_id, session_id, ts_ns, comm, tid,"
"  " HEX("domain_ptr") " AS domain, domain_source, printf('0x%x', iova) AS iova_hex,"
"  size_bytes, unmapped_bytes FROM unmaps;"
"CREATE VIEW IF NOT EXISTS driver_maps_view AS SELECT session_id, op, map_id, unmap_id, function,"
"  " HEX("domain_ptr") " AS domain, printf('0x%x', iova) AS iova_hex,"
"  " HEX("paddr") " AS paddr_hex, pgsize_bytes, pgcount, pgsize_bytes * pgcount AS bytes,"
"  source FROM driver_maps;"
/* Each IOTLB invalidation with the map or unmap its thread made last, when that was at most 10 ms
 * before it: strict mode flushes right after iommu:unmap on the same thread, and caching-mode
 * units (emulated ones) right after iommu:map too; lazy (DMA-FQ) flushes come later from a timer
 * or worker and mostly stay unattributed (NULL). The idle tasks of all CPUs share tid 0, so
 * for them the CPU must match too. */
"CREATE VIEW IF NOT EXISTS flushes_view AS SELECT f.*, " HEX("f.addr") " AS addr_hex,"
"  (SELECT u.unmap_id FROM unmaps u WHERE u.session_id = f.session_id AND u.tid = f.tid"
"   AND (f.tid != 0 OR u.cpu = f.cpu) AND u.ts_ns <= f.ts_ns AND u.ts_ns >= f.ts_ns - 10000000"
"   AND NOT EXISTS (SELECT 1 FROM maps m WHERE m.session_id = f.session_id AND m.tid = f.tid"
"    AND (f.tid != 0 OR m.cpu = f.cpu) AND m.ts_ns > u.ts_ns AND m.ts_ns <= f.ts_ns)"
"   ORDER BY u.ts_ns DESC LIMIT 1) AS after_unmap_id,"
"  (SELECT m.map_id FROM maps m WHERE m.session_id = f.session_id AND m.tid = f.tid"
"   AND (f.tid != 0 OR m.cpu = f.cpu) AND m.ts_ns <= f.ts_ns AND m.ts_ns >= f.ts_ns - 10000000"
"   AND NOT EXISTS (SELECT 1 FROM unmaps u WHERE u.session_id = f.session_id AND u.tid = f.tid"
"    AND (f.tid != 0 OR u.cpu = f.cpu) AND u.ts_ns > m.ts_ns AND u.ts_ns <= f.ts_ns)"
"   ORDER BY m.ts_ns DESC LIMIT 1) AS after_map_id"
"  FROM flushes f;"
/* Which devices used each domain: attach events and DMA API calls. */
"CREATE VIEW IF NOT EXISTS domain_devices_view AS SELECT session_id,"
"  printf('0x%x', domain_ptr) AS domain, domain_ptr, device, group_id,"
"  group_concat(DISTINCT event) AS seen_by, MIN(ts_ns) AS first_seen_ns"
"  FROM attaches WHERE domain_ptr IS NOT NULL AND device IS NOT NULL"
"  AND event != 'group_remove'"
"  GROUP BY session_id, domain_ptr, device;"
/* Page sizes per map: observed where a driver probe saw them, derived otherwise. */
"CREATE VIEW IF NOT EXISTS map_pages_view AS SELECT m.session_id, m.map_id,"
"  printf('0x%x', m.iova) AS iova_hex, printf('0x%x', m.paddr) AS paddr_hex, m.size_bytes,"
"  d.pgsize_bytes, SUM(d.pgcount) AS pages, d.source"
"  FROM maps m JOIN driver_maps d ON d.map_id = m.map_id AND d.op = 'map'"
"  GROUP BY m.map_id, d.pgsize_bytes, d.source;"
/* map_aggregates summed over the session's flushes, with readable classes: call sizes from
 * call_size_min_bytes up to (not including) twice that. */
"CREATE VIEW IF NOT EXISTS map_aggregates_view AS SELECT session_id,"
"  " HEX("domain_ptr") " AS domain, domain_ptr, op, size_log2,"
"  CASE WHEN op = 'qi_submit' THEN NULL ELSE 1 << size_log2 END AS call_size_min_bytes,"
"  CASE WHEN op = 'qi_submit' THEN NULL ELSE " POW2_TEXT("size_log2") " END"
"  AS call_size_class, pgsize_bytes, align_log2,"
"  SUM(count) AS count, SUM(bytes) AS bytes, SUM(pages) AS pages, COUNT(*) AS flushes"
"  FROM map_aggregates GROUP BY session_id, domain_ptr, op, size_log2, pgsize_bytes, align_log2;";
/* clang-format on */

const struct itdb_schema_part it_capture_schema = {
	.name = "capture",
	.since = 1,
	.sql = (const char *const[]){ capture_sql, NULL },
};

/* SQL text, laid out as SQL */
/* clang-format off */
const char it_capture_index_sql[] =
"CREATE INDEX IF NOT EXISTS maps_by_session_ts ON maps(session_id, ts_ns);"
"CREATE INDEX IF NOT EXISTS unmaps_by_session_ts ON unmaps(session_id, ts_ns);"
"CREATE INDEX IF NOT EXISTS unmaps_by_thread ON unmaps(session_id, tid, ts_ns);"
"CREATE INDEX IF NOT EXISTS maps_by_thread ON maps(session_id, tid, ts_ns);"
"CREATE INDEX IF NOT EXISTS driver_maps_by_map ON driver_maps(map_id);"
"CREATE INDEX IF NOT EXISTS driver_maps_by_unmap ON driver_maps(unmap_id);";
/* clang-format on */
