/* The user-space NVMe driver doing `io`'s reads and writes, whatever gave it the device (VFIO or
 * uio): the controller brought up over a mapped BAR0 and a DMA area, Identify, one I/O queue pair,
 * PRPs with a PRP list per command slot, commands kept qd deep and completions polled on the
 * phase tag without sleeping. The platform turns buffer offsets into DMA addresses (an IOVA under
 * VFIO, a physical address under uio) and may give an eventfd the kernel signals when it wants
 * the device back. Every millisecond the run also checks that the device is still there: its
 * sysfs driver link (for a driver that lets go without asking, uio_pci_generic) and CSTS (all ones
 * once it stopped answering), and that it reports no fatal error (CSTS.CFS). Functions log one
 * line on failure and return -1. */
#ifndef IOMMUTRACE_NVME_IO_H
#define IOMMUTRACE_NVME_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "nvme/nvme_ctrl.h"
#include "io/engine.h"

/* Commands in flight on the one queue pair: its size (a 16-bit count of entries) less one. */
#define NVME_IO_MAX_QD 65534u
/* nvme_io_run's return when the kernel asked for the device back or it went away (a fatal
 * controller error is -1: the device stays). */
#define NVME_IO_DEVICE_REQUESTED 1

struct nvme_io {
	struct nvme_ctrl ctrl;
	struct nvme_ns ns;
	struct nvme_queue q;
	bool queue_created;
	uint32_t slots; /* max_qd */
	uint64_t **prp_lists; /* per slot, NULL when commands never need a list */
	uint64_t *prp_list_dma;
	/* the DMA address of the buffer's byte at offset (page-aligned), through to its page end */
	uint64_t (*data_dma)(void *ctx, uint64_t offset);
	void *data_ctx;
	int request_fd; /* -1: the platform has none */
	char bdf[16]; /* the device, whose sysfs entry must stay */
	char driver[32]; /* the driver it must stay bound to */
	const char *sysfs_root; /* where that entry is (as for sysfs_path): NULL, the live
					 * system */
	volatile sig_atomic_t *stop;
};

/**
 * nvme_io_dma_bytes() - The DMA area the driver needs for @max_qd commands of up to @max_bs
 * bytes: admin and I/O queues, identify data and the PRP lists, rounded up to 2 MiB.
 */
uint64_t nvme_io_dma_bytes(uint32_t max_qd, uint32_t max_bs);
/**
 * nvme_io_open() - Bring up the controller, identify namespace @nsid, create an I/O queue pair
 * for @max_qd commands and their PRP lists (for commands of up to @max_bs bytes).
 * @n: n->bdf and n->driver name the device and its driver (uio_pci_generic, vfio-pci)
 */
int nvme_io_open(struct nvme_io *n, volatile uint8_t *bar0, struct dma_area *dma, uint32_t nsid,
		 uint32_t max_qd, uint32_t max_bs);
/**
 * nvme_io_describe() - What the engine tells the CLI about the device.
 */
void nvme_io_describe(const struct nvme_io *n, struct io_engine *e);
/**
 * nvme_io_run() - One point into (or, writing, out of) @buffer.
 * @buffer: this process's view of the data buffer
 *
 * Return: 0, -1 on failure, or NVME_IO_DEVICE_REQUESTED (logged) when the kernel wants the device
 * back or it went away.
 */
int nvme_io_run(struct nvme_io *n, const struct io_point *p, void *buffer, struct io_result *r);
/**
 * nvme_io_close() - Delete the queue pair when idle and disable the controller, after which it
 * does no DMA.
 */
void nvme_io_close(struct nvme_io *n);

#endif
