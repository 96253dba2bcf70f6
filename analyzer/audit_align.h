/* `iommutrace audit align`: why each map call got the pages it got (audit_align_view: the map
 * calls grouped where alike, biggest shortfall first, with the reason and the fix) and how many
 * bytes got the largest page possible for their length (audit_align_summary_view). */
#ifndef IOMMUTRACE_AUDIT_ALIGN_H
#define IOMMUTRACE_AUDIT_ALIGN_H

#include <stdint.h>
#include <sqlite3.h>
#include "analyzer/render.h"

/* Per session: bytes mapped with the largest page possible for their length on this IOMMU, below
 * it, and with pages unknown (no driver_maps row), over rows of audit_align_view (the view, or
 * a copy of its rows): audit_align_summary_view. */
#define AUDIT_ALIGN_SUMMARY_SQL(groups) \
	"SELECT session_id, maps, mapped_bytes, at_possible_bytes, below_possible_bytes," \
	"  pages_unknown_bytes," \
	"  100.0 * at_possible_bytes / NULLIF(at_possible_bytes + below_possible_bytes, 0)" \
	"   AS at_possible_pct" \
	"  FROM (SELECT session_id, SUM(maps) AS maps, SUM(total_bytes) AS mapped_bytes," \
	"   SUM(CASE WHEN written_page_bytes >= IFNULL(possible_page_bytes, 0) THEN total_bytes" \
	"    ELSE 0 END) AS at_possible_bytes," \
	"   SUM(CASE WHEN written_page_bytes < possible_page_bytes THEN total_bytes ELSE 0 END)" \
	"    AS below_possible_bytes," \
	"   SUM(CASE WHEN written_page_bytes IS NULL THEN total_bytes ELSE 0 END)" \
	"    AS pages_unknown_bytes" \
	"   FROM " groups " GROUP BY session_id)"

/**
 * audit_align_render() - Render both sections for one session.
 * @title_suffix: "" or " (session 2)"; goes after each title
 *
 * Text gets a table of the numbers with the fixes as notes under it, JSON and CSV every column of
 * the views.
 *
 * Return: 0, or -1 (logged).
 */
int audit_align_render(struct render *r, sqlite3 *db, int64_t session_id, const char *title_suffix);

#endif
