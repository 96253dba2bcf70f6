/* The host's facts, stored with each session (common/inventory_store.c writes them): boot
 * options, IOMMU units, PCI devices and their BARs, NVIDIA BAR1s, IOMMU groups. */
#include "common/schema.h"

/* SQL text, laid out as SQL */
/* clang-format off */
static const char host_sql[] =
"CREATE TABLE IF NOT EXISTS boot_options ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  name TEXT NOT NULL,"			/* intel_iommu, amd_iommu, iommu, iommu.strict, ... */
"  value TEXT);"
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
"CREATE VIEW IF NOT EXISTS bars_view AS SELECT session_id, bdf, bar_index,"
"  printf('0x%x', start_addr) AS start_hex, printf('0x%x', start_addr + size_bytes) AS end_hex,"
"  size_bytes, is_64bit, prefetchable FROM bars;";
/* clang-format on */

const struct itdb_schema_part it_host_schema = {
	.name = "host",
	.since = 1,
	.sql = (const char *const[]){ host_sql, NULL },
};
