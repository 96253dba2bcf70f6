/* What every analyzer command (report, audit align, audit bar) shares: the database opened for
 * analysis (an existing iommutrace database, migrated when older, with one line for the user
 * otherwise), the sessions asked for, and map lifetimes brought up to date for each (a session
 * whose recorder was killed has none yet). Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_ANALYSIS_H
#define IOMMUTRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "common/db.h"

struct analysis {
	sqlite3 *db;
	const char *path;
	int64_t *sessions; /* ascending */
	size_t nsessions;
};

/**
 * analysis_open() - Open @path with @schema (every part, the analyzer's included).
 * @only_session: >= 0 picks that session (refused when absent), else all of them
 *
 * Return: 0, or -1 (logged).
 */
int analysis_open(struct analysis *a, const char *path, const struct itdb_schema *schema,
		  int64_t only_session);
void analysis_close(struct analysis *a);
/**
 * analysis_session_finish() - The analyzer's step at the end of a session that record or import
 * wrote: its map lifetimes and summaries, so that a report reads them at once.
 *
 * Return: 0, or -1 (logged).
 */
int analysis_session_finish(sqlite3 *db, int64_t session_id);

#endif
