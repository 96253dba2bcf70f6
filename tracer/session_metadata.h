/* What a recording stores about the machine before the first event: the inventory (boot options,
 * IOMMU units, PCI devices and BARs, IOMMU groups), the probe plan, and the page-size set used to
 * derive pages for mappings whose domain is unknown. */
#ifndef IOMMUTRACE_SESSION_METADATA_H
#define IOMMUTRACE_SESSION_METADATA_H

#include <stdint.h>
#include <sqlite3.h>
#include "common/inventory.h"
#include "tracer/probe_plan.h"

struct session_metadata {
	struct inventory inv;
	/* page sizes for mappings of unknown domains: those every IOMMU unit supports, 4 KiB only
	 * when superpages are turned off (intel_iommu=sp_off), EVENT_WRITER_DEFAULT_PGSIZES when
	 * no unit says */
	uint64_t pgsize_bitmap;
	char boot_cmdline[4096]; /* ROOT/proc/cmdline; "" when unreadable */
};

/**
 * session_metadata_collect() - Read the inventory and the boot command line under @root.
 *
 * Return: 0, or -1 (logged).
 */
int session_metadata_collect(struct session_metadata *m, const char *root);
/**
 * session_metadata_store() - Store the inventory and the plan's probes as rows of session @sid,
 * in one transaction.
 */
int session_metadata_store(sqlite3 *db, int64_t sid, const struct session_metadata *m,
			   const struct probe_plan *plan);
void session_metadata_free(struct session_metadata *m);

/**
 * session_pgsize_bitmap() - The page-size set the units share (intersection;
 * EVENT_WRITER_DEFAULT_PGSIZES when no unit says or they share none), restricted to 4 KiB by
 * intel_iommu=sp_off.
 */
uint64_t session_pgsize_bitmap(const struct inventory *inv);

#endif
