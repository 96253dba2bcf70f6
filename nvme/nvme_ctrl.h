/* A user-space NVMe controller driver over a mapped BAR0: reset (CC.EN 0, then 1, each waited for
 * within CAP.TO), the admin queue pair, Identify controller and namespace, I/O queue pairs created
 * and deleted by admin commands. Its own structures live in a DMA area the caller mapped for the
 * device. Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_NVME_CTRL_H
#define IOMMUTRACE_NVME_CTRL_H

#include <stdint.h>
#include "probes/dma_area.h"
#include "nvme/nvme_queue.h"

#define NVME_ADMIN_ENTRIES 32

struct nvme_ctrl {
	volatile uint8_t *regs;
	uint64_t cap;
	unsigned dstrd;
	uint32_t mqes; /* entries a queue may have */
	uint32_t timeout_ms; /* CAP.TO */
	uint32_t max_transfer; /* bytes per command (MDTS); 0: no limit */
	uint32_t nn; /* namespaces */
	char serial[21], model[41], firmware[9];
	struct dma_area *dma;
	struct nvme_queue admin;
	void *scratch; /* one page for identify data */
	uint64_t scratch_iova;
	uint16_t next_cid;
	const char *name; /* the device, for messages */
};

struct nvme_ns {
	uint32_t nsid;
	uint64_t blocks; /* NSZE */
	uint32_t block_size; /* bytes per logical block */
};

/**
 * nvme_ctrl_init() - Reset the controller, set up the admin queue pair and read Identify
 * controller.
 */
int nvme_ctrl_init(struct nvme_ctrl *c, volatile uint8_t *regs, struct dma_area *dma,
		   const char *name);
/**
 * nvme_ctrl_identify_ns() - Identify namespace @nsid; a namespace that is not there is an error
 * naming the count.
 */
int nvme_ctrl_identify_ns(struct nvme_ctrl *c, uint32_t nsid, struct nvme_ns *ns);
/**
 * nvme_ctrl_create_io_queue() - Create I/O queue pair @qid with @size entries (CQ, then SQ),
 * memory from the DMA area.
 */
int nvme_ctrl_create_io_queue(struct nvme_ctrl *c, uint16_t qid, uint16_t size,
			      struct nvme_queue *q);
/**
 * nvme_ctrl_delete_io_queue() - Delete the I/O queue pair (SQ, then CQ).
 */
int nvme_ctrl_delete_io_queue(struct nvme_ctrl *c, struct nvme_queue *q);
/**
 * nvme_ctrl_disable() - CC.EN 0: the controller stops all DMA.
 *
 * Context: call it before the controller's memory is unmapped.
 */
void nvme_ctrl_disable(struct nvme_ctrl *c);

#endif
