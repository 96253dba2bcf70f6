/* Opening a database for analysis (see analysis.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/db.h"
#include "common/log.h"
#include "common/untrusted_text.h"
#include "analyzer/analysis.h"
#include "analyzer/lifetimes.h"
#include "analyzer/views.h"

static int pick_sessions(struct analysis *a, int64_t only)
{
	sqlite3_stmt *st =
		itdb_prepare(a->db, "SELECT session_id FROM sessions"
				    " WHERE ?1 < 0 OR session_id = ?1 ORDER BY session_id");
	char word[PATH_MAX + 64];
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
	if (rc == SQLITE_ROW) { /* out of memory, said */
		sqlite3_finalize(st);
		return -1;
	}
	if (itdb_finalize_read(st, rc, "reading the sessions"))
		return -1;
	if (!a->nsessions && only >= 0) {
		log_error("%s has no session %lld: 'sqlite3 %s \"SELECT session_id, kind, command"
			  " FROM sessions\"' lists them",
			  a->path, (long long)only, shell_word(word, sizeof(word), a->path));
		return -1;
	}
	if (!a->nsessions) {
		log_error("%s has no sessions: record one first ('iommutrace record -o %s')",
			  a->path, shell_word(word, sizeof(word), a->path));
		return -1;
	}
	return 0;
}

/* Why this process cannot write path and the files beside it (-wal, -shm, -journal): NULL when
 * it can, or when path is absent (itdb_open says so). */
static const char *cannot_write(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if (access(path, F_OK))
		return NULL;
	if (access(path, W_OK))
		return strerror(errno);
	snprintf(dir, sizeof(dir), "%.*s",
		 !slash	       ? 1 :
		 slash == path ? 1 :
				 (int)(slash - path),
		 !slash ? "." : path);
	return access(dir, W_OK | X_OK) ? strerror(errno) : NULL;
}

int analysis_open(struct analysis *a, const char *path, const struct itdb_schema *schema,
		  int64_t only_session)
{
	const char *why = cannot_write(path);
	char err[512];

	*a = (struct analysis){ .path = path };
	/* the analyzer migrates a database and stores map lifetimes and views in it: in a copy
	 * when the file cannot take them */
	a->db = why ? itdb_open_copy(path, schema, err, sizeof(err)) :
		      itdb_open(path, ITDB_MIGRATE, schema, err, sizeof(err));
	if (a->db && why)
		log_info("%s is read-only (%s): analysed from a copy in memory; nothing written to "
			 "it",
			 path, why);
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

int analysis_session_finish(sqlite3 *db, int64_t session_id)
{
	return lifetimes_compute(db, session_id);
}
