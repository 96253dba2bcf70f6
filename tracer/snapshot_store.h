/* Storing what snapshot_reader read (common/schema_snapshot.c's tables). Runs inside the caller's
 * transaction; functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_SNAPSHOT_STORE_H
#define IOMMUTRACE_SNAPSHOT_STORE_H

#include <stdint.h>
#include <sqlite3.h>
#include "tracer/snapshot_reader.h"

/**
 * snapshot_store_group() - Store group @group_id's domain @d under @session_id: the domain and its
 * runs the first time that domain is stored in the session, the group's link to it always.
 */
int snapshot_store_group(sqlite3 *db, int64_t session_id, int group_id,
			 const struct snapshot_domain *d);

#endif
