/* The views behind runs (see views.h and docs/schema.md): each io -o run per queue depth with the
 * page sizes of its buffers, whether its numbers hold together, and what the IOMMU changed
 * between comparable runs with it off and on. */
#include "analyzer/views.h"

/* A map whose domain belongs to device v: unknown domains count, and so does every domain of a
 * device the recording tied to no domain (tracefs, import). */
#define DEVICE_DOMAIN(m, v) \
	"(" m ".domain_ptr IS NULL OR NOT EXISTS (SELECT 1 FROM attaches a" \
	"  WHERE a.session_id = " v ".session_id AND a.device = " v ".device" \
	"  AND a.domain_ptr IS NOT NULL AND a.event != 'group_remove')" \
	" OR " m ".domain_ptr IN (SELECT a.domain_ptr FROM attaches a" \
	"  WHERE a.session_id = " v ".session_id AND a.device = " v ".device" \
	"  AND a.domain_ptr IS NOT NULL AND a.event != 'group_remove'))"

/* The common table expressions that end in runs(...): per io -o session and queue depth, the
 * run's parameters with IOPS, bandwidth, mean and p99 latency. runs_view adds the page sizes; the
 * validity and change views use these rows without paying for them. The p99 is that of all the
 * repeats' and devices' commands together: the upper bound of the bucket of their merged
 * histograms that holds the 99th percentile (never above the largest latency), as io computes it
 * for one point (io/lat_hist.c). The vfio engine always runs translated (VFIO's own domain), also
 * where io_devices.iommu is unknown (rows migrated from schema 3). */
#define RUNS_CTES \
	"run AS (SELECT r.session_id, r.engine, r.workload, r.bs_bytes, r.buffer, r.buffer_kind," \
	"  CASE WHEN r.buffer_kind = 'bar' THEN substr(r.buffer, 5, instr(r.buffer, '/') - 5) END" \
	"    AS bar_device," \
	"  CASE WHEN r.buffer_kind = 'bar' THEN CAST(substr(r.buffer, instr(r.buffer, '/') + 1)" \
	"    AS INTEGER) END AS bar_index," \
	"  r.bar_offset_bytes, r.device_count AS devices," \
	"  (SELECT CASE WHEN COUNT(v.iommu) < COUNT(*) THEN NULL WHEN MIN(v.iommu) = MAX(v.iommu)" \
	"    THEN MIN(v.iommu) ELSE 'mixed' END FROM io_devices v" \
	"    WHERE v.session_id = r.session_id) AS iommu" \
	"  FROM io_runs r)," \
	"sweep AS (SELECT session_id, qd, COUNT(*) AS repeats, AVG(iops) AS iops," \
	"  AVG(bandwidth_bytes_per_s) AS bandwidth FROM runs_steps_view GROUP BY session_id, qd)," \
	"latency AS (SELECT session_id, qd," \
	"  SUM(mean_ns * completed) / NULLIF(SUM(completed), 0) AS mean_ns, MAX(max_ns) AS max_ns," \
	"  SUM(completed) AS completed, SUM(failed) AS failed FROM io_points GROUP BY session_id, qd)," \
	"buckets AS (SELECT p.session_id, p.qd, b.hi_ns, SUM(b.count) AS n FROM io_latency_buckets b" \
	"  JOIN io_points p ON p.session_id = b.session_id AND p.point = b.point" \
	"  GROUP BY p.session_id, p.qd, b.hi_ns)," \
	"cumulative AS (SELECT session_id, qd, hi_ns," \
	"  SUM(n) OVER (PARTITION BY session_id, qd ORDER BY hi_ns) AS at_most," \
	"  SUM(n) OVER (PARTITION BY session_id, qd) AS total FROM buckets)," \
	"p99 AS (SELECT session_id, qd, MIN(hi_ns) AS hi_ns FROM cumulative" \
	"  WHERE at_most >= MAX(1, CAST(0.99 * total + 0.999999 AS INTEGER)) GROUP BY session_id, qd)," \
	"runs AS (SELECT r.session_id, r.engine, r.workload, r.bs_bytes, r.buffer, r.buffer_kind," \
	"  r.bar_device, r.bar_index, r.bar_offset_bytes, r.devices, r.iommu," \
	"  CASE WHEN r.engine = 'uio' OR r.iommu IN ('off', 'passthrough') THEN 'off'" \
	"    WHEN r.engine = 'vfio' OR r.iommu = 'translated' THEN 'on' END AS iommu_state," \
	"  s.qd, s.repeats, s.iops, s.bandwidth / 1e9 AS gb_per_s, l.mean_ns," \
	"  MIN(p.hi_ns, l.max_ns) AS p99_ns, l.completed, l.failed" \
	"  FROM run r JOIN sweep s ON s.session_id = r.session_id" \
	"  JOIN latency l ON l.session_id = s.session_id AND l.qd = s.qd" \
	"  LEFT JOIN p99 p ON p.session_id = s.session_id AND p.qd = s.qd)"

/* Two rows of runs at the same point but for what is compared: workload, block size, buffer
 * kind, device count and queue depth. */
#define SAME_POINT(a, b) \
	b ".workload = " a ".workload AND " b ".bs_bytes = " a ".bs_bytes AND " b \
	  ".buffer_kind = " a ".buffer_kind AND " b ".devices = " a ".devices AND " b ".qd = " a \
	  ".qd"

/* SQL text, laid out as SQL */
/* clang-format off */
const char analyzer_runs_views_sql[] =
/* The tolerances of runs_validity_view, in one row: recreate this view to change them. */
"DROP VIEW IF EXISTS runs_limits_view;"
"CREATE VIEW runs_limits_view AS SELECT 5.0 AS spread_max_pct, 10.0 AS littles_law_max_pct,"
"  10.0 AS engines_max_pct, 97.0 AS ceiling_min_pct;"

/* Per io -o session and point of the sweep (one queue depth, one repeat, all devices at once):
 * the devices' sums. A point of the sweep is io_points.point / device_count, as in
 * io_total_view. in_flight is Little's law's L = IOPS x mean latency, summed over the devices. */
"DROP VIEW IF EXISTS runs_steps_view;"
"CREATE VIEW runs_steps_view AS SELECT p.session_id, p.point / r.device_count AS step, p.qd,"
"  MIN(p.repeat_index) AS repeat_index, COUNT(*) AS devices, SUM(p.iops) AS iops,"
"  SUM(p.bandwidth_bytes_per_s) AS bandwidth_bytes_per_s,"
"  SUM(p.iops * p.mean_ns) / 1e9 AS in_flight, SUM(p.completed) AS completed,"
"  SUM(p.failed) AS failed"
"  FROM io_points p JOIN io_runs r ON r.session_id = p.session_id"
"  GROUP BY p.session_id, step;"

/* The IOMMU pages of each run's buffers. 'buffer': the engine maps its buffer itself (vfio) at
 * io_devices.iova: the driver pages of the maps of [iova, iova + size_bytes) in the device's
 * domains, for the whole run (qd NULL). 'commands': the kernel maps each command (uring): the
 * driver pages of the maps made during the points of each queue depth in the device's domains. A
 * driver page row counts once however many devices' ranges or points hold it. */
"DROP VIEW IF EXISTS runs_pages_view;"
"CREATE VIEW runs_pages_view AS WITH page_rows AS ("
"  SELECT d.rowid AS row_id, v.session_id, NULL AS qd, 'buffer' AS pages_from, d.pgsize_bytes,"
"    d.pgcount, d.source"
"    FROM io_runs r JOIN io_devices v ON v.session_id = r.session_id AND v.iova IS NOT NULL"
"    JOIN maps m ON m.session_id = v.session_id AND m.iova < v.iova + r.size_bytes"
"     AND m.iova + m.size_bytes > v.iova"
"    JOIN driver_maps d ON d.map_id = m.map_id AND d.op = 'map' AND d.iova >= v.iova"
"     AND d.iova < v.iova + r.size_bytes"
"    WHERE " DEVICE_DOMAIN("m", "v")
"  UNION SELECT d.rowid, p.session_id, p.qd, 'commands', d.pgsize_bytes, d.pgcount, d.source"
"    FROM io_runs r JOIN io_devices v ON v.session_id = r.session_id AND r.engine = 'uring'"
"    JOIN io_points p ON p.session_id = v.session_id AND p.device_index = v.device_index"
"    JOIN maps m ON m.session_id = p.session_id"
"     AND m.ts_ns BETWEEN p.start_mono_ns AND p.end_mono_ns"
"    JOIN driver_maps d ON d.map_id = m.map_id AND d.op = 'map'"
"    WHERE " DEVICE_DOMAIN("m", "v") ")"
"  SELECT session_id, qd, pages_from, pgsize_bytes, source, SUM(pgcount) AS pages,"
"    SUM(pgsize_bytes * pgcount) AS bytes FROM page_rows"
"  GROUP BY session_id, qd, pages_from, pgsize_bytes, source;"

/* Per io -o session and queue depth: what the reference study tabulates, with the page sizes of
 * the buffers ("2 MiB x 4 observed"; for uring, of the commands of that queue depth). */
"DROP VIEW IF EXISTS runs_view;"
"CREATE VIEW runs_view AS WITH " RUNS_CTES ","
"page_rows AS (SELECT r.session_id, r.qd, g.pgsize_bytes, g.source,"
"  " SIZE_TEXT("g.pgsize_bytes") " || ' x ' || g.pages || ' ' || g.source AS label"
"  FROM runs r JOIN runs_pages_view g ON g.session_id = r.session_id"
"   AND (g.qd IS NULL OR g.qd = r.qd)"
"  ORDER BY r.session_id, r.qd, g.pgsize_bytes, g.source),"
"page_sizes AS (SELECT session_id, qd, group_concat(label, ', ') AS page_sizes FROM page_rows"
"  GROUP BY session_id, qd)"
"  SELECT r.*, g.page_sizes FROM runs r"
"  LEFT JOIN page_sizes g ON g.session_id = r.session_id AND g.qd = r.qd;"

/* Per io -o session and queue depth, the reference study's checks, each a verdict ('ok', or NULL
 * where it cannot be made): the spread of the repeats' IOPS (sample standard deviation, as % of
 * their mean); Little's law (IOPS x mean latency against devices x qd commands kept in flight);
 * agreement with the other engines that ran the same point with the IOMMU in the same state;
 * and the throughput ceiling: the run's bandwidth against the sum of its devices' peaks, each
 * device's peak being the highest mean bandwidth it reached at any queue depth of any run in this
 * database (reads and writes apart). */
"DROP VIEW IF EXISTS runs_validity_view;"
"CREATE VIEW runs_validity_view AS WITH " RUNS_CTES ","
"spread AS (SELECT s.session_id, s.qd,"
"  100.0 * sqrt(SUM((s.iops - m.iops) * (s.iops - m.iops)) / (COUNT(*) - 1)) / m.iops"
"    AS spread_pct"
"  FROM runs_steps_view s JOIN sweep m ON m.session_id = s.session_id AND m.qd = s.qd"
"  GROUP BY s.session_id, s.qd HAVING COUNT(*) > 1 AND m.iops > 0),"
"little AS (SELECT session_id, qd, AVG(in_flight) AS in_flight FROM runs_steps_view"
"  GROUP BY session_id, qd),"
"device_bw AS (SELECT p.session_id, p.qd, v.device, v.serial,"
"  substr(r.workload, -4) = 'read' AS reads, AVG(p.bandwidth_bytes_per_s) AS bandwidth"
"  FROM io_points p JOIN io_runs r ON r.session_id = p.session_id"
"  JOIN io_devices v ON v.session_id = p.session_id AND v.device_index = p.device_index"
"  GROUP BY p.session_id, p.qd, p.device_index),"
"peak AS (SELECT device, serial, reads, MAX(bandwidth) AS bandwidth FROM device_bw"
"  GROUP BY device, serial, reads),"
"ceiling AS (SELECT b.session_id, b.qd, SUM(k.bandwidth) AS bandwidth FROM device_bw b"
"  JOIN peak k ON k.device = b.device AND k.serial IS b.serial AND k.reads = b.reads"
"  GROUP BY b.session_id, b.qd),"
"engines AS (SELECT a.session_id, a.qd, group_concat(DISTINCT b.engine) AS other_engines,"
"  AVG(b.iops) AS iops FROM runs a JOIN runs b ON " SAME_POINT("a", "b")
"   AND b.iommu_state = a.iommu_state AND b.engine != a.engine"
"  GROUP BY a.session_id, a.qd),"
"checks AS (SELECT r.session_id, r.engine, r.workload, r.bs_bytes, r.buffer_kind, r.devices,"
"  r.iommu, r.qd, r.repeats, s.spread_pct,"
"  CASE WHEN s.spread_pct IS NULL THEN NULL WHEN s.spread_pct > x.spread_max_pct"
"    THEN 'spread' ELSE 'ok' END AS spread_check,"
"  l.in_flight, r.devices * r.qd AS expected_in_flight,"
"  100.0 * (l.in_flight / (r.devices * r.qd) - 1) AS littles_law_pct,"
"  CASE WHEN l.in_flight IS NULL THEN NULL"
"    WHEN ABS(100.0 * (l.in_flight / (r.devices * r.qd) - 1)) > x.littles_law_max_pct"
"    THEN 'littles-law' ELSE 'ok' END AS littles_law_check,"
"  e.other_engines, 100.0 * (r.iops / e.iops - 1) AS engines_diff_pct,"
"  CASE WHEN e.iops IS NULL OR e.iops = 0 THEN NULL"
"    WHEN ABS(100.0 * (r.iops / e.iops - 1)) > x.engines_max_pct THEN 'engines-disagree'"
"    ELSE 'ok' END AS engines_check,"
"  100.0 * r.gb_per_s * 1e9 / NULLIF(c.bandwidth, 0) AS peak_pct,"
"  CASE WHEN NULLIF(c.bandwidth, 0) IS NULL THEN NULL"
"    WHEN 100.0 * r.gb_per_s * 1e9 / c.bandwidth >= x.ceiling_min_pct THEN 'at-ceiling'"
"    ELSE 'ok' END AS ceiling_check"
"  FROM runs r CROSS JOIN runs_limits_view x"
"  LEFT JOIN spread s ON s.session_id = r.session_id AND s.qd = r.qd"
"  LEFT JOIN little l ON l.session_id = r.session_id AND l.qd = r.qd"
"  LEFT JOIN engines e ON e.session_id = r.session_id AND e.qd = r.qd"
"  LEFT JOIN ceiling c ON c.session_id = r.session_id AND c.qd = r.qd)"
"  SELECT *, IFNULL(NULLIF(trim("
"    CASE WHEN spread_check = 'spread' THEN 'spread,' ELSE '' END ||"
"    CASE WHEN littles_law_check = 'littles-law' THEN 'littles-law,' ELSE '' END ||"
"    CASE WHEN engines_check = 'engines-disagree' THEN 'engines-disagree,' ELSE '' END ||"
"    CASE WHEN ceiling_check = 'at-ceiling' THEN 'at-ceiling' ELSE '' END, ','), ''), 'ok')"
"    AS verdict FROM checks;"

/* What the IOMMU changed: each run with it on (translated) beside each comparable run with it
 * off (the uio engine, or a device without translation: iommu off or passthrough), at the same
 * workload, block size, buffer kind, device count and queue depth, in any sessions of this
 * database. Where both are at the throughput ceiling the device limits both, a translation cost
 * cannot show, and the changes are NULL (ceiling_check 'at-ceiling'). */
"DROP VIEW IF EXISTS runs_iommu_change_view;"
"CREATE VIEW runs_iommu_change_view AS WITH " RUNS_CTES ","
"pairs AS (SELECT n.session_id, f.session_id AS off_session_id, n.workload, n.bs_bytes,"
"  n.buffer_kind, n.devices, n.qd, f.engine AS off_engine, f.iommu AS off_iommu,"
"  n.engine AS on_engine, f.iops AS off_iops, n.iops AS on_iops, f.mean_ns AS off_mean_ns,"
"  n.mean_ns AS on_mean_ns, f.p99_ns AS off_p99_ns, n.p99_ns AS on_p99_ns,"
"  vf.peak_pct AS off_peak_pct, vn.peak_pct AS on_peak_pct,"
"  IFNULL(vf.ceiling_check = 'at-ceiling' AND vn.ceiling_check = 'at-ceiling', 0) AS at_ceiling"
"  FROM runs n JOIN runs f ON " SAME_POINT("n", "f")
"   AND n.iommu_state = 'on' AND f.iommu_state = 'off'"
"  LEFT JOIN runs_validity_view vn ON vn.session_id = n.session_id AND vn.qd = n.qd"
"  LEFT JOIN runs_validity_view vf ON vf.session_id = f.session_id AND vf.qd = f.qd)"
"  SELECT session_id, off_session_id, workload, bs_bytes, buffer_kind, devices, qd, off_engine,"
"    off_iommu, on_engine, off_iops, on_iops,"
"    CASE WHEN NOT at_ceiling THEN 100.0 * (on_iops / off_iops - 1) END AS iops_change_pct,"
"    off_mean_ns, on_mean_ns,"
"    CASE WHEN NOT at_ceiling THEN 100.0 * (on_mean_ns / off_mean_ns - 1) END"
"      AS mean_change_pct,"
"    off_p99_ns, on_p99_ns,"
"    CASE WHEN NOT at_ceiling THEN 100.0 * (on_p99_ns * 1.0 / off_p99_ns - 1) END"
"      AS p99_change_pct,"
"    off_peak_pct, on_peak_pct,"
"    CASE WHEN at_ceiling THEN 'at-ceiling' ELSE 'ok' END AS ceiling_check FROM pairs;";
/* clang-format on */
