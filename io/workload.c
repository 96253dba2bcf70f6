/* LBAs and buffer offsets of the commands (see workload.h). */
#include <stdlib.h>
#include "common/log.h"
#include "io/workload.h"

int io_cursor_init(struct io_cursor *c, const struct io_point *p, uint32_t block_size,
		   uint64_t blocks)
{
	uint64_t pieces = p->window / p->bs;

	c->workload = p->workload;
	c->bs = p->bs;
	c->qd = p->qd;
	c->blocks_per_cmd = p->bs / block_size;
	c->cmd_starts = blocks / c->blocks_per_cmd;
	c->next_seq = 0;
	c->rng = p->seed ? p->seed : 0x9e3779b97f4a7c15ull;
	if (!c->cmd_starts) {
		log_error("the namespace (%llu blocks of %u bytes) is smaller than one %u-byte read",
			  (unsigned long long)blocks, block_size, p->bs);
		return -1;
	}
	if (pieces < p->qd) {
		log_error("a window of %#llx bytes holds fewer than qd %u reads of %u bytes: give a "
			  "larger --window or --size",
			  (unsigned long long)p->window, p->qd, p->bs);
		return -1;
	}
	c->lanes_per_slot = pieces / p->qd;
	c->uses = calloc(p->qd, sizeof(*c->uses));
	if (!c->uses) {
		log_error("out of memory");
		return -1;
	}
	return 0;
}

/* xorshift64*: fast, and good enough to spread reads over the namespace */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

uint64_t io_cursor_next_lba(struct io_cursor *c)
{
	uint64_t start;

	if (io_workload_random(c->workload))
		start = next_random(&c->rng) % c->cmd_starts;
	else
		start = c->next_seq++ % c->cmd_starts;
	return start * c->blocks_per_cmd;
}

uint64_t io_cursor_next_offset(struct io_cursor *c, uint32_t slot)
{
	uint64_t lane = c->uses[slot]++ % c->lanes_per_slot;

	return ((uint64_t)slot * c->lanes_per_slot + lane) * c->bs;
}

void io_cursor_free(struct io_cursor *c)
{
	free(c->uses);
	c->uses = NULL;
}
