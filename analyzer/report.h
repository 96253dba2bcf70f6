/* The sections of `iommutrace report`, per session: each the rows of one report_*_view (SQL in
 * report_views.c, documented in docs/schema.md) with the notes that explain its numbers. */
#ifndef IOMMUTRACE_REPORT_H
#define IOMMUTRACE_REPORT_H

#include <stdint.h>
#include <sqlite3.h>
#include "analyzer/render.h"

/* Text shows at most this many of the mappings still live at the end; JSON and CSV all. */
#define REPORT_TEXT_LIVE_MAPPINGS 20

enum report_section {
	REPORT_SESSION, /* titled with the session's one-line summary */
	REPORT_AGGREGATES, /* calls counted, not recorded; notes say the capture mode */
	REPORT_PROBES,
	REPORT_DOMAINS,
	REPORT_LIVE,
	REPORT_CALL_SIZES,
	REPORT_PAGE_SIZES,
	REPORT_LIVE_MAPPINGS,
	REPORT_LOSSES,
	REPORT_MAP_RUNS, /* text: left out when the session has none */
	REPORT_IO_RUNS, /* text: left out when the session has none */
	/* text: only for a snapshot session, which then has no capture sections (aggregates to
	 * losses) in text */
	REPORT_SNAPSHOT_GROUPS,
	REPORT_SNAPSHOT_PAGES,
	REPORT_SECTIONS
};

/**
 * report_section() - Render one section of @session_id's report.
 *
 * Return: 0, or -1 (logged).
 */
int report_section(struct render *r, sqlite3 *db, int64_t session_id, enum report_section s);
/**
 * report_session() - Render every section of @session_id's report, in the order above, then the
 * detailed runs sections (analyzer/runs.h).
 *
 * Return: 0, or -1 (logged).
 */
int report_session(struct render *r, sqlite3 *db, int64_t session_id);

#endif
