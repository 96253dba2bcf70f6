/* Per-session summaries of maps and unmaps, gathered during the lifetimes sweep (lifetimes.c) and
 * stored next to map_pieces, so that report and audit read a few rows instead of every event:
 *   domain_summary     per domain: maps, unmaps, their bytes, peak and final live bytes, live
 *                      maps, bytes mapped over (report_domains_view, report_live_view);
 *   call_size_summary  per domain and call size rounded up to a power of two
 *                      (report_call_sizes_view);
 *   page_size_summary  per domain, page size and source: the driver pages of the maps
 *                      (report_page_sizes_view, report_domains_view);
 *   alike_maps         the maps grouped where audit align and audit bar cannot tell them apart
 *                      (same domain, size, pages, offsets of iova and paddr within the largest
 *                      power of two not above the size; maps into a PCI BAR by exact paddr),
 *                      each with its first map (audit_align_view, audit_bar_view);
 *   session_summary    per session: the maps and unmaps summarized and the peak live bytes of
 *                      all domains together.
 * Memory: per domain a fixed amount; the groups, few for real traces (at most one per map). */
#ifndef IOMMUTRACE_SUMMARY_H
#define IOMMUTRACE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

struct summary;

/* A driver_maps row (op 'map') of a map. */
struct summary_page {
	int64_t pgsize_bytes, pgcount;
	const char *source; /* valid during summary_map */
};

/* A summary of session sid; reads the session's BARs. NULL on failure (logged). */
struct summary *summary_begin(sqlite3 *db, int64_t sid);
/* A map call of the domain (known: domain_ptr not NULL) with its driver pages. */
int summary_map(struct summary *s, bool known, int64_t domain, int64_t map_id, int64_t iova,
		int64_t paddr, int64_t size, const struct summary_page *pages, size_t npages);
int summary_unmap(struct summary *s, bool known, int64_t domain, int64_t unmapped_bytes);
/* Live bytes of the domain change by delta at ts_ns (events in time order); remapped: a piece
 * ended by a map over it. */
int summary_change(struct summary *s, bool known, int64_t domain, int64_t ts_ns, int64_t delta,
		   bool remapped);
/* A piece still live at the end of the session (after every change). */
int summary_live_piece(struct summary *s, bool known, int64_t domain, int64_t map_id);
/* Replaces the session's rows of the summary tables; 0, or -1 (logged). */
int summary_write(sqlite3 *db, struct summary *s);
void summary_free(struct summary *s);

#endif
