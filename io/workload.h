/* Which blocks each command reads and where in the buffer its data lands. Random reads pick
 * bs-aligned offsets uniformly over the namespace; sequential reads walk it and wrap. Each of the
 * qd command slots owns its own share of the window, so no two commands in flight ever write the
 * same bytes (which --verify needs), and the data addresses cycle through the whole window. */
#ifndef IOMMUTRACE_WORKLOAD_H
#define IOMMUTRACE_WORKLOAD_H

#include <stdint.h>
#include "io/engine.h"

struct io_cursor {
	enum io_workload workload;
	uint64_t blocks_per_cmd; /* bs in logical blocks */
	uint64_t cmd_starts; /* bs-aligned command positions in the namespace */
	uint64_t next_seq;
	uint64_t rng;
	uint32_t bs, qd;
	uint64_t lanes_per_slot; /* bs-sized pieces of the window each slot cycles through */
	uint64_t *uses; /* per slot: commands it has carried */
};

/**
 * io_cursor_init() - Set up the cursor for point @p on a namespace of @blocks blocks.
 *
 * Return: 0, or -1 (logged) when the point does not fit the namespace or the window.
 */
int io_cursor_init(struct io_cursor *c, const struct io_point *p, uint32_t block_size,
		   uint64_t blocks);
/**
 * io_cursor_next_lba() - The first logical block of the next command.
 */
uint64_t io_cursor_next_lba(struct io_cursor *c);
/**
 * io_cursor_next_offset() - The buffer offset for the next command of @slot (0 .. qd-1).
 */
uint64_t io_cursor_next_offset(struct io_cursor *c, uint32_t slot);
void io_cursor_free(struct io_cursor *c);

#endif
