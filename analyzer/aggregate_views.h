/* The report section of the calls counted instead of recorded (capture modes aggregate and
 * threshold, map_aggregates): its view and the notes that say which mode the session used. */
#ifndef IOMMUTRACE_AGGREGATE_VIEWS_H
#define IOMMUTRACE_AGGREGATE_VIEWS_H

#include <stdint.h>
#include <sqlite3.h>
#include "analyzer/render.h"

/* The section's columns, for analyzer/report.c's table of sections. */
#define AGGREGATES_SECTION_COLUMNS "domain, op, call_sizes, pgsize_bytes, calls, bytes, pages"

/**
 * aggregate_notes() - Notes under the section: the session's capture mode and what it left out of
 * the rows.
 */
void aggregate_notes(struct render *r, sqlite3 *db, int64_t sid);

#endif
