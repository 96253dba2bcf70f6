/* Opening a database for analysis (see analysis.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/db.h"
#include "common/log.h"
#include "analysis.h"
#include "lifetimes.h"
#include "views.h"

static int pick_sessions(struct analysis *a, int64_t only)
{
	sqlite3_stmt *st = itdb_prepare(a->db, "SELECT session_id FROM sessions"
				       " WHERE ?1 < 0 OR session_id = ?1 ORDER BY session_id");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, only);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t *more = realloc(a->sessions, (a->nsessions + 1) * sizeof(*more));

		if (!more) {
			log_error("out of memory");
			break;
		}
		a->sessions = more;
		a->sessions[a->nsessions++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (!a->nsessions && only >= 0) {
		log_error("%s has no session %lld: 'sqlite3 %s \"SELECT session_id, kind, command"
			  " FROM sessions\"' lists them", a->path, (long long)only, a->path);
		return -1;
	}
	if (!a->nsessions) {
		log_error("%s has no sessions: record one first ('iommutrace record -o %s')", a->path,
			  a->path);
		return -1;
	}
	return 0;
}

int analysis_open(struct analysis *a, const char *path, int64_t only_session)
{
	char err[512];

	*a = (struct analysis){ .path = path };
	if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
		log_error("%s is not writable (%s): the analyzer migrates a database and stores map "
			  "lifetimes in it; copy it somewhere writable", path, strerror(errno));
		return -1;
	}
	a->db = itdb_open(path, ITDB_MIGRATE, err, sizeof(err));
	if (!a->db) {
		log_error("%s", err);
		return -1;
	}
	/* the views as this iommutrace has them, also in a file of this version made by another */
	if (analyzer_views_create(a->db) || pick_sessions(a, only_session))
		goto fail;
	for (size_t i = 0; i < a->nsessions; i++)
		if (lifetimes_ensure(a->db, a->sessions[i]))
			goto fail;
	return 0;
fail:
	analysis_close(a);
	return -1;
}

void analysis_close(struct analysis *a)
{
	itdb_close(a->db);
	free(a->sessions);
	a->db = NULL;
	a->sessions = NULL;
	a->nsessions = 0;
}
