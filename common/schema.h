/* The database schema: tables, views and the version they carry (meta.schema_version).
 * Documented column by column in docs/schema.md; keep both in step. */
#ifndef IOMMUTRACE_SCHEMA_H
#define IOMMUTRACE_SCHEMA_H

#define IT_SCHEMA_VERSION 8
#define IT_APPLICATION_ID 0x494f4d54 /* "IOMT" in PRAGMA application_id */

/* SQL text: a nullable address column as hex text; NULL stays NULL (printf would print 0x0). */
#define HEX(col) "CASE WHEN " col " IS NULL THEN NULL ELSE printf('0x%x', " col ") END"

/* DDL creating every table and view of IT_SCHEMA_VERSION (idempotent: IF NOT EXISTS). */
extern const char it_schema_sql[];
/* Migrating a version 3 file (the first with io_* tables): before it_schema_sql, the columns
 * version 4 added to io tables and the views it changed dropped; after it, io_devices filled
 * from io_runs. Versions 1 and 2 had no io tables: it_schema_sql creates them whole. */
extern const char it_schema_v3_before_sql[];
extern const char it_schema_v3_after_sql[];
/* Migrating a version 2 to 5 file (map_runs without the columns of imports): before
 * it_schema_sql, those columns added and the view that reads them dropped. */
extern const char it_schema_v5_before_sql[];
/* Indexes, created once the bulk of a session is written. The index of map_pieces is also made
 * again by the lifetimes sweep, which drops it for its bulk (analyzer/piece_writer.c). */
#define IT_MAP_PIECES_BY_SESSION_SQL "CREATE INDEX IF NOT EXISTS map_pieces_by_session ON" \
	" map_pieces(session_id, domain_ptr, mapped_ns)"
extern const char it_schema_index_sql[];

#endif
