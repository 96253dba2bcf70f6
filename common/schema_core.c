/* The storage layer's own part of the schema: the file's version and its sessions. */
#include "common/schema.h"

/* SQL text, laid out as SQL */
/* clang-format off */
static const char core_sql[] =
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
"  derive_pgsize_bitmap INTEGER);";	/* page sizes the leaf rule used where a domain's were unknown */
/* clang-format on */

const struct itdb_schema_part it_core_schema = {
	.name = "core",
	.since = 1,
	.sql = (const char *const[]){ core_sql, NULL },
};

const struct itdb_schema it_recorded_schema = ITDB_SCHEMA(IT_RECORDED_SCHEMA_PARTS);
