/* Stores the machine inventory as rows of a session, inside the caller's transaction. */
#include <stddef.h>
#include "common/db.h"
#include "common/inventory.h"
#include "common/leaf.h"
#include "common/log.h"

/* Binds v, or NULL when it is not known; returns an SQLite result code. */
static int bind_known(sqlite3_stmt *st, int idx, bool known, int64_t v)
{
	return known ? sqlite3_bind_int64(st, idx, v) : sqlite3_bind_null(st, idx);
}

/* Runs the bound statement; binds is the OR of the bind result codes. */
static int finish_row(sqlite3_stmt *st, int binds, const char *context)
{
	if (binds != SQLITE_OK) {
		log_error("database: %s: cannot bind values: %s", context,
			  sqlite3_errmsg(sqlite3_db_handle(st)));
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		return -1;
	}
	return itdb_step_done(st, context);
}

static int store_boot_options(sqlite3 *db, int64_t session_id, const struct inventory *inv)
{
	sqlite3_stmt *st = itdb_prepare(db, "INSERT INTO boot_options(session_id, name, value)"
					    " VALUES (?, ?, ?)");
	int ret = -1;

	if (!st)
		return -1;
	for (size_t i = 0; i < inv->n_boot_options; i++) {
		const struct boot_option *o = &inv->boot_options[i];
		/* bound directly: "iommu=" (empty value) and "iommu" (none) stay apart */
		int binds = sqlite3_bind_int64(st, 1, session_id) |
			    sqlite3_bind_text(st, 2, o->name, -1, SQLITE_STATIC) |
			    (o->value ? sqlite3_bind_text(st, 3, o->value, -1, SQLITE_STATIC) :
					sqlite3_bind_null(st, 3));

		if (finish_row(st, binds, "store boot options"))
			goto cleanup;
	}
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	return ret;
}

static int bind_tristate(sqlite3_stmt *st, int idx, int value)
{
	return bind_known(st, idx, value != IOMMU_CAP_UNKNOWN, value);
}

static int store_iommus(sqlite3 *db, int64_t session_id, const struct inventory *inv)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "INSERT INTO iommus(session_id, name, vendor, cap, ecap, version, pgsize_bitmap,"
			     " supports_2m, supports_1g, mgaw_bits, sagaw, caching_mode, pass_through,"
			     " scalable_mode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	int ret = -1;

	if (!st)
		return -1;
	for (size_t i = 0; i < inv->n_iommus; i++) {
		const struct iommu_unit *u = &inv->iommus[i];
		bool have_pgsizes = u->pgsize_bitmap != 0;
		int binds = sqlite3_bind_int64(st, 1, session_id) | itdb_bind_text(st, 2, u->name) |
			    itdb_bind_text(st, 3, iommu_vendor_name(u->vendor)) |
			    bind_known(st, 4, u->have_cap, (int64_t)u->cap) |
			    bind_known(st, 5, u->have_ecap, (int64_t)u->ecap) |
			    itdb_bind_text(st, 6, u->version) |
			    bind_known(st, 7, have_pgsizes, (int64_t)u->pgsize_bitmap) |
			    bind_known(st, 8, have_pgsizes, !!(u->pgsize_bitmap & LEAF_2M)) |
			    bind_known(st, 9, have_pgsizes, !!(u->pgsize_bitmap & LEAF_1G)) |
			    bind_known(st, 10, u->addr_width_bits, u->addr_width_bits) |
			    bind_known(st, 11, u->sagaw >= 0, u->sagaw) |
			    bind_tristate(st, 12, u->caching_mode) |
			    bind_tristate(st, 13, u->pass_through) |
			    bind_tristate(st, 14, u->scalable_mode);

		if (finish_row(st, binds, "store IOMMU units"))
			goto cleanup;
	}
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	return ret;
}

static int store_bars(sqlite3_stmt *st, int64_t session_id, const struct pci_device *d)
{
	for (unsigned i = 0; i < d->n_bars; i++) {
		const struct pci_bar *b = &d->bars[i];
		int binds = sqlite3_bind_int64(st, 1, session_id) | itdb_bind_text(st, 2, d->bdf) |
			    sqlite3_bind_int(st, 3, (int)b->index) |
			    sqlite3_bind_int64(st, 4, (int64_t)b->start) |
			    sqlite3_bind_int64(st, 5, (int64_t)b->size) |
			    sqlite3_bind_int(st, 6, b->is_64bit) |
			    sqlite3_bind_int(st, 7, b->prefetchable);

		if (finish_row(st, binds, "store BARs"))
			return -1;
	}
	return 0;
}

static int store_devices(sqlite3 *db, int64_t session_id, const struct inventory *inv)
{
	sqlite3_stmt *dev_st =
		itdb_prepare(db,
			     "INSERT INTO devices(session_id, bdf, vendor_id, device_id, class_code, driver,"
			     " iommu_group, iommu_name, numa_node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *bar_st =
		itdb_prepare(db,
			     "INSERT INTO bars(session_id, bdf, bar_index, start_addr, size_bytes, is_64bit,"
			     " prefetchable) VALUES (?, ?, ?, ?, ?, ?, ?)");
	int ret = -1;

	if (!dev_st || !bar_st)
		goto cleanup;
	for (size_t i = 0; i < inv->n_devices; i++) {
		const struct pci_device *d = &inv->devices[i];
		int binds = sqlite3_bind_int64(dev_st, 1, session_id) |
			    itdb_bind_text(dev_st, 2, d->bdf) |
			    bind_known(dev_st, 3, d->vendor_id >= 0, d->vendor_id) |
			    bind_known(dev_st, 4, d->device_id >= 0, d->device_id) |
			    bind_known(dev_st, 5, d->class_code >= 0, d->class_code) |
			    itdb_bind_text(dev_st, 6, d->driver) |
			    bind_known(dev_st, 7, d->iommu_group >= 0, d->iommu_group) |
			    itdb_bind_text(dev_st, 8, d->iommu) |
			    bind_known(dev_st, 9, d->numa_node >= 0, d->numa_node);

		if (finish_row(dev_st, binds, "store PCI devices") ||
		    store_bars(bar_st, session_id, d))
			goto cleanup;
	}
	ret = 0;
cleanup:
	sqlite3_finalize(dev_st);
	sqlite3_finalize(bar_st);
	return ret;
}

static int store_groups(sqlite3 *db, int64_t session_id, const struct inventory *inv)
{
	sqlite3_stmt *st = itdb_prepare(db, "INSERT INTO iommu_groups(session_id, group_id,"
					    " domain_type) VALUES (?, ?, ?)");
	int ret = -1;

	if (!st)
		return -1;
	for (size_t i = 0; i < inv->n_groups; i++) {
		const struct iommu_group *g = &inv->groups[i];
		int binds = sqlite3_bind_int64(st, 1, session_id) | sqlite3_bind_int(st, 2, g->id) |
			    itdb_bind_text(st, 3, g->domain_type);

		if (finish_row(st, binds, "store IOMMU groups"))
			goto cleanup;
	}
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	return ret;
}

static int store_gpus(sqlite3 *db, int64_t session_id, const struct inventory *inv)
{
	sqlite3_stmt *st = itdb_prepare(db, "INSERT INTO gpu_bar1(session_id, bdf, device_id,"
					    " start_addr, size_bytes, nvml_total_bytes,"
					    " nvml_used_bytes, nvml_free_bytes, nvml_status)"
					    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	int ret = -1;

	if (!st)
		return -1;
	for (size_t i = 0; i < inv->n_gpus; i++) {
		const struct gpu_bar1 *g = &inv->gpus[i];
		int binds = sqlite3_bind_int64(st, 1, session_id) | itdb_bind_text(st, 2, g->bdf) |
			    bind_known(st, 3, g->device_id >= 0, g->device_id) |
			    bind_known(st, 4, g->assigned, (int64_t)g->start) |
			    bind_known(st, 5, g->assigned, (int64_t)g->size) |
			    bind_known(st, 6, g->have_nvml, (int64_t)g->nvml_total) |
			    bind_known(st, 7, g->have_nvml, (int64_t)g->nvml_used) |
			    bind_known(st, 8, g->have_nvml, (int64_t)g->nvml_free) |
			    itdb_bind_text(st, 9, g->nvml_status);

		if (finish_row(st, binds, "store GPU BAR1"))
			goto cleanup;
	}
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	return ret;
}

int inventory_store(sqlite3 *db, int64_t session_id, const struct inventory *inv)
{
	if (store_boot_options(db, session_id, inv) || store_iommus(db, session_id, inv) ||
	    store_devices(db, session_id, inv) || store_groups(db, session_id, inv) ||
	    store_gpus(db, session_id, inv))
		return -1;
	return 0;
}
