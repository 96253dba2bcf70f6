/* The harness's tables: `map -o` runs (probes/map_report.c writes them) and `io -o` runs
 * (io/io_report.c), with their views and the steps that migrate older files. */
#include <stdbool.h>
#include "common/schema.h"

/* SQL text, laid out as SQL */
/* clang-format off */
static const char map_runs_sql[] =
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
/* Each physical range of a map -o buffer (map_backing), with the PCI BAR it falls in, if any, and
 * its offset there: where a GPU's or peer's memory sits in its BAR. */
"CREATE VIEW IF NOT EXISTS map_backing_bars_view AS SELECT k.session_id, k.offset_bytes,"
"  printf('0x%x', k.paddr) AS paddr_hex, k.paddr, k.size_bytes, b.bdf AS bar_device,"
"  b.bar_index, k.paddr - b.start_addr AS bar_offset_bytes,"
"  " HEX("k.paddr - b.start_addr") " AS bar_offset_hex"
"  FROM map_backing k LEFT JOIN bars b ON b.session_id = k.session_id"
"   AND k.paddr >= b.start_addr AND k.paddr < b.start_addr + b.size_bytes;"
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
"  LEFT JOIN seen s ON s.session_id = z.session_id AND s.pgsize_bytes = z.pgsize_bytes;";
/* clang-format on */

/* Whether map_runs exists without the columns version 6 added (versions 2 to 5). */
static bool map_runs_before_v6(sqlite3 *db)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT COUNT(*), IFNULL(SUM(name = 'exporter'), 0)"
					    " FROM pragma_table_info('map_runs')");
	bool before = false;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		before = sqlite3_column_int(st, 0) > 0 && sqlite3_column_int(st, 1) == 0;
	sqlite3_finalize(st);
	return before;
}

/* Versions 2 to 5: map_runs gets the columns of imports (version 6), and the view that reads
 * them is dropped to be made again. */
static int map_runs_migrate(sqlite3 *db, long from)
{
	static const char sql[] =
		"ALTER TABLE map_runs ADD COLUMN phys_source TEXT;"
		"ALTER TABLE map_runs ADD COLUMN exporter TEXT;"
		"ALTER TABLE map_runs ADD COLUMN exporter_device TEXT;"
		"ALTER TABLE map_runs ADD COLUMN dma_segments INTEGER;"
		"UPDATE map_runs SET phys_source = CASE WHEN bar_device IS NOT NULL THEN 'bar' ELSE 'pagemap'"
		"  END WHERE phys_runs IS NOT NULL;"
		"DROP VIEW IF EXISTS map_pages_check_view;";

	return map_runs_before_v6(db) ? itdb_exec(db, sql, "migrate the map runs") : 0;
}

const struct itdb_schema_part it_map_runs_schema = {
	.name = "map runs",
	.since = 2,
	.sql = (const char *const[]){ map_runs_sql, NULL },
	.before = map_runs_migrate,
};

/* SQL text, laid out as SQL */
/* clang-format off */
static const char io_runs_sql[] =
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
"  FROM per_step s JOIN io_runs r USING (session_id) GROUP BY s.session_id, s.qd;";
/* clang-format on */

/* Version 3 (the first with io tables): the columns version 4 added, before the tables are
 * made, and the view it changed dropped; after, io_devices filled from io_runs. */
static int io_runs_migrate_before(sqlite3 *db, long from)
{
	static const char sql[] =
		"ALTER TABLE io_runs ADD COLUMN device_count INTEGER NOT NULL DEFAULT 1;"
		"ALTER TABLE io_points ADD COLUMN device_index INTEGER NOT NULL DEFAULT 0;"
		"DROP VIEW IF EXISTS io_summary_view;";

	return from == 3 ? itdb_exec(db, sql, "migrate the io runs") : 0;
}

static int io_runs_migrate_after(sqlite3 *db, long from)
{
	static const char sql[] =
		"INSERT OR IGNORE INTO io_devices(session_id, device_index, device, model, serial, block_size,"
		"  blocks, iova, bar_offset_bytes) SELECT session_id, 0, device, model, serial, block_size,"
		"  blocks, iova, bar_offset_bytes FROM io_runs;";

	return from == 3 ? itdb_exec(db, sql, "migrate the io runs") : 0;
}

const struct itdb_schema_part it_io_runs_schema = {
	.name = "io runs",
	.since = 3,
	.sql = (const char *const[]){ io_runs_sql, NULL },
	.before = io_runs_migrate_before,
	.after = io_runs_migrate_after,
};
