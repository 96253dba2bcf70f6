/* The views behind report (see views.h and docs/schema.md): one per section of `iommutrace
 * report`, each with session_id, so that the report is also a set of queries in sqlite3. */
#include "common/schema.h"
#include "analyzer/views.h"

/* The session's length in ns: NULL while incomplete, or for an import without events */
#define DURATION_NS "(s.end_mono_ns - s.start_mono_ns)"

/* iommu_domain.type as the kernel stores it (see docs/schema.md, domains) */
#define DOMAIN_TYPE(col) \
	"CASE " col " WHEN 0 THEN 'blocked' WHEN 1 THEN 'unmanaged' WHEN 3 THEN 'DMA'" \
	" WHEN 4 THEN 'identity' WHEN 11 THEN 'DMA-FQ' ELSE CAST(" col " AS TEXT) END"

/* Per session and domain (NULL, unknown, is one) with maps, or with unmaps: its maps (count,
 * bytes) and unmaps (count, bytes unmapped), for the views below. From domain_summary, which the
 * lifetimes sweep writes with map_pieces (analyzer/summary.h): what GROUP BY over maps and
 * unmaps gives, without reading every event again. */
#define DOMAIN_PARTS \
	"m AS (SELECT session_id, domain_ptr, maps, map_bytes FROM domain_summary WHERE maps > 0)," \
	"u AS (SELECT session_id, domain_ptr, unmaps, unmapped_bytes FROM domain_summary" \
	"  WHERE unmaps > 0),"

/* The session's total of a domain_summary column */
#define SESSION_SUM(col) \
	"(SELECT IFNULL(SUM(" col "), 0) FROM domain_summary WHERE session_id = s.session_id)"

/* SQL text, laid out as SQL */
/* clang-format off */
const char analyzer_report_views_sql[] =
/* The session: what was recorded, for how long, and whether all of it arrived. */
"DROP VIEW IF EXISTS report_session_view;"
"CREATE VIEW report_session_view AS SELECT s.session_id, s.kind, s.capture, s.hostname,"
"  s.kernel_release, " DURATION_NS " / 1e9 AS duration_s, s.events_total, s.events_lost,"
"  s.complete, s.end_reason, s.command_exit_status, s.command, s.source_path"
"  FROM sessions s;"

/* The probes, one row per role and outcome: which attached, how, and why the others did not. */
"DROP VIEW IF EXISTS report_probes_view;"
"CREATE VIEW report_probes_view AS SELECT session_id, role, attached, mechanism,"
"  COUNT(*) AS probes, reason, group_concat(target, ' ') AS targets"
"  FROM (SELECT * FROM probes ORDER BY session_id, probe_id)"
"  GROUP BY session_id, role, attached, mechanism, reason"
"  ORDER BY session_id, MIN(probe_id);"

/* Per domain, and 'all' for the session: what was mapped and unmapped, and the leaf page-table
 * entries written for the maps (observed, derived, or mixed where the maps had both; from
 * page_size_summary, the driver_maps rows of the maps summed). A domain is listed when a map, an
 * unmap, a domains row or an attach names it; its type is the domains row's, else an attach's
 * (a domain no core call named, such as a static blocking one). */
"DROP VIEW IF EXISTS report_domains_view;"
"CREATE VIEW report_domains_view AS WITH " DOMAIN_PARTS
"  p AS (SELECT session_id, domain_ptr, SUM(pages) AS pages,"
"    CASE WHEN MIN(source) = MAX(source) THEN MIN(source) ELSE 'mixed' END AS source"
"    FROM page_size_summary GROUP BY session_id, domain_ptr),"
"  dev AS (SELECT session_id, domain_ptr, group_concat(device, ',') AS devices FROM"
"    (SELECT session_id, domain_ptr, device FROM domain_devices_view ORDER BY device)"
"    GROUP BY session_id, domain_ptr),"
"  k AS (SELECT session_id, domain_ptr FROM m UNION SELECT session_id, domain_ptr FROM u"
"    UNION SELECT session_id, domain_ptr FROM domains"
"    UNION SELECT session_id, domain_ptr FROM dev)"
"  SELECT k.session_id, " HEX("k.domain_ptr") " AS domain, " DOMAIN_TYPE("IFNULL(d.domain_type,"
"    (SELECT a.domain_type FROM attaches a WHERE a.session_id = k.session_id"
"     AND a.domain_ptr = k.domain_ptr AND a.domain_type IS NOT NULL LIMIT 1))") " AS type,"
"    d.pgsize_bitmap, IFNULL(m.maps, 0) AS maps, IFNULL(m.map_bytes, 0) AS map_bytes,"
"    IFNULL(u.unmaps, 0) AS unmaps, IFNULL(u.unmapped_bytes, 0) AS unmapped_bytes,"
"    IFNULL(p.pages, 0) AS pages, p.source AS pages_source, dev.devices"
"  FROM k LEFT JOIN domains d ON d.session_id = k.session_id AND d.domain_ptr = k.domain_ptr"
"  LEFT JOIN m ON m.session_id = k.session_id AND m.domain_ptr IS k.domain_ptr"
"  LEFT JOIN u ON u.session_id = k.session_id AND u.domain_ptr IS k.domain_ptr"
"  LEFT JOIN p ON p.session_id = k.session_id AND p.domain_ptr IS k.domain_ptr"
"  LEFT JOIN dev ON dev.session_id = k.session_id AND dev.domain_ptr IS k.domain_ptr"
"  UNION ALL SELECT s.session_id, 'all', NULL, NULL, " SESSION_SUM("maps") ","
"    " SESSION_SUM("map_bytes") ", " SESSION_SUM("unmaps") ", " SESSION_SUM("unmapped_bytes") ","
"    IFNULL(SUM(p.pages), 0),"
"    CASE WHEN COUNT(DISTINCT p.source) > 1 THEN 'mixed' ELSE MIN(p.source) END,"
"    (SELECT group_concat(device, ',') FROM (SELECT DISTINCT device FROM domain_devices_view"
"     WHERE session_id = s.session_id ORDER BY device))"
"  FROM sessions s LEFT JOIN p ON p.session_id = s.session_id GROUP BY s.session_id;"

/* Per domain with maps or unmaps, and 'all' for the session: the most bytes mapped at once and
 * those still mapped at the end, with the maps they belong to, the bytes mapped over while
 * still mapped, and maps per second of the session. The lifetimes sweep writes these numbers
 * with map_pieces (domain_summary, session_summary; analyzer/summary.h): what MAX(live_bytes)
 * of live_bytes_view, live_mappings_view and the 'remapped' pieces give, without reading every
 * piece again. The session's peak is that of the sum over its domains. */
"DROP VIEW IF EXISTS report_live_view;"
"CREATE VIEW report_live_view AS"
"  SELECT d.session_id, " HEX("d.domain_ptr") " AS domain, d.peak_live_bytes,"
"    d.end_live_bytes, d.live_maps, d.remapped_bytes,"
"    d.maps * 1e9 / NULLIF(" DURATION_NS ", 0) AS maps_per_s,"
"    d.map_bytes * 1e9 / NULLIF(" DURATION_NS ", 0) AS map_bytes_per_s"
"  FROM domain_summary d JOIN sessions s ON s.session_id = d.session_id"
"  UNION ALL SELECT s.session_id, 'all', IFNULL(ss.peak_live_bytes, 0),"
"    " SESSION_SUM("end_live_bytes") ", " SESSION_SUM("live_maps") ","
"    " SESSION_SUM("remapped_bytes") ","
"    " SESSION_SUM("maps") " * 1e9 / NULLIF(" DURATION_NS ", 0),"
"    " SESSION_SUM("map_bytes") " * 1e9 / NULLIF(" DURATION_NS ", 0)"
"  FROM sessions s LEFT JOIN session_summary ss ON ss.session_id = s.session_id;"

/* Per domain: map calls by size class, each size rounded up to a power of two up to 2^62 (a
 * class of 16 KiB holds the calls of more than 8 KiB up to 16 KiB; size 0 is its own class, 0;
 * a larger size has none, NULL). Classed by the lifetimes sweep (call_size_summary). */
"DROP VIEW IF EXISTS report_call_sizes_view;"
"CREATE VIEW report_call_sizes_view AS"
"  SELECT session_id, " HEX("domain_ptr") " AS domain, call_size_bytes, SUM(maps) AS maps,"
"    SUM(map_bytes) AS map_bytes"
"  FROM call_size_summary GROUP BY session_id, domain_ptr, call_size_bytes;"

/* Per domain: the leaf pages written for its maps, per page size and source (observed: the
 * driver's map_pages arguments; derived: the leaf rule), each source on its own row, and the
 * share of the domain's page bytes they hold. From page_size_summary: the maps' driver_maps
 * rows, summed by the lifetimes sweep. */
"DROP VIEW IF EXISTS report_page_sizes_view;"
"CREATE VIEW report_page_sizes_view AS"
"  WITH r AS (SELECT session_id, domain_ptr, pgsize_bytes, source, SUM(pages) AS pages,"
"    SUM(map_bytes) AS map_bytes FROM page_size_summary"
"    GROUP BY session_id, domain_ptr, pgsize_bytes, source)"
"  SELECT session_id, " HEX("domain_ptr") " AS domain, pgsize_bytes, source, pages, map_bytes,"
"    100.0 * map_bytes / SUM(map_bytes) OVER (PARTITION BY session_id, domain_ptr) AS bytes_pct"
"  FROM r;"

/* A snapshot session (`iommutrace snapshot`): each IOMMU group read, its devices (the session's
 * inventory), the domain it had and what its table held. */
"DROP VIEW IF EXISTS report_snapshot_groups_view;"
"CREATE VIEW report_snapshot_groups_view AS"
"  SELECT g.session_id, g.group_id,"
"    (SELECT group_concat(bdf, ' ') FROM (SELECT bdf FROM devices d WHERE d.session_id ="
"      g.session_id AND d.iommu_group = g.group_id ORDER BY bdf)) AS devices,"
"    " HEX("g.domain_ptr") " AS domain, " DOMAIN_TYPE("s.domain_type") " AS type,"
"    IFNULL(s.kind, 'none') AS kind, s.levels, s.leaves, s.runs, s.consistent"
"  FROM snapshot_groups g LEFT JOIN snapshot_domains s USING (session_id, domain_ptr);"

/* A snapshot session: the pages of each size each translated domain held. */
"DROP VIEW IF EXISTS report_snapshot_pages_view;"
"CREATE VIEW report_snapshot_pages_view AS"
"  SELECT session_id, " HEX("domain_ptr") " AS domain, pgsize_bytes, pages,"
"    bytes AS mapped_bytes, runs FROM snapshot_pages_view;"

/* Per map with bytes still mapped when the session ended (live_mappings_view, its pieces
 * added): the map as made, and how much of it is still mapped. */
"DROP VIEW IF EXISTS report_live_mappings_view;"
"CREATE VIEW report_live_mappings_view AS SELECT l.session_id, l.map_id,"
"  " HEX("m.domain_ptr") " AS domain, m.iova, m.paddr, m.size_bytes,"
"  SUM(l.size_bytes) AS live_bytes, (m.ts_ns - s.start_mono_ns) / 1e9 AS mapped_at_s, m.comm"
"  FROM live_mappings_view l JOIN maps m ON m.map_id = l.map_id"
"  JOIN sessions s ON s.session_id = l.session_id"
"  GROUP BY l.session_id, l.map_id;"

/* Lost events per kind and reason, over the CPUs that lost them, with what the reason means. */
"DROP VIEW IF EXISTS report_losses_view;"
"CREATE VIEW report_losses_view AS SELECT session_id, event, reason, SUM(lost) AS lost,"
"  CASE reason"
"   WHEN 'ringbuf-full'"
"    THEN 'the BPF ring buffer was full: record again with a larger --ring-size'"
"   WHEN 'aggregates-full'"
"    THEN 'the counting hash was full (no room for a new class): neither recorded nor counted'"
"   WHEN 'tracefs-overrun' THEN 'the tracefs per-CPU buffer overran before it was read'"
"   WHEN 'ftrace-lost' THEN 'ftrace overwrote them before they were read (the file says so)'"
"   WHEN 'ftrace-lost-unknown' THEN 'the file marks a gap of unknown size (counted as 1)'"
"   WHEN 'trace.dat-missed' THEN 'the trace.dat says the kernel missed them'"
"   WHEN 'trace.dat-missed-unknown'"
"    THEN 'the trace.dat marks a gap of unknown size (counted as 1)'"
"   WHEN 'out-of-range'"
"    THEN 'a time, size or page count from 2^63 on, more than the database holds: not stored'"
"  END AS meaning,"
"  group_concat(cpu, ',') AS cpus"
"  FROM (SELECT * FROM losses ORDER BY session_id, cpu)"
"  GROUP BY session_id, event, reason;"

/* A map -o session's run, short: what was mapped, how often, and whether the driver wrote the
 * pages the leaf rule expects (map_pages_check_view: every page size agrees; NULL when no page
 * sizes were known to expect any). */
"DROP VIEW IF EXISTS report_map_runs_view;"
"CREATE VIEW report_map_runs_view AS SELECT r.session_id, r.mapper, r.device, r.buffer,"
"  r.size_bytes, r.repeat_count, r.maps_done,"
"  CASE WHEN r.expected_pgsize_bitmap IS NOT NULL THEN (SELECT MIN(c.agrees)"
"   FROM map_pages_check_view c WHERE c.session_id = r.session_id) END AS pages_agree"
"  FROM map_runs r;"

/* An io -o session's run, short: what was read, on which devices, at which queue depths, and
 * the best mean IOPS of all devices together (io_total_view) with its queue depth. */
"DROP VIEW IF EXISTS report_io_runs_view;"
"CREATE VIEW report_io_runs_view AS"
"  WITH q AS (SELECT session_id, group_concat(qd, ',') AS qds FROM"
"    (SELECT session_id, qd FROM io_total_view ORDER BY session_id, qd) GROUP BY session_id)"
"  SELECT r.session_id, r.engine, r.workload, r.bs_bytes, r.buffer, r.device AS devices,"
"    q.qds, (SELECT CAST(ROUND(MAX(t.iops)) AS INTEGER) FROM io_total_view t"
"     WHERE t.session_id = r.session_id) AS best_iops,"
"    (SELECT t.qd FROM io_total_view t WHERE t.session_id = r.session_id"
"     ORDER BY t.iops DESC, t.qd LIMIT 1) AS best_qd"
"  FROM io_runs r LEFT JOIN q ON q.session_id = r.session_id;";
/* clang-format on */
