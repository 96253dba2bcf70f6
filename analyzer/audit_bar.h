/* `iommutrace audit bar`: the mappings of PCI BARs (audit_bar_view, GPU BAR1 first) and what
 * they cost the IOTLB: entries at the page sizes written against entries at the largest pages the
 * IOMMU has, against an IOTLB of a given size, per window and per BAR (audit_bar_summary_view). */
#ifndef IOMMUTRACE_AUDIT_BAR_H
#define IOMMUTRACE_AUDIT_BAR_H

#include <stdint.h>
#include <sqlite3.h>
#include "analyzer/render.h"

/* IOTLB entries assumed by default: pcie-bench's estimate of an IOTLB's size (Neugebauer et al.,
 * "Understanding PCIe performance for end host networking", SIGCOMM 2018). */
#define AUDIT_IOTLB_ENTRIES 64

/* Per session and BAR with mappings: the windows together, over rows of audit_bar_view (the
 * view, or a copy of its rows): audit_bar_summary_view. */
#define AUDIT_BAR_SUMMARY_SQL(windows) \
	"SELECT session_id, MAX(gpu_bar1) AS gpu_bar1, bar_device, bar_index, bar_size_bytes," \
	"  COUNT(*) AS windows, SUM(maps) AS maps, SUM(size_bytes) AS mapped_bytes," \
	"  SUM(entries) AS entries, SUM(best_entries) AS best_entries," \
	"  SUM(entries IS NULL) AS windows_pages_unknown" \
	"  FROM " windows " GROUP BY session_id, bar_device, bar_index"

struct audit_bar_opts {
	char device[13]; /* canonical BDF: only its BARs; "": every device's */
	int64_t iotlb_entries;
};

/**
 * audit_bar_render() - Render both sections for one session.
 * @title_suffix: as in audit_align_render()
 *
 * Return: 0, or -1.
 */
int audit_bar_render(struct render *r, sqlite3 *db, int64_t session_id, const char *title_suffix,
		     const struct audit_bar_opts *o);
/**
 * audit_bar_device_known() - Whether the database recorded a BAR of device @bdf in any session.
 *
 * Return: 1, 0, or -1 (logged).
 */
int audit_bar_device_known(sqlite3 *db, const char *bdf);

#endif
