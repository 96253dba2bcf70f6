/* Creating the analyzer's views (see views.h). */
#include "common/db.h"
#include "analyzer/views.h"

int analyzer_views_create(sqlite3 *db)
{
	return itdb_exec(db, analyzer_report_views_sql, "create the report views") ||
			       itdb_exec(db, analyzer_audit_views_sql, "create the audit views") ||
			       itdb_exec(db, analyzer_runs_views_sql, "create the runs views") ||
			       itdb_exec(db, analyzer_aggregate_views_sql,
					 "create the aggregate views") ?
		       -1 :
		       0;
}
