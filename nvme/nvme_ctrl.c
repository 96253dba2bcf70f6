/* Controller bring-up and admin commands (see nvme_ctrl.h). */
#include <stdio.h>
#include <string.h>
#include "common/log.h"
#include "common/clock.h"
#include "nvme/nvme_ctrl.h"

static uint32_t rd32(struct nvme_ctrl *c, unsigned off)
{
	return *(volatile uint32_t *)(c->regs + off);
}

static void wr32(struct nvme_ctrl *c, unsigned off, uint32_t v)
{
	*(volatile uint32_t *)(c->regs + off) = v;
}

/* 64-bit registers as two 32-bit accesses, low half first, as every controller accepts */
static uint64_t rd64(struct nvme_ctrl *c, unsigned off)
{
	uint64_t lo = rd32(c, off);

	return lo | (uint64_t)rd32(c, off + 4) << 32;
}

static void wr64(struct nvme_ctrl *c, unsigned off, uint64_t v)
{
	wr32(c, off, (uint32_t)v);
	wr32(c, off + 4, (uint32_t)(v >> 32));
}

/* Waits for CSTS.RDY to become ready (0 or 1) within CAP.TO. */
static int wait_ready(struct nvme_ctrl *c, uint32_t ready)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) / 1000000 + c->timeout_ms;
	uint32_t csts;

	for (;;) {
		csts = rd32(c, NVME_REG_CSTS);
		if (csts == 0xffffffff) {
			log_error("%s: the controller's registers read all ones: the device is gone",
				  c->name);
			return -1;
		}
		if ((csts & NVME_CSTS_RDY) == ready)
			return 0;
		if (ready && (csts & NVME_CSTS_CFS)) {
			log_error("%s: controller fatal status while enabling", c->name);
			return -1;
		}
		if (clock_ns(CLOCK_MONOTONIC) / 1000000 > deadline) {
			log_error("%s: the controller did not become %s within CAP.TO (%u ms)",
				  c->name, ready ? "ready" : "disabled", c->timeout_ms);
			return -1;
		}
	}
}

/* Submits on the admin queue and polls for its completion within CAP.TO. */
static int admin(struct nvme_ctrl *c, struct nvme_sqe *e, const char *what)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) / 1000000 + c->timeout_ms;
	struct nvme_cqe cqe;

	e->cid = c->next_cid++;
	nvme_queue_submit(&c->admin, e);
	while (!nvme_queue_reap(&c->admin, &cqe)) {
		if (clock_ns(CLOCK_MONOTONIC) / 1000000 > deadline) {
			log_error("%s: %s: no completion within %u ms", c->name, what,
				  c->timeout_ms);
			return -1;
		}
	}
	if (cqe.cid != e->cid || NVME_CQE_SC(cqe.status) || NVME_CQE_SCT(cqe.status)) {
		log_error("%s: %s failed: status type %u code %#x", c->name, what,
			  NVME_CQE_SCT(cqe.status), NVME_CQE_SC(cqe.status));
		return -1;
	}
	return 0;
}

static void ascii_field(char *out, size_t len, const uint8_t *p)
{
	size_t n = len - 1;

	memcpy(out, p, n);
	out[n] = '\0';
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\0'))
		out[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (out[i] < 0x20 || out[i] > 0x7e)
			out[i] = '?';
}

static int identify_ctrl(struct nvme_ctrl *c)
{
	struct nvme_sqe e = { .opcode = NVME_ADMIN_IDENTIFY,
			      .prp1 = c->scratch_iova,
			      .cdw10 = NVME_IDENTIFY_CTRL };
	const uint8_t *id = c->scratch;
	uint32_t min_page = NVME_PAGE << NVME_CAP_MPSMIN(c->cap);

	if (admin(c, &e, "Identify controller"))
		return -1;
	ascii_field(c->serial, sizeof(c->serial), id + NVME_ID_CTRL_SN);
	ascii_field(c->model, sizeof(c->model), id + NVME_ID_CTRL_MN);
	ascii_field(c->firmware, sizeof(c->firmware), id + NVME_ID_CTRL_FR);
	c->max_transfer = id[NVME_ID_CTRL_MDTS] ? min_page << id[NVME_ID_CTRL_MDTS] : 0;
	memcpy(&c->nn, id + NVME_ID_CTRL_NN, sizeof(c->nn));
	return 0;
}

int nvme_ctrl_init(struct nvme_ctrl *c, volatile uint8_t *regs, struct dma_area *dma,
		   const char *name)
{
	void *asq, *acq;
	uint64_t asq_iova, acq_iova;

	memset(c, 0, sizeof(*c));
	c->regs = regs;
	c->dma = dma;
	c->name = name;
	c->cap = rd64(c, NVME_REG_CAP);
	if (c->cap == ~0ull) {
		log_error("%s: the controller's registers read all ones: the device is gone", name);
		return -1;
	}
	c->dstrd = NVME_CAP_DSTRD(c->cap);
	c->mqes = NVME_CAP_MQES(c->cap);
	c->timeout_ms = NVME_CAP_TO_MS(c->cap);
	if (!c->timeout_ms)
		c->timeout_ms = 500;
	if (!NVME_CAP_CSS_NVM(c->cap) || NVME_CAP_MPSMIN(c->cap) != 0) {
		log_error("%s: the controller lacks the NVM command set or 4 KiB pages (CAP %#llx)",
			  name, (unsigned long long)c->cap);
		return -1;
	}
	wr32(c, NVME_REG_CC, rd32(c, NVME_REG_CC) & ~NVME_CC_EN);
	if (wait_ready(c, 0) ||
	    dma_area_alloc(dma, NVME_ADMIN_ENTRIES * sizeof(struct nvme_sqe), &asq, &asq_iova) ||
	    dma_area_alloc(dma, NVME_ADMIN_ENTRIES * sizeof(struct nvme_cqe), &acq, &acq_iova) ||
	    dma_area_alloc(dma, NVME_PAGE, &c->scratch, &c->scratch_iova))
		return -1;
	nvme_queue_init(&c->admin, 0, NVME_ADMIN_ENTRIES, asq, asq_iova, acq, acq_iova, regs,
			c->dstrd);
	wr32(c, NVME_REG_INTMS, 0xffffffff); /* polled: no interrupts */
	wr32(c, NVME_REG_AQA, (NVME_ADMIN_ENTRIES - 1) << 16 | (NVME_ADMIN_ENTRIES - 1));
	wr64(c, NVME_REG_ASQ, asq_iova);
	wr64(c, NVME_REG_ACQ, acq_iova);
	wr32(c, NVME_REG_CC,
	     NVME_CC_EN | NVME_CC_CSS_NVM | NVME_CC_MPS_4K | NVME_CC_AMS_RR | NVME_CC_IOSQES |
		     NVME_CC_IOCQES);
	if (wait_ready(c, 1))
		return -1;
	return identify_ctrl(c);
}

int nvme_ctrl_identify_ns(struct nvme_ctrl *c, uint32_t nsid, struct nvme_ns *ns)
{
	struct nvme_sqe e = { .opcode = NVME_ADMIN_IDENTIFY,
			      .nsid = nsid,
			      .prp1 = c->scratch_iova,
			      .cdw10 = NVME_IDENTIFY_NS };
	const uint8_t *id = c->scratch;
	unsigned format;

	if (nsid == 0 || nsid > c->nn) {
		log_error("%s has no namespace %u (it has %u: give --nsid 1 to %u)", c->name, nsid,
			  c->nn, c->nn);
		return -1;
	}
	if (admin(c, &e, "Identify namespace"))
		return -1;
	memcpy(&ns->blocks, id + NVME_ID_NS_NSZE, sizeof(ns->blocks));
	if (!ns->blocks) {
		log_error("%s: namespace %u is not active (size 0)", c->name, nsid);
		return -1;
	}
	format = id[NVME_ID_NS_FLBAS] & 0xf;
	ns->block_size = 1u << id[NVME_ID_NS_LBAF + 4 * format + 2];
	ns->nsid = nsid;
	return 0;
}

int nvme_ctrl_create_io_queue(struct nvme_ctrl *c, uint16_t qid, uint16_t size,
			      struct nvme_queue *q)
{
	struct nvme_sqe cq_cmd = { .opcode = NVME_ADMIN_CREATE_CQ };
	struct nvme_sqe sq_cmd = { .opcode = NVME_ADMIN_CREATE_SQ };
	void *sq, *cq;
	uint64_t sq_iova, cq_iova;

	if (size < 2 || size > c->mqes) {
		log_error("%s: a queue of %u entries is beyond the controller's limit of %u (MQES)",
			  c->name, size, c->mqes);
		return -1;
	}
	if (dma_area_alloc(c->dma, (uint64_t)size * sizeof(struct nvme_sqe), &sq, &sq_iova) ||
	    dma_area_alloc(c->dma, (uint64_t)size * sizeof(struct nvme_cqe), &cq, &cq_iova))
		return -1;
	nvme_queue_init(q, qid, size, sq, sq_iova, cq, cq_iova, c->regs, c->dstrd);
	cq_cmd.prp1 = cq_iova;
	cq_cmd.cdw10 = (uint32_t)(size - 1) << 16 | qid;
	cq_cmd.cdw11 = NVME_QUEUE_CONTIGUOUS; /* interrupts off */
	sq_cmd.prp1 = sq_iova;
	sq_cmd.cdw10 = (uint32_t)(size - 1) << 16 | qid;
	sq_cmd.cdw11 = (uint32_t)qid << 16 | NVME_QUEUE_CONTIGUOUS;
	if (admin(c, &cq_cmd, "Create I/O completion queue") ||
	    admin(c, &sq_cmd, "Create I/O submission queue"))
		return -1;
	return 0;
}

int nvme_ctrl_delete_io_queue(struct nvme_ctrl *c, struct nvme_queue *q)
{
	struct nvme_sqe sq_cmd = { .opcode = NVME_ADMIN_DELETE_SQ, .cdw10 = q->id };
	struct nvme_sqe cq_cmd = { .opcode = NVME_ADMIN_DELETE_CQ, .cdw10 = q->id };

	return admin(c, &sq_cmd, "Delete I/O submission queue") ||
			       admin(c, &cq_cmd, "Delete I/O completion queue") ?
		       -1 :
		       0;
}

void nvme_ctrl_disable(struct nvme_ctrl *c)
{
	if (!c->regs)
		return;
	wr32(c, NVME_REG_CC, rd32(c, NVME_REG_CC) & ~NVME_CC_EN);
	wait_ready(c, 0);
}
