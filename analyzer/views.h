/* The analyzer's views, created with the schema (and recreated by every migration): the SQL behind
 * each report, kept in the database so that users read and extend it in sqlite3. Each part's SQL
 * is a list of "DROP VIEW IF EXISTS name; CREATE VIEW name AS ...;" statements, documented in
 * docs/schema.md. */
#ifndef IOMMUTRACE_VIEWS_H
#define IOMMUTRACE_VIEWS_H

#include <sqlite3.h>

extern const char analyzer_report_views_sql[];	/* report_views.c: iommutrace report */
extern const char analyzer_audit_views_sql[];	/* audit_views.c: audit align, audit bar */
extern const char analyzer_runs_views_sql[];	/* runs_views.c: the runs and their validity */

/* Creates (or recreates) every analyzer view; 0, or -1 (logged). */
int analyzer_views_create(sqlite3 *db);

#endif
