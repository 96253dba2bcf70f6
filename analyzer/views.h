/* The analyzer's views, created with its part of the schema (analyzer_schema.h) and recreated
 * each time an analyzer command opens a database (analysis.c): the SQL behind each report, kept in the database so that users read
 * and extend it in sqlite3. Each part's SQL is a list of "DROP VIEW IF EXISTS name; CREATE VIEW
 * name AS ...;" statements, documented in docs/schema.md. */
#ifndef IOMMUTRACE_VIEWS_H
#define IOMMUTRACE_VIEWS_H

#include <sqlite3.h>

/* SQL text for the views: a byte count as people read it, exact where it is a multiple of a unit
 * ("0", "4 KiB", "246 MiB", "1 GiB"), else in bytes. */
#define SIZE_TEXT(x) \
	"(CASE WHEN " x " = 0 THEN '0'" \
	" WHEN " x " % 1099511627776 = 0 THEN (" x " / 1099511627776) || ' TiB'" \
	" WHEN " x " % 1073741824 = 0 THEN (" x " / 1073741824) || ' GiB'" \
	" WHEN " x " % 1048576 = 0 THEN (" x " / 1048576) || ' MiB'" \
	" WHEN " x " % 1024 = 0 THEN (" x " / 1024) || ' KiB' ELSE " x " || ' B' END)"

extern const char analyzer_report_views_sql[]; /* report_views.c: iommutrace report */
extern const char analyzer_audit_views_sql[]; /* audit_views.c: audit align, audit bar */
extern const char analyzer_runs_views_sql[]; /* runs_views.c: the runs and their validity */
extern const char analyzer_aggregate_views_sql[]; /* aggregate_views.c: report aggregates */

/**
 * analyzer_views_create() - Create (or recreate) every analyzer view.
 *
 * Return: 0, or -1 (logged).
 */
int analyzer_views_create(sqlite3 *db);

#endif
