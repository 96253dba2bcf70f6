/* What a session's maps and unmaps imply: the lifetime of every mapped IOVA range, in pieces, in
 * table map_pieces. A map is one piece while whole; an unmap of part of it splits it, the part
 * unmapped ending with that unmap and the rest living on; a map over a range still mapped (an
 * unmap lost, or never traced) ends what it covers as 'remapped'. Unmaps match maps of the same
 * domain (domain_ptr, NULL matching NULL). What the live set needs is bounded by the mappings
 * live at once in a domain, not by the events. The SQL over it (live_mappings_view,
 * live_bytes_view) is in the schema. Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_LIFETIMES_H
#define IOMMUTRACE_LIFETIMES_H

#include <stdint.h>
#include <sqlite3.h>

/**
 * lifetimes_compute() - (Re)compute map_pieces for the session from its maps and unmaps.
 *
 * With the session's summaries (summary.h) from the same sweep, in one transaction, and noted in
 * map_pieces_state.
 *
 * Return: 0, or -1 (logged).
 */
int lifetimes_compute(sqlite3 *db, int64_t session_id);
/**
 * lifetimes_ensure() - lifetimes_compute(), unless map_pieces_state and session_summary say it was
 * done for the session as it is now (the same number of maps and unmaps).
 *
 * Return: 0, or -1 (logged).
 */
int lifetimes_ensure(sqlite3 *db, int64_t session_id);

#endif
