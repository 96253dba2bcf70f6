/* The user-space NVMe driver doing `io`'s reads, whatever gave it the device (VFIO or uio): the
 * controller brought up over a mapped BAR0 and a DMA area, Identify, one I/O queue pair, PRPs with
 * a list page per command slot, reads kept qd deep and completions polled on the phase tag
 * without sleeping. The platform turns buffer offsets into DMA addresses (an IOVA under VFIO, a
 * physical address under uio) and may give an eventfd the kernel signals when it wants the
 * device back. Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_NVME_IO_H
#define IOMMUTRACE_NVME_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "nvme/nvme_ctrl.h"
#include "engine.h"

/* Command slots, each with a PRP list page in the 2 MiB DMA area (the queues need ~20 KiB). */
#define NVME_IO_MAX_SLOTS 256
/* nvme_io_run's return when the kernel asked for the device back. */
#define NVME_IO_DEVICE_REQUESTED 1

struct nvme_io {
	struct nvme_ctrl ctrl;
	struct nvme_ns ns;
	struct nvme_queue q;
	bool queue_created;
	uint64_t *prp_lists[NVME_IO_MAX_SLOTS];
	uint64_t prp_list_dma[NVME_IO_MAX_SLOTS];
	/* the DMA address of the buffer's byte at offset (page-aligned), through to its page end */
	uint64_t (*data_dma)(void *ctx, uint64_t offset);
	void *data_ctx;
	int request_fd;			/* -1: the platform has none */
	volatile sig_atomic_t *stop;
};

/* Brings up the controller, identifies namespace nsid, creates an I/O queue pair for max_qd
 * commands and their PRP list pages. */
int nvme_io_open(struct nvme_io *n, volatile uint8_t *bar0, struct dma_area *dma,
		 const char *name, uint32_t nsid, uint32_t max_qd);
/* What the engine tells the CLI about the device. */
void nvme_io_describe(const struct nvme_io *n, struct io_engine *e);
/* One point into buffer (this process's view of the data buffer): 0, -1 on failure, or
 * NVME_IO_DEVICE_REQUESTED (logged) when the kernel wants the device back. */
int nvme_io_run(struct nvme_io *n, const struct io_point *p, const void *buffer,
		struct io_result *r);
/* Deletes the queue pair when idle and disables the controller, after which it does no DMA. */
void nvme_io_close(struct nvme_io *n);

#endif
