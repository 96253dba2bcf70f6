/* NVMe controller registers, submission and completion queue entries, and the admin and NVM
 * commands the user-space driver issues, as the NVM Express Base Specification lays them out.
 * Entry sizes are part of the device's ABI and checked below. */
#ifndef IOMMUTRACE_NVME_REGS_H
#define IOMMUTRACE_NVME_REGS_H

#include <assert.h>
#include <stdint.h>

/* Controller registers (BAR0) */
#define NVME_REG_CAP 0x00 /* 64-bit: capabilities */
#define NVME_REG_VS 0x08 /* version */
#define NVME_REG_INTMS 0x0c /* interrupt mask set */
#define NVME_REG_CC 0x14 /* controller configuration */
#define NVME_REG_CSTS 0x1c /* controller status */
#define NVME_REG_AQA 0x24 /* admin queue attributes */
#define NVME_REG_ASQ 0x28 /* 64-bit: admin submission queue base */
#define NVME_REG_ACQ 0x30 /* 64-bit: admin completion queue base */
#define NVME_REG_DOORBELLS 0x1000

#define NVME_CAP_MQES(cap) ((uint32_t)((cap)&0xffff) + 1) /* entries per queue */
#define NVME_CAP_CQR(cap) (((cap) >> 16) & 1) /* queues must be contiguous */
#define NVME_CAP_TO_MS(cap) ((((cap) >> 24) & 0xff) * 500) /* ready timeout */
#define NVME_CAP_DSTRD(cap) (((cap) >> 32) & 0xf) /* doorbell stride: 4 << DSTRD */
#define NVME_CAP_CSS_NVM(cap) (((cap) >> 37) & 1) /* the NVM command set */
#define NVME_CAP_MPSMIN(cap) (((cap) >> 48) & 0xf) /* min page size: 4 KiB << MPSMIN */

#define NVME_CC_EN (1u << 0)
#define NVME_CC_CSS_NVM (0u << 4)
#define NVME_CC_MPS_4K (0u << 7)
#define NVME_CC_AMS_RR (0u << 11)
#define NVME_CC_IOSQES (6u << 16) /* 64-byte submission entries */
#define NVME_CC_IOCQES (4u << 20) /* 16-byte completion entries */

#define NVME_CSTS_RDY (1u << 0)
#define NVME_CSTS_CFS (1u << 1) /* controller fatal status */

#define NVME_PAGE 4096u /* memory page size the driver sets (CC.MPS 0) */

struct nvme_sqe {
	uint8_t opcode;
	uint8_t flags; /* fused operation, PRP or SGL: 0 = PRPs */
	uint16_t cid; /* command identifier, echoed in the completion */
	uint32_t nsid;
	uint32_t cdw2, cdw3;
	uint64_t mptr;
	uint64_t prp1, prp2;
	uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

struct nvme_cqe {
	uint32_t result; /* command-specific (DW0) */
	uint32_t rsvd;
	uint16_t sq_head;
	uint16_t sq_id;
	uint16_t cid;
	uint16_t status; /* bit 0: phase tag; bits 15:1: status field */
};

static_assert(sizeof(struct nvme_sqe) == 64, "submission queue entry is 64 bytes");
static_assert(sizeof(struct nvme_cqe) == 16, "completion queue entry is 16 bytes");

#define NVME_CQE_PHASE(status) ((status)&1)
#define NVME_CQE_SC(status) (((status) >> 1) & 0xff) /* status code */
#define NVME_CQE_SCT(status) (((status) >> 9) & 0x7) /* status code type */

/* Admin commands */
#define NVME_ADMIN_DELETE_SQ 0x00
#define NVME_ADMIN_CREATE_SQ 0x01
#define NVME_ADMIN_DELETE_CQ 0x04
#define NVME_ADMIN_CREATE_CQ 0x05
#define NVME_ADMIN_IDENTIFY 0x06

#define NVME_IDENTIFY_NS 0x00 /* CNS: namespace data structure */
#define NVME_IDENTIFY_CTRL 0x01 /* CNS: controller data structure */

#define NVME_QUEUE_CONTIGUOUS (1u << 0) /* create SQ/CQ: physically contiguous */

/* NVM commands */
#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ 0x02

/* Byte offsets in the identify data structures (4 KiB each) */
#define NVME_ID_CTRL_SN 4 /* serial number, 20 ASCII bytes */
#define NVME_ID_CTRL_MN 24 /* model number, 40 ASCII bytes */
#define NVME_ID_CTRL_FR 64 /* firmware revision, 8 ASCII bytes */
#define NVME_ID_CTRL_MDTS 77 /* max transfer: 2^MDTS min pages; 0 = no limit */
#define NVME_ID_CTRL_NN 516 /* 32-bit: number of namespaces */
#define NVME_ID_NS_NSZE 0 /* 64-bit: namespace size in logical blocks */
#define NVME_ID_NS_FLBAS 26 /* bits 3:0: the LBA format in use */
#define NVME_ID_NS_LBAF 128 /* 4 bytes per format; bits 23:16: log2 of the LBA size */

#endif
