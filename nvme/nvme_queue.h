/* One NVMe queue pair as the driver sees it: submission entries written into host memory and
 * announced through the SQ tail doorbell; completions found by their phase tag, without
 * interrupts or sleeping, and released through the CQ head doorbell. Not thread-safe: one
 * thread per queue pair. */
#ifndef IOMMUTRACE_NVME_QUEUE_H
#define IOMMUTRACE_NVME_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include "nvme/nvme_regs.h"

struct nvme_queue {
	uint16_t id; /* 0: the admin queue pair */
	uint16_t size; /* entries in each queue; at most size - 1 commands in flight */
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	uint64_t sq_iova, cq_iova;
	volatile uint32_t *sq_doorbell, *cq_doorbell;
	uint16_t sq_tail, cq_head;
	uint16_t in_flight;
	uint8_t phase; /* the phase tag a new completion carries */
};

/**
 * nvme_queue_init() - Set up the pair over zeroed queue memory.
 * @regs: the mapped BAR0
 * @dstrd: the doorbell stride field of CAP
 */
void nvme_queue_init(struct nvme_queue *q, uint16_t id, uint16_t size, void *sq, uint64_t sq_iova,
		     void *cq, uint64_t cq_iova, volatile uint8_t *regs, unsigned dstrd);
static inline bool nvme_queue_full(const struct nvme_queue *q)
{
	return q->in_flight == q->size - 1;
}
/**
 * nvme_queue_submit() - Write the entry at the tail and ring the doorbell.
 *
 * Context: the caller checked nvme_queue_full().
 */
void nvme_queue_submit(struct nvme_queue *q, const struct nvme_sqe *e);
/**
 * nvme_queue_reap() - Take the next completion into *@out and release its slot.
 *
 * Return: 1, or 0 when none is there yet.
 */
int nvme_queue_reap(struct nvme_queue *q, struct nvme_cqe *out);

#endif
