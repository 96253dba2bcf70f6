/* Writing a session's map_pieces rows in bulk, for lifetimes.c: the session's old rows deleted,
 * the indexes of map_pieces set aside while the rows go in (BATCH rows per INSERT) and made again
 * at the end, one sort each instead of a B-tree insert per row. Run it inside a transaction
 * (lifetimes_compute's savepoint): a failure leaves the indexes dropped until it rolls back.
 * Functions log one line on failure and return -1 (or NULL). */
#ifndef IOMMUTRACE_PIECE_WRITER_H
#define IOMMUTRACE_PIECE_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

/**
 * struct piece_row - A map_pieces row of the session.
 * @end_ns:   < 0: unmapped_ns NULL
 * @unmap_id: < 0: unmap_id NULL
 * @known:    false: domain_ptr NULL
 * @reason:   a string that outlives the writer, or NULL
 */
struct piece_row {
	int64_t map_id, domain, iova, paddr, size, mapped_ns, end_ns, unmap_id;
	bool known;
	const char *reason;
};

struct piece_writer;

struct piece_writer *piece_writer_begin(sqlite3 *db, int64_t session_id);
int piece_writer_add(struct piece_writer *w, const struct piece_row *r);
/**
 * piece_writer_end() - Write the rows still waiting and make the indexes again.
 *
 * Return: 0, or -1 (logged).
 */
int piece_writer_end(struct piece_writer *w);
void piece_writer_free(struct piece_writer *w);

#endif
