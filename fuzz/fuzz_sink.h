/* What the importer fuzz targets share: an in-memory iommutrace database for the whole run and an
 * ftrace sink that writes through the event writer, as `iommutrace import` does. */
#ifndef IOMMUTRACE_FUZZ_SINK_H
#define IOMMUTRACE_FUZZ_SINK_H

#include <stdlib.h>
#include "analyzer/analysis.h"
#include "common/db.h"
#include "common/schema.h"
#include "tracer/event_writer.h"
#include "tracer/tep_events.h"
#include "cli/db_schema.h"

static inline int fuzz_sink_event(const struct it_event *e, void *ctx)
{
	return event_writer_add(ctx, e);
}

static inline int fuzz_sink_loss(uint32_t cpu, uint64_t lost, const char *reason, void *ctx)
{
	return event_writer_add_loss(ctx, cpu, "unknown", lost, reason);
}

/* The run's database, created on first use; aborts when it cannot be. */
static inline sqlite3 *fuzz_database(void)
{
	static sqlite3 *db;
	char err[256];

	if (!db)
		db = itdb_open(":memory:", ITDB_CREATE_FORCE, &iommutrace_schema, err, sizeof(err));
	if (!db)
		abort();
	return db;
}

/* Ends the session as `iommutrace import` does: complete, indexed, its lifetimes computed. */
static inline void fuzz_session_end(sqlite3 *db, int64_t sid, const struct itdb_session_end *end)
{
	if (!itdb_session_end(db, sid, end) &&
	    !itdb_exec(db, it_capture_index_sql, "create the capture's indexes"))
		analysis_session_finish(db, sid);
}

#endif
