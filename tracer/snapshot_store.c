/* Storing snapshots (see snapshot_store.h). */
#include "common/db.h"
#include "tracer/snapshot_store.h"

/* steps a one-shot statement and finalizes it */
static int step_once(sqlite3_stmt *st, const char *context)
{
	int rc = itdb_step_done(st, context);

	sqlite3_finalize(st);
	return rc;
}

static const char *perms_name(uint32_t perms)
{
	switch (perms & 3) {
	case 1:
		return "r";
	case 2:
		return "w";
	case 3:
		return "rw";
	}
	return "-";
}

/* 1 when the domain is stored in the session already, 0 when not, -1 on error */
static int stored(sqlite3 *db, int64_t session_id, uint64_t domain)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT 1 FROM snapshot_domains "
					    "WHERE session_id = ?1 AND domain_ptr = ?2");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)domain);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		sqlite3_finalize(st);
		return 1;
	}
	return itdb_finalize_read(st, rc, "find a snapshot's domain");
}

static int store_domain(sqlite3 *db, int64_t session_id, const struct snapshot_domain *d)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "INSERT INTO snapshot_domains (session_id, domain_ptr, kind, domain_type, "
			     "pgsize_bitmap, format, levels, entries_read, leaves, runs, consistent, "
			     "changes_seen_in, attempts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
			     "?10, ?11, ?12, ?13)");
	bool table = d->kind == IT_SNAP_TRANSLATED;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)d->domain);
	itdb_bind_text(st, 3, snapshot_kind_name(d->kind));
	sqlite3_bind_int64(st, 4, d->domain_type);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)d->pgsize_bitmap);
	if (table) {
		itdb_bind_text(st, 6, snapshot_format_name(d->format));
		sqlite3_bind_int64(st, 7, d->levels);
	}
	sqlite3_bind_int64(st, 8, (sqlite3_int64)d->entries);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)d->leaves);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)d->nruns);
	sqlite3_bind_int(st, 11, d->consistent);
	if (table)
		itdb_bind_text(st, 12, d->changes_by_domain ? "domain" : "any");
	sqlite3_bind_int(st, 13, (int)d->attempts);
	return step_once(st, "store a snapshot's domain");
}

static int store_runs(sqlite3 *db, int64_t session_id, const struct snapshot_domain *d)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "INSERT INTO snapshot_runs (session_id, domain_ptr, iova, phys, pgsize_bytes, "
			     "count, level, perms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	int rc = 0;

	if (!st)
		return -1;
	for (size_t i = 0; i < d->nruns && !rc; i++) {
		const struct it_snap_run *r = &d->runs[i];

		sqlite3_bind_int64(st, 1, session_id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)d->domain);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)r->iova);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)r->phys);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)r->pgsize);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)r->count);
		sqlite3_bind_int(st, 7, (int)r->level);
		itdb_bind_text(st, 8, perms_name(r->perms));
		if (sqlite3_step(st) != SQLITE_DONE) {
			itdb_log_failure(db, "store a snapshot's leaves", sqlite3_errmsg(db));
			rc = -1;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

int snapshot_store_group(sqlite3 *db, int64_t session_id, int group_id,
			 const struct snapshot_domain *d)
{
	sqlite3_stmt *st;
	int seen = 0;

	if (d->domain) {
		seen = stored(db, session_id, d->domain);
		if (seen < 0 ||
		    (!seen && (store_domain(db, session_id, d) || store_runs(db, session_id, d))))
			return -1;
	}
	st = itdb_prepare(db, "INSERT INTO snapshot_groups (session_id, group_id, domain_ptr) "
			      "VALUES (?1, ?2, ?3)");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, group_id);
	if (d->domain)
		sqlite3_bind_int64(st, 3, (sqlite3_int64)d->domain);
	return step_once(st, "store a snapshot's group");
}
