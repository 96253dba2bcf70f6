/* Reads through the user-space NVMe driver (see nvme_io.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "common/clock.h"
#include "common/sysfs_file.h"
#include "io/nvme_io.h"
#include "io/pattern.h"
#include "io/workload.h"

#define IO_QID 1
#define REQUEST_CHECK_NS 1000000 /* how often to look at the request eventfd: 1 ms */

/* Bytes of one slot's PRP list for commands of up to max_bs bytes: one entry per page after the
 * first that a command at any 512-byte offset can touch, as a power of two so that lists tile
 * pages and none crosses one (a list that fits a page needs no chaining). 0: none needed. */
static uint32_t prp_list_bytes(uint32_t max_bs)
{
	uint32_t entries = (max_bs + NVME_PAGE - 1) / NVME_PAGE, bytes = 64;

	if (max_bs <= NVME_PAGE)
		return 0;
	while (bytes < entries * 8u)
		bytes *= 2;
	return bytes;
}

uint64_t nvme_io_dma_bytes(uint32_t max_qd, uint32_t max_bs)
{
	uint64_t entries = (uint64_t)max_qd + 1, list = prp_list_bytes(max_bs);
	/* admin SQ, admin CQ, identify data: a page each */
	uint64_t bytes = 3ull * NVME_PAGE;

	bytes += (entries * sizeof(struct nvme_sqe) + NVME_PAGE - 1) / NVME_PAGE * NVME_PAGE;
	bytes += (entries * sizeof(struct nvme_cqe) + NVME_PAGE - 1) / NVME_PAGE * NVME_PAGE;
	if (list)
		bytes += ((uint64_t)max_qd * list + NVME_PAGE - 1) / NVME_PAGE * NVME_PAGE;
	return (bytes + (2ull << 20) - 1) / (2ull << 20) * (2ull << 20);
}

/* Each slot's PRP list, carved from pages of the DMA area. */
static int alloc_prp_lists(struct nvme_io *n, struct dma_area *dma, uint32_t max_qd,
			   uint32_t max_bs)
{
	uint32_t list = prp_list_bytes(max_bs), per_page = list ? NVME_PAGE / list : 0;
	void *page = NULL;
	uint64_t page_dma = 0;

	n->prp_lists = calloc(max_qd, sizeof(*n->prp_lists));
	n->prp_list_dma = calloc(max_qd, sizeof(*n->prp_list_dma));
	if (!n->prp_lists || !n->prp_list_dma) {
		log_error("out of memory");
		return -1;
	}
	for (uint32_t i = 0; list && i < max_qd; i++) {
		if (i % per_page == 0 && dma_area_alloc(dma, NVME_PAGE, &page, &page_dma))
			return -1;
		n->prp_lists[i] = (uint64_t *)((char *)page + (i % per_page) * list);
		n->prp_list_dma[i] = page_dma + (i % per_page) * list;
	}
	return 0;
}

int nvme_io_open(struct nvme_io *n, volatile uint8_t *bar0, struct dma_area *dma, uint32_t nsid,
		 uint32_t max_qd, uint32_t max_bs)
{
	if (max_qd > NVME_IO_MAX_QD) {
		log_error("queue depth %u is above this engine's %u", max_qd, NVME_IO_MAX_QD);
		return -1;
	}
	if (nvme_ctrl_init(&n->ctrl, bar0, dma, n->bdf) ||
	    nvme_ctrl_identify_ns(&n->ctrl, nsid, &n->ns))
		return -1;
	if (max_qd + 1 > n->ctrl.mqes) {
		log_error("queue depth %u is above what %s takes: its queues hold %u entries (MQES), "
			  "so at most %u commands in flight",
			  max_qd, n->bdf, n->ctrl.mqes, n->ctrl.mqes - 1);
		return -1;
	}
	n->slots = max_qd;
	if (alloc_prp_lists(n, dma, max_qd, max_bs) ||
	    nvme_ctrl_create_io_queue(&n->ctrl, IO_QID, (uint16_t)(max_qd + 1), &n->q))
		return -1;
	n->queue_created = true;
	return 0;
}

void nvme_io_describe(const struct nvme_io *n, struct io_engine *e)
{
	e->block_size = n->ns.block_size;
	e->blocks = n->ns.blocks;
	e->max_transfer = n->ctrl.max_transfer;
	e->max_qd = n->ctrl.mqes - 1;
	memcpy(e->model, n->ctrl.model, sizeof(e->model));
	memcpy(e->serial, n->ctrl.serial, sizeof(e->serial));
}

/* PRP1 and PRP2 for bs bytes at buffer offset: PRP1 the first byte (with its offset into the
 * page), PRP2 the one page after it, or the slot's list of every page after it. */
static void set_prps(struct nvme_io *n, struct nvme_sqe *e, uint32_t slot, uint64_t offset,
		     uint32_t bs)
{
	uint64_t first_page_end = (offset / NVME_PAGE + 1) * NVME_PAGE;
	uint64_t end = offset + bs;
	uint32_t more = end > first_page_end ?
				(uint32_t)((end - first_page_end + NVME_PAGE - 1) / NVME_PAGE) :
				0;

	e->prp1 = n->data_dma(n->data_ctx, offset);
	e->prp2 = 0;
	if (more == 1) {
		e->prp2 = n->data_dma(n->data_ctx, first_page_end);
	} else if (more > 1) {
		for (uint32_t i = 0; i < more; i++)
			n->prp_lists[slot][i] =
				n->data_dma(n->data_ctx, first_page_end + (uint64_t)i * NVME_PAGE);
		e->prp2 = n->prp_list_dma[slot];
	}
}

struct inflight {
	uint64_t start_ns, lba, offset;
};

/* The slot's next command; a write first puts the pattern of its blocks into its piece of the
 * buffer. */
static void submit(struct nvme_io *n, const struct io_point *p, struct io_cursor *c,
		   struct inflight *f, uint32_t slot, void *buffer)
{
	bool write = io_workload_writes(p->workload);
	struct nvme_sqe e = { .opcode = write ? NVME_CMD_WRITE : NVME_CMD_READ,
			      .cid = (uint16_t)slot,
			      .nsid = n->ns.nsid };
	uint64_t blocks = p->bs / n->ns.block_size;

	f[slot].lba = io_cursor_next_lba(c);
	f[slot].offset = io_cursor_next_offset(c, slot);
	if (write)
		pattern_fill((char *)buffer + f[slot].offset,
			     f[slot].lba * (n->ns.block_size / PATTERN_SECTOR), p->bs);
	set_prps(n, &e, slot, f[slot].offset, p->bs);
	e.cdw10 = (uint32_t)f[slot].lba;
	e.cdw11 = (uint32_t)(f[slot].lba >> 32);
	e.cdw12 = (uint32_t)(blocks - 1);
	f[slot].start_ns = clock_ns(CLOCK_MONOTONIC);
	nvme_queue_submit(&n->q, &e);
}

enum device_state { DEVICE_OK, DEVICE_GONE, DEVICE_FAILED };

/* DEVICE_GONE when the kernel asked for the device back (removal, unbind: VFIO's request
 * eventfd), or the device left its driver or the bus without asking (uio_pci_generic lets go at
 * once), or its registers read all ones (surprise removal); DEVICE_FAILED when it reports a fatal
 * error; each logged. */
static enum device_state device_state(struct nvme_io *n)
{
	char path[PATH_MAX], driver[SYSFS_NAME_MAX + 1];
	uint64_t count;
	uint32_t csts;

	if (n->request_fd >= 0 && read(n->request_fd, &count, sizeof(count)) == sizeof(count)) {
		log_error("%s: the kernel asks for the device back (it is being removed or "
			  "unbound): stopping with %u commands in flight",
			  n->bdf, n->q.in_flight);
		return DEVICE_GONE;
	}
	if (n->driver[0] &&
	    (sysfs_path(path, sizeof(path), n->sysfs_root, "/sys/bus/pci/devices/%s/driver",
			n->bdf) ||
	     sysfs_link_name(path, driver, sizeof(driver)) || strcmp(driver, n->driver))) {
		log_error("%s: the device left %s (it was removed or unbound): stopping with %u "
			  "commands in flight",
			  n->bdf, n->driver, n->q.in_flight);
		return DEVICE_GONE;
	}
	csts = *(volatile uint32_t *)(n->ctrl.regs + NVME_REG_CSTS);
	if (csts == 0xffffffff) {
		log_error("%s: the controller's registers read all ones (it is gone): stopping with "
			  "%u commands in flight",
			  n->bdf, n->q.in_flight);
		return DEVICE_GONE;
	}
	if (csts & NVME_CSTS_CFS) {
		log_error("%s: the controller reports a fatal error (CSTS.CFS): stopping with %u "
			  "commands in flight",
			  n->bdf, n->q.in_flight);
		return DEVICE_FAILED;
	}
	return DEVICE_OK;
}

/* One completion: counted, timed and checked; the slot is then free. */
static int account(struct nvme_io *n, const struct io_point *p, const void *buffer,
		   const struct nvme_cqe *cqe, const struct inflight *f, uint64_t now,
		   struct io_result *r)
{
	if (cqe->cid >= p->qd) {
		log_error("%s: a completion for command %u, which was never submitted", n->bdf,
			  cqe->cid);
		return -1;
	}
	if (NVME_CQE_SC(cqe->status) || NVME_CQE_SCT(cqe->status)) {
		r->failed++;
		return 0;
	}
	r->completed++;
	r->bytes += p->bs;
	lat_hist_add(&r->hist, now - f[cqe->cid].start_ns);
	if (p->verify && !io_workload_writes(p->workload) &&
	    pattern_mismatch((const char *)buffer + f[cqe->cid].offset,
			     f[cqe->cid].lba * (n->ns.block_size / PATTERN_SECTOR), p->bs) >= 0)
		r->verify_errors++;
	return 0;
}

int nvme_io_run(struct nvme_io *n, const struct io_point *p, void *buffer, struct io_result *r)
{
	struct inflight *f = calloc(p->qd, sizeof(*f));
	struct io_cursor c = { 0 };
	uint64_t start, end, last_completion, last_check, now;
	uint64_t timeout_ns = (uint64_t)n->ctrl.timeout_ms * 1000000ull;
	struct nvme_cqe cqe;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!f || io_cursor_init(&c, p, n->ns.block_size, n->ns.blocks))
		goto cleanup;
	start = last_completion = last_check = clock_ns(CLOCK_MONOTONIC);
	end = start + p->duration_ns;
	if (p->qd > n->slots) {
		log_error("queue depth %u is above the %u the queue was made for", p->qd, n->slots);
		goto cleanup;
	}
	for (uint32_t s = 0; s < p->qd; s++)
		submit(n, p, &c, f, s, buffer);
	while (n->q.in_flight) {
		int got = nvme_queue_reap(&n->q, &cqe);

		now = clock_ns(CLOCK_MONOTONIC);
		if (now - last_check > REQUEST_CHECK_NS) {
			last_check = now;
			switch (device_state(n)) {
			case DEVICE_OK:
				break;
			case DEVICE_GONE:
				ret = NVME_IO_DEVICE_REQUESTED;
				goto cleanup;
			case DEVICE_FAILED:
				goto cleanup;
			}
		}
		if (!got) {
			if (now - last_completion > timeout_ns) {
				log_error("%s: no completion for %u ms with %u commands in flight: the "
					  "device stopped responding",
					  n->bdf, n->ctrl.timeout_ms, n->q.in_flight);
				goto cleanup;
			}
			continue;
		}
		last_completion = now;
		if (account(n, p, buffer, &cqe, f, now, r))
			goto cleanup;
		if (now < end && !*n->stop)
			submit(n, p, &c, f, cqe.cid, buffer);
	}
	r->elapsed_ns = clock_ns(CLOCK_MONOTONIC) - start;
	ret = 0;
cleanup:
	io_cursor_free(&c);
	free(f);
	return ret;
}

void nvme_io_close(struct nvme_io *n)
{
	if (n->queue_created && n->q.in_flight == 0)
		nvme_ctrl_delete_io_queue(&n->ctrl, &n->q);
	n->queue_created = false;
	if (n->ctrl.regs)
		nvme_ctrl_disable(&n->ctrl);
	free(n->prp_lists);
	free(n->prp_list_dma);
	n->prp_lists = NULL;
	n->prp_list_dma = NULL;
}
