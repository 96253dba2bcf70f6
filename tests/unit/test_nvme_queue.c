/* The NVMe queue pair's ring logic over plain memory standing in for the device: entries land at
 * the tail, doorbells sit at the stride CAP.DSTRD gives and carry the new tail and head, a
 * completion counts only with the current phase tag, and the tag flips when the queue wraps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "nvme/nvme_queue.h"

#define SIZE 4

static uint8_t regs[0x2000];
static struct nvme_sqe sq[SIZE];
static struct nvme_cqe cq[SIZE];

static void complete(unsigned slot, uint16_t cid, unsigned phase)
{
	cq[slot] = (struct nvme_cqe){ .cid = cid, .status = (uint16_t)phase };
}

static void doorbells_at_the_stride(void **state)
{
	struct nvme_queue q;

	nvme_queue_init(&q, 1, SIZE, sq, 0x1000, cq, 0x2000, regs, 1); /* stride 8 bytes */
	assert_ptr_equal(q.sq_doorbell, (void *)(regs + 0x1000 + 2 * 8));
	assert_ptr_equal(q.cq_doorbell, (void *)(regs + 0x1000 + 3 * 8));
	nvme_queue_init(&q, 0, SIZE, sq, 0x1000, cq, 0x2000, regs, 0);
	assert_ptr_equal(q.sq_doorbell, (void *)(regs + 0x1000));
	assert_ptr_equal(q.cq_doorbell, (void *)(regs + 0x1004));
}

static void submit_reap_and_wrap(void **state)
{
	struct nvme_queue q;
	struct nvme_cqe out;
	uint32_t *sq_db, *cq_db;

	memset(regs, 0, sizeof(regs));
	memset(sq, 0, sizeof(sq));
	memset(cq, 0, sizeof(cq));
	nvme_queue_init(&q, 1, SIZE, sq, 0x1000, cq, 0x2000, regs, 0);
	sq_db = (uint32_t *)(regs + 0x1008);
	cq_db = (uint32_t *)(regs + 0x100c);
	for (uint16_t cid = 0; cid < SIZE - 1; cid++)
		nvme_queue_submit(&q, &(struct nvme_sqe){ .opcode = 2, .cid = cid, .cdw10 = cid });
	assert_true(nvme_queue_full(&q));
	assert_int_equal(*sq_db, 3);
	assert_int_equal(sq[2].cid, 2);
	assert_int_equal(sq[2].cdw10, 2);
	assert_int_equal(nvme_queue_reap(&q, &out), 0); /* nothing completed yet */
	/* three completions in phase 1, then the fourth slot and the wrap */
	for (uint16_t i = 0; i < SIZE - 1; i++) {
		complete(i, i, 1);
		assert_int_equal(nvme_queue_reap(&q, &out), 1);
		assert_int_equal(out.cid, i);
		assert_int_equal(*cq_db, i + 1);
	}
	assert_int_equal(q.in_flight, 0);
	nvme_queue_submit(&q, &(struct nvme_sqe){ .cid = 7 }); /* tail 3 -> 0 */
	nvme_queue_submit(&q, &(struct nvme_sqe){ .cid = 8 }); /* tail 0 -> 1 */
	assert_int_equal(*sq_db, 1);
	assert_int_equal(sq[0].cid, 8);
	complete(3, 7, 1);
	assert_int_equal(nvme_queue_reap(&q, &out), 1);
	assert_int_equal(*cq_db, 0); /* the head wrapped */
	/* slot 0 still holds the old phase-1 entry: not a new completion */
	assert_int_equal(nvme_queue_reap(&q, &out), 0);
	complete(0, 8, 0); /* the new phase is 0 */
	assert_int_equal(nvme_queue_reap(&q, &out), 1);
	assert_int_equal(out.cid, 8);
	assert_int_equal(q.in_flight, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(doorbells_at_the_stride),
		cmocka_unit_test(submit_reap_and_wrap),
	};

	return cmocka_run_group_tests_name("nvme queue pair", tests, NULL, NULL);
}
