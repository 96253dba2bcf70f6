/* Submission and completion of one NVMe queue pair (see nvme_queue.h). */
#include <string.h>
#include "nvme/nvme_queue.h"

void nvme_queue_init(struct nvme_queue *q, uint16_t id, uint16_t size, void *sq, uint64_t sq_iova,
		     void *cq, uint64_t cq_iova, volatile uint8_t *regs, unsigned dstrd)
{
	uint32_t stride = 4u << dstrd;

	memset(q, 0, sizeof(*q));
	q->id = id;
	q->size = size;
	q->sq = sq;
	q->cq = cq;
	q->sq_iova = sq_iova;
	q->cq_iova = cq_iova;
	q->sq_doorbell = (volatile uint32_t *)(regs + NVME_REG_DOORBELLS + 2u * id * stride);
	q->cq_doorbell = (volatile uint32_t *)(regs + NVME_REG_DOORBELLS + (2u * id + 1) * stride);
	q->phase = 1;
}

void nvme_queue_submit(struct nvme_queue *q, const struct nvme_sqe *e)
{
	q->sq[q->sq_tail] = *e;
	q->sq_tail = (uint16_t)((q->sq_tail + 1) % q->size);
	q->in_flight++;
	/* the device must see the entry before the doorbell that announces it */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*q->sq_doorbell = q->sq_tail;
}

int nvme_queue_reap(struct nvme_queue *q, struct nvme_cqe *out)
{
	volatile struct nvme_cqe *c = &q->cq[q->cq_head];

	if (NVME_CQE_PHASE(c->status) != q->phase)
		return 0;
	/* the rest of the entry only after its phase tag said it is complete */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	*out = *(const struct nvme_cqe *)c;
	q->cq_head = (uint16_t)((q->cq_head + 1) % q->size);
	if (q->cq_head == 0)
		q->phase ^= 1;
	q->in_flight--;
	*q->cq_doorbell = q->cq_head;
	return 1;
}
