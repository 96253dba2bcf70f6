/* The SQL text of the schema; see docs/schema.md for what each column means. */
#include "common/schema.h"


/* SQL text: 2^col bytes as people read it ("4 KiB"), for the aggregates' size classes */
#define POW2_TEXT(col) \
	"(CASE WHEN " col " >= 40 THEN (1 << (" col " - 40)) || ' TiB'" \
	" WHEN " col " >= 30 THEN (1 << (" col " - 30)) || ' GiB'" \
	" WHEN " col " >= 20 THEN (1 << (" col " - 20)) || ' MiB'" \
	" WHEN " col " >= 10 THEN (1 << (" col " - 10)) || ' KiB'" \
	" ELSE (1 << " col ") || ' B' END)"

const char it_schema_sql[] =
"CREATE TABLE IF NOT EXISTS meta ("
"  key TEXT PRIMARY KEY,"
"  value TEXT NOT NULL);"

"CREATE TABLE IF NOT EXISTS sessions ("
"  session_id INTEGER PRIMARY KEY,"
"  kind TEXT NOT NULL,"			/* record | import */
"  capture TEXT NOT NULL,"		/* bpf | tracefs | trace.dat | ftrace-text */
"  source_path TEXT,"
"  command TEXT,"
"  tool_version TEXT NOT NULL,"
"  hostname TEXT,"
"  kernel_release TEXT,"
"  kernel_version TEXT,"
"  boot_cmdline TEXT,"
"  trace_clock TEXT,"			/* clock of every ts_ns: mono (CLOCK_MONOTONIC), local, ... */
"  start_mono_ns INTEGER,"
"  start_wall_ns INTEGER,"		/* CLOCK_REALTIME read next to start_mono_ns */
"  end_mono_ns INTEGER,"
"  complete INTEGER NOT NULL DEFAULT 0,"
"  end_reason TEXT,"			/* duration | command-exit | signal | end-of-input | error */
"  command_exit_status INTEGER,"
"  events_total INTEGER NOT NULL DEFAULT 0,"
"  events_lost INTEGER NOT NULL DEFAULT 0,"
"  derive_pgsize_bitmap INTEGER);"	/* page sizes the leaf rule used where a domain's were unknown */

"CREATE TABLE IF NOT EXISTS boot_options ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  name TEXT NOT NULL,"			/* intel_iommu, amd_iommu, iommu, iommu.strict, ... */
"  value TEXT);"

"CREATE TABLE IF NOT EXISTS probes ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  probe_id INTEGER NOT NULL,"
"  role TEXT NOT NULL,"
"  target TEXT NOT NULL,"
"  mechanism TEXT,"			/* fentry | kprobe | tp_btf | raw_tp | tracefs | NULL */
"  attached INTEGER NOT NULL,"
"  reason TEXT,"
"  PRIMARY KEY (session_id, probe_id));"

"CREATE TABLE IF NOT EXISTS iommus ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  name TEXT NOT NULL,"			/* dmar0, ivhd0 */
"  vendor TEXT NOT NULL,"		/* intel | amd | other */
"  cap INTEGER,"
"  ecap INTEGER,"
"  version TEXT,"
"  pgsize_bitmap INTEGER,"		/* page sizes the unit supports for second-level tables */
"  supports_2m INTEGER,"
"  supports_1g INTEGER,"
"  mgaw_bits INTEGER,"
"  sagaw INTEGER,"
"  caching_mode INTEGER,"
"  pass_through INTEGER,"
"  scalable_mode INTEGER,"
"  PRIMARY KEY (session_id, name));"

"CREATE TABLE IF NOT EXISTS devices ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  bdf TEXT NOT NULL,"
"  vendor_id INTEGER,"
"  device_id INTEGER,"
"  class_code INTEGER,"
"  driver TEXT,"
"  iommu_group INTEGER,"
"  iommu_name TEXT,"
"  numa_node INTEGER,"
"  PRIMARY KEY (session_id, bdf));"

"CREATE TABLE IF NOT EXISTS bars ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  bdf TEXT NOT NULL,"
"  bar_index INTEGER NOT NULL,"
"  start_addr INTEGER NOT NULL,"
"  size_bytes INTEGER NOT NULL,"
"  is_64bit INTEGER NOT NULL,"
"  prefetchable INTEGER NOT NULL,"
"  PRIMARY KEY (session_id, bdf, bar_index));"

/* Each NVIDIA GPU's BAR1 (schema 5): place and size from sysfs, use from NVML when it answered. */
"CREATE TABLE IF NOT EXISTS gpu_bar1 ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  bdf TEXT NOT NULL,"
"  device_id INTEGER,"			/* PCI device ID (vendor 0x10de) */
"  start_addr INTEGER, size_bytes INTEGER,"	/* NULL: BAR1 has no address */
"  nvml_total_bytes INTEGER, nvml_used_bytes INTEGER, nvml_free_bytes INTEGER,"
"  nvml_status TEXT NOT NULL,"		/* ok, or why NVML gave nothing */
"  PRIMARY KEY (session_id, bdf));"

"CREATE TABLE IF NOT EXISTS iommu_groups ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  group_id INTEGER NOT NULL,"
"  domain_type TEXT,"			/* DMA | DMA-FQ | identity | blocked | unmanaged ... from sysfs */
"  PRIMARY KEY (session_id, group_id));"

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

/* Lifetimes of mapped IOVA ranges (schema 7; analyzer/lifetimes.h): a map is one piece while
 * whole; an unmap of part of it ends that part and leaves the rest as pieces of their own. */
"CREATE TABLE IF NOT EXISTS map_pieces ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  map_id INTEGER NOT NULL,"		/* the map that made it */
"  domain_ptr INTEGER,"
"  iova INTEGER NOT NULL,"
"  paddr INTEGER NOT NULL,"
"  size_bytes INTEGER NOT NULL,"
"  mapped_ns INTEGER NOT NULL,"
"  unmapped_ns INTEGER,"			/* NULL: still mapped when the session ended */
"  unmap_id INTEGER,"			/* the unmap that ended it; NULL when remapped or live */
"  end_reason TEXT);"			/* unmap | remapped (mapped over, its unmap unseen) | NULL */

/* Which sessions map_pieces was computed for, and from how many events. */
"CREATE TABLE IF NOT EXISTS map_pieces_state ("
"  session_id INTEGER PRIMARY KEY REFERENCES sessions,"
"  maps INTEGER NOT NULL, unmaps INTEGER NOT NULL, pieces INTEGER NOT NULL);"

/* One per `map -o` session: what it was asked to map and what it measured. */
"CREATE TABLE IF NOT EXISTS map_runs ("
"  session_id INTEGER PRIMARY KEY REFERENCES sessions,"
"  mapper TEXT NOT NULL,"		/* type1 | iommufd | dma_map_resource | dma_buf */
"  device TEXT NOT NULL,"		/* whose domain received the mapping */
"  buffer TEXT NOT NULL,"		/* as given: anon, thp, ..., bar:BDF/INDEX */
"  buffer_kind TEXT NOT NULL,"		/* anon | thp | hugetlb2m | hugetlb1g | memfd | bar |
					 * gpu | udmabuf | vgem | dmabuf-bar */
"  bar_device TEXT, bar_index INTEGER, bar_start INTEGER, bar_offset_bytes INTEGER,"
"  size_bytes INTEGER NOT NULL,"
"  iova INTEGER NOT NULL,"
"  iova_given INTEGER NOT NULL,"		/* 1: --iova; 0: the default */
"  vaddr INTEGER,"
"  repeat_count INTEGER NOT NULL,"
"  hold INTEGER NOT NULL,"
"  maps_done INTEGER NOT NULL,"		/* mappings made (and unmapped) */
"  mapper_pgsize_bitmap INTEGER,"	/* VFIO_IOMMU_GET_INFO; NULL: the mapper does not tell */
"  expected_pgsize_bitmap INTEGER,"	/* the page sizes map_expected_pages was computed with */
"  expected_pgsize_source TEXT,"		/* mapper | domain (the recorded domain's) */
"  thp_bytes INTEGER, hugetlb_bytes INTEGER,"	/* of the host buffer, from /proc/kpageflags */
"  phys_runs INTEGER,"			/* physically contiguous runs (map_backing rows) */
"  phys_source TEXT,"			/* pagemap | bar | recorded: where map_backing came from */
"  exporter TEXT,"			/* dma_buf: the exporter as the kernel names it */
"  exporter_device TEXT,"		/* dma_buf: the GPU, or the BAR's device */
"  dma_segments INTEGER);"		/* --import-as: DMA segments the first mapping gave */

"CREATE TABLE IF NOT EXISTS map_backing ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  offset_bytes INTEGER NOT NULL,"	/* into the buffer */
"  paddr INTEGER NOT NULL,"
"  size_bytes INTEGER NOT NULL);"

/* map --import-as: the DMA segments each mapping (dma-buf import or dma_map_resource) gave, in
 * the buffer's order. */
"CREATE TABLE IF NOT EXISTS map_dma_segments ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  repetition INTEGER NOT NULL,"		/* which import of --repeat, from 0 */
"  segment_index INTEGER NOT NULL,"
"  offset_bytes INTEGER NOT NULL,"	/* into the dma-buf */
"  dma_addr INTEGER NOT NULL,"
"  length_bytes INTEGER NOT NULL,"
"  PRIMARY KEY (session_id, repetition, segment_index));"

/* The pages the leaf rule gives for each physical run at its IOVA, for one mapping. */
"CREATE TABLE IF NOT EXISTS map_expected_pages ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  pgsize_bytes INTEGER NOT NULL,"
"  pgcount INTEGER NOT NULL,"
"  PRIMARY KEY (session_id, pgsize_bytes));"

/* One per `io -o` session: what was read or written, on which devices, into what. device, model,
 * serial, block_size and blocks are the first device's (io_devices has each); device lists
 * every device's BDF, comma-separated. */
"CREATE TABLE IF NOT EXISTS io_runs ("
"  session_id INTEGER PRIMARY KEY REFERENCES sessions,"
"  engine TEXT NOT NULL,"			/* vfio | uring | uio */
"  device TEXT NOT NULL, model TEXT, serial TEXT,"
"  nsid INTEGER NOT NULL, block_size INTEGER, blocks INTEGER,"
"  workload TEXT NOT NULL,"		/* randread | seqread | randwrite | seqwrite */
"  bs_bytes INTEGER NOT NULL,"
"  duration_ns INTEGER NOT NULL,"		/* asked for, per point */
"  repeat_count INTEGER NOT NULL,"
"  mapper TEXT,"				/* type1 | iommufd; NULL: the engine maps nothing itself */
"  buffer TEXT NOT NULL, buffer_kind TEXT NOT NULL, size_bytes INTEGER NOT NULL,"
"  bar_offset_bytes INTEGER,"
"  window_bytes INTEGER NOT NULL,"
"  iova INTEGER,"
"  verify INTEGER NOT NULL,"
"  device_count INTEGER NOT NULL DEFAULT 1);"

/* One per device of an `io -o` run (schema 4): each has its own worker thread, pinned to cpu, and
 * its own buffer; of a bar window, device i takes size_bytes at bar_offset + i * size_bytes. */
"CREATE TABLE IF NOT EXISTS io_devices ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  device_index INTEGER NOT NULL,"		/* io_points.device_index */
"  device TEXT NOT NULL, model TEXT, serial TEXT,"
"  block_size INTEGER, blocks INTEGER,"
"  iova INTEGER,"				/* the buffer's, when the engine maps it itself */
"  numa_node INTEGER,"			/* the device's; NULL: sysfs names none (-1, or unreadable) */
"  cpu INTEGER,"				/* the worker's; NULL: not pinned */
"  iommu TEXT,"				/* off | passthrough | translated; NULL: unknown */
"  bar_offset_bytes INTEGER,"		/* bar: this device's part of the window */
"  PRIMARY KEY (session_id, device_index));"

/* One per measurement point and device, in the order run (the devices of a point run at once);
 * CLOCK_MONOTONIC times, as the events have. */
"CREATE TABLE IF NOT EXISTS io_points ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  point INTEGER NOT NULL,"
"  qd INTEGER NOT NULL, repeat_index INTEGER NOT NULL,"
"  start_mono_ns INTEGER NOT NULL, end_mono_ns INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL,"
"  completed INTEGER NOT NULL, failed INTEGER NOT NULL,"
"  verify_errors INTEGER,"		/* NULL without --verify */
"  bytes INTEGER NOT NULL,"
"  iops REAL, bandwidth_bytes_per_s REAL, mean_ns REAL,"
"  p50_ns INTEGER, p90_ns INTEGER, p99_ns INTEGER, p999_ns INTEGER, max_ns INTEGER,"
"  device_index INTEGER NOT NULL DEFAULT 0,"
"  PRIMARY KEY (session_id, point));"

"CREATE TABLE IF NOT EXISTS io_latency_buckets ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  point INTEGER NOT NULL,"
"  lo_ns INTEGER NOT NULL, hi_ns INTEGER NOT NULL,"	/* the bucket's values, inclusive */
"  count INTEGER NOT NULL);"

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

"CREATE VIEW IF NOT EXISTS bars_view AS SELECT session_id, bdf, bar_index,"
"  printf('0x%x', start_addr) AS start_hex, printf('0x%x', start_addr + size_bytes) AS end_hex,"
"  size_bytes, is_64bit, prefetchable FROM bars;"

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

/* Per io -o session, device and queue depth: the means over the repeats (mean latency weighted
 * by completions, as the printed table has it). */
"CREATE VIEW IF NOT EXISTS io_summary_view AS SELECT p.session_id, r.engine,"
"  IFNULL(d.device, r.device) AS device, p.device_index,"
"  r.workload, r.bs_bytes, r.buffer, p.qd, COUNT(*) AS repeats, AVG(p.iops) AS iops,"
"  AVG(p.bandwidth_bytes_per_s) AS bandwidth_bytes_per_s,"
"  SUM(p.mean_ns * p.completed) / NULLIF(SUM(p.completed), 0) AS mean_ns,"
"  AVG(p.p99_ns) AS p99_ns, SUM(p.completed) AS completed, SUM(p.failed) AS failed"
"  FROM io_points p JOIN io_runs r USING (session_id)"
"  LEFT JOIN io_devices d ON d.session_id = p.session_id AND d.device_index = p.device_index"
"  GROUP BY p.session_id, p.device_index, p.qd;"

/* Per io -o session and queue depth, all devices together: each point's sums over the devices
 * that ran it at once (IOPS, bandwidth; mean latency weighted by completions), then the means
 * over the repeats (and over repeated depths of the --qd list). Points are numbered device by
 * device within each point of the sweep, so point / device_count names the sweep's point. */
"CREATE VIEW IF NOT EXISTS io_total_view AS"
"  WITH per_step AS (SELECT p.session_id, p.point / r.device_count AS step, p.qd,"
"    COUNT(*) AS devices, SUM(p.iops) AS iops,"
"    SUM(p.bandwidth_bytes_per_s) AS bandwidth_bytes_per_s,"
"    SUM(p.mean_ns * p.completed) AS lat_ns, SUM(p.completed) AS completed,"
"    SUM(p.failed) AS failed"
"    FROM io_points p JOIN io_runs r USING (session_id) GROUP BY p.session_id, step)"
"  SELECT r.session_id, r.engine, r.workload, r.bs_bytes, r.buffer, s.qd,"
"    MAX(s.devices) AS devices, COUNT(*) AS repeats, AVG(s.iops) AS iops,"
"    AVG(s.bandwidth_bytes_per_s) AS bandwidth_bytes_per_s,"
"    SUM(s.lat_ns) / NULLIF(SUM(s.completed), 0) AS mean_ns,"
"    SUM(s.completed) AS completed, SUM(s.failed) AS failed"
"  FROM per_step s JOIN io_runs r USING (session_id) GROUP BY s.session_id, s.qd;"

/* Each physical range of a map -o buffer (map_backing), with the PCI BAR it falls in, if any, and
 * its offset there: where a GPU's or peer's memory sits in its BAR. */
"CREATE VIEW IF NOT EXISTS map_backing_bars_view AS SELECT k.session_id, k.offset_bytes,"
"  printf('0x%x', k.paddr) AS paddr_hex, k.paddr, k.size_bytes, b.bdf AS bar_device,"
"  b.bar_index, k.paddr - b.start_addr AS bar_offset_bytes,"
"  " HEX("k.paddr - b.start_addr") " AS bar_offset_hex"
"  FROM map_backing k LEFT JOIN bars b ON b.session_id = k.session_id"
"   AND k.paddr >= b.start_addr AND k.paddr < b.start_addr + b.size_bytes;"

/* What was still mapped when the session ended, per map: the bytes of it never unmapped. */
"CREATE VIEW IF NOT EXISTS live_mappings_view AS SELECT p.session_id, p.map_id,"
"  " HEX("p.domain_ptr") " AS domain, p.domain_ptr, printf('0x%x', p.iova) AS iova_hex,"
"  printf('0x%x', p.paddr) AS paddr_hex, p.iova, p.paddr, p.size_bytes, p.mapped_ns, m.comm"
"  FROM map_pieces p LEFT JOIN maps m ON m.map_id = p.map_id WHERE p.unmapped_ns IS NULL;"

/* Live mapped bytes per domain after each change (a map, an unmap, the end of a remapped piece),
 * from map_pieces: MAX(live_bytes) is the domain's peak. */
"CREATE VIEW IF NOT EXISTS live_bytes_view AS"
"  WITH changes AS (SELECT session_id, domain_ptr, mapped_ns AS ts_ns, size_bytes AS delta"
"    FROM map_pieces UNION ALL SELECT session_id, domain_ptr, unmapped_ns, -size_bytes"
"    FROM map_pieces WHERE unmapped_ns IS NOT NULL),"
"  steps AS (SELECT session_id, domain_ptr, ts_ns, SUM(delta) AS delta FROM changes"
"    GROUP BY session_id, domain_ptr, ts_ns)"
"  SELECT session_id, domain_ptr, ts_ns, SUM(delta) OVER (PARTITION BY session_id, domain_ptr"
"    ORDER BY ts_ns ROWS UNBOUNDED PRECEDING) AS live_bytes FROM steps;"

/* Per map -o session and page size: the pages the leaf rule expects (per mapping, times the
 * mappings made) beside the driver pages recorded in the mapped IOVA range, which for an import
 * is every DMA segment of every repetition (a page counted once where repetitions reused an
 * IOVA range); where the session knows the run's device's domains, in those only (other domains
 * have IOVAs of their own). */
"CREATE VIEW IF NOT EXISTS map_pages_check_view AS"
"  WITH seen AS (SELECT r.session_id, d.pgsize_bytes, SUM(d.pgcount) AS pages,"
"    group_concat(DISTINCT d.source) AS source FROM map_runs r JOIN driver_maps d"
"    ON d.session_id = r.session_id AND d.op = 'map'"
"    AND (d.domain_ptr IS NULL OR d.domain_ptr IN (SELECT domain_ptr FROM domain_devices_view v"
"     WHERE v.session_id = r.session_id AND v.device = r.device) OR NOT EXISTS (SELECT 1"
"     FROM domain_devices_view v WHERE v.session_id = r.session_id AND v.device = r.device))"
"    AND CASE WHEN r.dma_segments IS NULL"
"     THEN d.iova >= r.iova AND d.iova < r.iova + r.size_bytes"
"     ELSE EXISTS (SELECT 1 FROM map_dma_segments g WHERE g.session_id = r.session_id"
"      AND d.iova >= g.dma_addr AND d.iova < g.dma_addr + g.length_bytes) END"
"    GROUP BY r.session_id, d.pgsize_bytes),"
"  sizes AS (SELECT session_id, pgsize_bytes FROM seen"
"    UNION SELECT session_id, pgsize_bytes FROM map_expected_pages)"
"  SELECT z.session_id, z.pgsize_bytes, e.pgcount AS expected_per_map, r.maps_done,"
"    IFNULL(e.pgcount, 0) * r.maps_done AS expected_pages, IFNULL(s.pages, 0) AS seen_pages,"
"    s.source, IFNULL(e.pgcount, 0) * r.maps_done = IFNULL(s.pages, 0) AS agrees"
"  FROM sizes z JOIN map_runs r ON r.session_id = z.session_id"
"  LEFT JOIN map_expected_pages e ON e.session_id = z.session_id"
"   AND e.pgsize_bytes = z.pgsize_bytes"
"  LEFT JOIN seen s ON s.session_id = z.session_id AND s.pgsize_bytes = z.pgsize_bytes;"

/* map_aggregates summed over the session's flushes, with readable classes: call sizes from
 * call_size_min_bytes up to (not including) twice that. */
"CREATE VIEW IF NOT EXISTS map_aggregates_view AS SELECT session_id,"
"  " HEX("domain_ptr") " AS domain, domain_ptr, op, size_log2,"
"  CASE WHEN op = 'qi_submit' THEN NULL ELSE 1 << size_log2 END AS call_size_min_bytes,"
"  CASE WHEN op = 'qi_submit' THEN NULL ELSE " POW2_TEXT("size_log2") " END"
"  AS call_size_class, pgsize_bytes, align_log2,"
"  SUM(count) AS count, SUM(bytes) AS bytes, SUM(pages) AS pages, COUNT(*) AS flushes"
"  FROM map_aggregates GROUP BY session_id, domain_ptr, op, size_log2, pgsize_bytes, align_log2;";

const char it_schema_v3_before_sql[] =
"ALTER TABLE io_runs ADD COLUMN device_count INTEGER NOT NULL DEFAULT 1;"
"ALTER TABLE io_points ADD COLUMN device_index INTEGER NOT NULL DEFAULT 0;"
"DROP VIEW IF EXISTS io_summary_view;";

const char it_schema_v3_after_sql[] =
"INSERT OR IGNORE INTO io_devices(session_id, device_index, device, model, serial, block_size,"
"  blocks, iova, bar_offset_bytes) SELECT session_id, 0, device, model, serial, block_size,"
"  blocks, iova, bar_offset_bytes FROM io_runs;";

const char it_schema_v5_before_sql[] =
"ALTER TABLE map_runs ADD COLUMN phys_source TEXT;"
"ALTER TABLE map_runs ADD COLUMN exporter TEXT;"
"ALTER TABLE map_runs ADD COLUMN exporter_device TEXT;"
"ALTER TABLE map_runs ADD COLUMN dma_segments INTEGER;"
"UPDATE map_runs SET phys_source = CASE WHEN bar_device IS NOT NULL THEN 'bar' ELSE 'pagemap'"
"  END WHERE phys_runs IS NOT NULL;"
"DROP VIEW IF EXISTS map_pages_check_view;";

const char it_schema_index_sql[] =
"CREATE INDEX IF NOT EXISTS maps_by_session_ts ON maps(session_id, ts_ns);"
"CREATE INDEX IF NOT EXISTS unmaps_by_session_ts ON unmaps(session_id, ts_ns);"
"CREATE INDEX IF NOT EXISTS unmaps_by_thread ON unmaps(session_id, tid, ts_ns);"
"CREATE INDEX IF NOT EXISTS maps_by_thread ON maps(session_id, tid, ts_ns);"
"CREATE INDEX IF NOT EXISTS driver_maps_by_map ON driver_maps(map_id);"
"CREATE INDEX IF NOT EXISTS driver_maps_by_unmap ON driver_maps(unmap_id);"
IT_MAP_PIECES_BY_SESSION_SQL ";";
