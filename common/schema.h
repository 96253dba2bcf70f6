/* The database schema: tables, views and the version they carry (meta.schema_version).
 * Documented column by column in docs/schema.md; keep both in step. */
#ifndef IOMMUTRACE_SCHEMA_H
#define IOMMUTRACE_SCHEMA_H

#define IT_SCHEMA_VERSION 3
#define IT_APPLICATION_ID 0x494f4d54 /* "IOMT" in PRAGMA application_id */

/* DDL creating every table and view of IT_SCHEMA_VERSION (idempotent: IF NOT EXISTS). */
extern const char it_schema_sql[];
/* Indexes, created once the bulk of a session is written. */
extern const char it_schema_index_sql[];

#endif
