/* Decoding of the Intel VT-d Capability (CAP_REG, offset 08h) and Extended Capability (ECAP_REG,
 * offset 10h) registers, as sysfs shows them in /sys/class/iommu/dmarN/intel-iommu/{cap,ecap}.
 * Field positions from the Intel VT-d Architecture Specification, section 11.4.2 and 11.4.3.
 * Pure functions of the register values: no I/O. */
#ifndef IOMMUTRACE_INTEL_CAP_H
#define IOMMUTRACE_INTEL_CAP_H

#include <stdbool.h>
#include <stdint.h>

struct intel_cap {
	unsigned nd; /* ND, bits 2:0: number of domain ids is 2^(4 + 2*nd) */
	uint32_t num_domains;
	bool rwbf; /* bit 4: write-buffer flush required */
	bool caching_mode; /* CM, bit 7: not-present entries may be cached, so the
					 * driver flushes the IOTLB after every map */
	unsigned sagaw; /* SAGAW, bits 12:8: bit 1 39-bit (3-level), bit 2 48-bit
					 * (4-level), bit 3 57-bit (5-level) tables */
	unsigned mgaw_bits; /* MGAW, bits 21:16, plus 1: widest guest address */
	unsigned sllps; /* SLLPS, bits 37:34: second-level superpages, bit 0 2 MiB,
					 * bit 1 1 GiB (bits 2 and 3, 512 GiB and 256 TiB in early
					 * revisions, are reserved since VT-d 3.0) */
	bool psi; /* bit 39: page-selective invalidation */
	unsigned mamv; /* MAMV, bits 53:48: largest address mask of a PSI */
	bool fl1gp; /* bit 56: first-level 1 GiB pages */
	bool pi; /* bit 59: posted interrupts */
	bool fl5lp; /* bit 60: first-level 5-level paging */
};

struct intel_ecap {
	bool coherent; /* C, bit 0: page walks snoop the CPU caches */
	bool qi; /* QI, bit 1: queued invalidation */
	bool dt; /* DT, bit 2: device TLBs (ATS) */
	bool ir; /* IR, bit 3: interrupt remapping */
	bool eim; /* EIM, bit 4: x2APIC interrupt ids */
	bool pt; /* PT, bit 6: pass-through context entries */
	bool sc; /* SC, bit 7: snoop control */
	bool nest; /* NEST, bit 26: nested translation */
	bool prs; /* PRS, bit 29: page requests */
	unsigned pasid_bits; /* PSS, bits 39:35, plus 1; 0 without PASID support */
	bool pasid; /* PASID, bit 40 */
	bool smts; /* SMTS, bit 43: scalable-mode translation */
	bool slts; /* SLTS, bit 46: second-level translation (scalable mode) */
	bool flts; /* FLTS, bit 47: first-level translation (scalable mode) */
	bool pms; /* PMS, bit 51: performance monitoring (IOTLB counters) */
};

void intel_cap_decode(uint64_t cap, struct intel_cap *out);
void intel_ecap_decode(uint64_t ecap, struct intel_ecap *out);

/**
 * intel_cap_pgsize_bitmap() - Page sizes of a second-level (and legacy-mode) table on this unit.
 * @cap: the unit's CAP_REG
 *
 * This is the page-size set the Linux VT-d driver gives a domain on the unit unless superpages
 * are off (intel_iommu=sp_off), and the set the leaf rule uses. The reserved SLLPS bits 2 and 3
 * are left out: no driver maps such pages.
 *
 * Return: 4 KiB, plus 2 MiB when SLLPS bit 0 is set, plus 1 GiB when bit 1 is.
 */
uint64_t intel_cap_pgsize_bitmap(uint64_t cap);

/**
 * intel_sagaw_max_bits() - Widest address of the table depths @sagaw allows.
 *
 * Return: 39, 48 or 57 (30 and 64 for the bits early revisions defined); 0 when no bit is set.
 */
unsigned intel_sagaw_max_bits(unsigned sagaw);

#endif
