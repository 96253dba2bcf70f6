/* Reads through the user-space NVMe driver (see nvme_io.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "common/clock.h"
#include "nvme_io.h"
#include "pattern.h"
#include "workload.h"

#define IO_QID 1
#define REQUEST_CHECK_NS 1000000	/* how often to look at the request eventfd: 1 ms */

int nvme_io_open(struct nvme_io *n, volatile uint8_t *bar0, struct dma_area *dma,
		 const char *name, uint32_t nsid, uint32_t max_qd)
{
	if (max_qd >= NVME_IO_MAX_SLOTS) {
		log_error("queue depth %u is above this engine's %u", max_qd, NVME_IO_MAX_SLOTS - 1);
		return -1;
	}
	if (nvme_ctrl_init(&n->ctrl, bar0, dma, name) ||
	    nvme_ctrl_identify_ns(&n->ctrl, nsid, &n->ns))
		return -1;
	if (max_qd + 1 > n->ctrl.mqes) {
		log_error("queue depth %u is above what %s takes: its queues hold %u entries (MQES), "
			  "so at most %u commands in flight", max_qd, name, n->ctrl.mqes,
			  n->ctrl.mqes - 1);
		return -1;
	}
	for (uint32_t i = 0; i < max_qd; i++) {
		void *page;

		if (dma_area_alloc(dma, NVME_PAGE, &page, &n->prp_list_dma[i]))
			return -1;
		n->prp_lists[i] = page;
	}
	if (nvme_ctrl_create_io_queue(&n->ctrl, IO_QID, (uint16_t)(max_qd + 1), &n->q))
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

/* PRP1 and PRP2 for bs bytes at buffer offset (page-aligned): the second page itself, or the
 * slot's list page with every page after the first. */
static void set_prps(struct nvme_io *n, struct nvme_sqe *e, uint32_t slot, uint64_t offset,
		     uint32_t bs)
{
	uint32_t pages = (bs + NVME_PAGE - 1) / NVME_PAGE;

	e->prp1 = n->data_dma(n->data_ctx, offset);
	e->prp2 = 0;
	if (pages == 2) {
		e->prp2 = n->data_dma(n->data_ctx, offset + NVME_PAGE);
	} else if (pages > 2) {
		for (uint32_t i = 1; i < pages; i++)
			n->prp_lists[slot][i - 1] =
				n->data_dma(n->data_ctx, offset + (uint64_t)i * NVME_PAGE);
		e->prp2 = n->prp_list_dma[slot];
	}
}

struct inflight {
	uint64_t start_ns, lba, offset;
};

static void submit(struct nvme_io *n, struct io_cursor *c, struct inflight *f, uint32_t slot,
		   uint32_t bs)
{
	struct nvme_sqe e = { .opcode = NVME_CMD_READ, .cid = (uint16_t)slot, .nsid = n->ns.nsid };
	uint64_t blocks = bs / n->ns.block_size;

	f[slot].lba = io_cursor_next_lba(c);
	f[slot].offset = io_cursor_next_offset(c, slot);
	set_prps(n, &e, slot, f[slot].offset, bs);
	e.cdw10 = (uint32_t)f[slot].lba;
	e.cdw11 = (uint32_t)(f[slot].lba >> 32);
	e.cdw12 = (uint32_t)(blocks - 1);
	f[slot].start_ns = clock_ns(CLOCK_MONOTONIC);
	nvme_queue_submit(&n->q, &e);
}

/* Whether the kernel asked for the device back (removal, unbind). */
static bool device_requested(struct nvme_io *n)
{
	uint64_t count;

	if (n->request_fd < 0 || read(n->request_fd, &count, sizeof(count)) != sizeof(count))
		return false;
	log_error("%s: the kernel asks for the device back (it is being removed or unbound): "
		  "stopping with %u reads in flight", n->ctrl.name, n->q.in_flight);
	return true;
}

/* One completion: counted, timed and checked; the slot is then free. */
static int account(struct nvme_io *n, const struct io_point *p, const void *buffer,
		   const struct nvme_cqe *cqe, const struct inflight *f, uint64_t now,
		   struct io_result *r)
{
	if (cqe->cid >= p->qd) {
		log_error("%s: a completion for command %u, which was never submitted", n->ctrl.name,
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
	if (p->verify &&
	    pattern_mismatch((const char *)buffer + f[cqe->cid].offset,
			     f[cqe->cid].lba * (n->ns.block_size / PATTERN_SECTOR), p->bs) >= 0)
		r->verify_errors++;
	return 0;
}

int nvme_io_run(struct nvme_io *n, const struct io_point *p, const void *buffer,
		struct io_result *r)
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
	for (uint32_t s = 0; s < p->qd; s++)
		submit(n, &c, f, s, p->bs);
	while (n->q.in_flight) {
		int got = nvme_queue_reap(&n->q, &cqe);

		now = clock_ns(CLOCK_MONOTONIC);
		if (now - last_check > REQUEST_CHECK_NS) {
			last_check = now;
			if (device_requested(n)) {
				ret = NVME_IO_DEVICE_REQUESTED;
				goto cleanup;
			}
		}
		if (!got) {
			if (now - last_completion > timeout_ns) {
				log_error("%s: no completion for %u ms with %u commands in flight: the "
					  "device stopped responding", n->ctrl.name, n->ctrl.timeout_ms,
					  n->q.in_flight);
				goto cleanup;
			}
			continue;
		}
		last_completion = now;
		if (account(n, p, buffer, &cqe, f, now, r))
			goto cleanup;
		if (now < end && !*n->stop)
			submit(n, &c, f, cqe.cid, p->bs);
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
	nvme_ctrl_disable(&n->ctrl);
}
