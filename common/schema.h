/* The schema's version and the parts of it that the layers below the analyzer write. Each part
 * (struct itdb_schema_part, common/db.h) is one writer's tables and views; the storage layer
 * creates and migrates a file from the list of parts its caller passes. Tables one layer writes
 * and another reads are a contract, as bpf/iommutrace.h is between BPF and user space: their
 * parts live here, one file per writer. Documented column by column in docs/schema.md; keep
 * both in step. */
#ifndef IOMMUTRACE_SCHEMA_H
#define IOMMUTRACE_SCHEMA_H

#include "common/db.h"

#define IT_SCHEMA_VERSION 10
#define IT_APPLICATION_ID 0x494f4d54 /* "IOMT" in PRAGMA application_id */

/* SQL text: a nullable address column as hex text; NULL stays NULL (printf would print 0x0). */
#define HEX(col) "CASE WHEN " col " IS NULL THEN NULL ELSE printf('0x%x', " col ") END"

/* meta and sessions (schema_core.c): created by the storage layer itself, before any part. */
extern const struct itdb_schema_part it_core_schema;
/* The host's facts: boot options, IOMMU units, devices, BARs, BAR1s, groups (schema_host.c). */
extern const struct itdb_schema_part it_host_schema;
/* What record and import capture: maps, unmaps, driver pages, ... (schema_capture.c). */
extern const struct itdb_schema_part it_capture_schema;
/* map -o and io -o runs (schema_runs.c). */
extern const struct itdb_schema_part it_map_runs_schema;
extern const struct itdb_schema_part it_io_runs_schema;
/* What snapshot reads from the live translation tables (schema_snapshot.c). */
extern const struct itdb_schema_part it_snapshot_schema;
/* The parts above in the order they are created: what a database holds below the analyzer, as
 * a list (IT_RECORDED_SCHEMA_PARTS, to begin a longer one) and as a schema. */
#define IT_RECORDED_SCHEMA_PARTS \
	&it_host_schema, &it_capture_schema, &it_map_runs_schema, &it_io_runs_schema, \
		&it_snapshot_schema
extern const struct itdb_schema it_recorded_schema;

/* The capture's indexes, created once the bulk of a session is written (record, import). */
extern const char it_capture_index_sql[];

#endif
