/* Session metadata (see session_metadata.h). */
#include <string.h>
#include "common/db.h"
#include "common/leaf.h"
#include "common/log.h"
#include "common/sysfs_file.h"
#include "tracer/event_writer.h"
#include "tracer/session_metadata.h"

uint64_t session_pgsize_bitmap(const struct inventory *inv)
{
	uint64_t set = 0;
	int seen = 0;

	for (size_t i = 0; i < inv->n_iommus; i++) {
		if (!inv->iommus[i].pgsize_bitmap)
			continue;
		set = seen ? set & inv->iommus[i].pgsize_bitmap : inv->iommus[i].pgsize_bitmap;
		seen = 1;
	}
	/* no unit says, or they share no size */
	if (!set)
		set = EVENT_WRITER_DEFAULT_PGSIZES;
	/* intel_iommu=sp_off: the Intel driver advertises 4 KiB only */
	if (boot_options_have_flag(inv->boot_options, inv->n_boot_options, "intel_iommu", "sp_off"))
		set &= LEAF_4K;
	return set;
}

int session_metadata_collect(struct session_metadata *m, const char *root)
{
	char path[4096];

	memset(m, 0, sizeof(*m));
	if (inventory_read(root, &m->inv))
		return -1;
	m->pgsize_bitmap = session_pgsize_bitmap(&m->inv);
	if (sysfs_path(path, sizeof(path), root, "/proc/cmdline") ||
	    sysfs_read_text(path, m->boot_cmdline, sizeof(m->boot_cmdline)))
		m->boot_cmdline[0] = '\0';
	return 0;
}

static int store_probes(sqlite3 *db, int64_t sid, const struct probe_plan *plan)
{
	static const char sql[] =
		"INSERT INTO probes(session_id, probe_id, role, target, mechanism, attached, reason)"
		" VALUES (?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = itdb_prepare(db, sql);
	int ret = 0;

	if (!st)
		return -1;
	for (size_t i = 0; i < plan->count && !ret; i++) {
		const struct probe *p = &plan->probes[i];

		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		itdb_bind_text(st, 3, probe_role_name(p->role));
		itdb_bind_text(st, 4, p->target);
		if (p->mech != MECH_NONE)
			itdb_bind_text(st, 5, probe_mech_name(p->mech));
		sqlite3_bind_int(st, 6, p->attached);
		itdb_bind_text(st, 7, p->reason);
		ret = itdb_step_done(st, "insert probe");
	}
	sqlite3_finalize(st);
	return ret;
}

int session_metadata_store(sqlite3 *db, int64_t sid, const struct session_metadata *m,
			   const struct probe_plan *plan)
{
	if (itdb_exec(db, "BEGIN", "store session metadata"))
		return -1;
	if (inventory_store(db, sid, &m->inv) || store_probes(db, sid, plan)) {
		itdb_exec(db, "ROLLBACK", "store session metadata");
		return -1;
	}
	return itdb_exec(db, "COMMIT", "store session metadata");
}

void session_metadata_free(struct session_metadata *m)
{
	inventory_free(&m->inv);
}
