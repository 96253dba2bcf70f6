/* Decoding of what an AMD-Vi unit shows in /sys/class/iommu/ivhdN/amd-iommu/: 'cap', the IOMMU
 * capability header in PCI config space (offset 00h of the capability block), and 'features',
 * the Extended Feature Register (MMIO 0030h, EFR). Field positions from the AMD I/O
 * Virtualization Technology (IOMMU) Specification, #48882, sections 3.2.1 and 3.4.1, as the
 * Linux driver names them (drivers/iommu/amd/amd_iommu_types.h). Pure functions: no I/O.
 *
 * What is decoded, and why it is enough: the page sizes of a domain come from the page-table
 * format, not from a register (see amd_v1_pgsize_bitmap); the register bits that change how
 * mappings are made are NpCache (the AMD counterpart of VT-d caching mode: the driver flushes
 * after map) and HATS (how many levels, hence how wide an IOVA, the host table may have). The
 * other decoded bits are for display. */
#ifndef IOMMUTRACE_AMD_CAP_H
#define IOMMUTRACE_AMD_CAP_H

#include <stdbool.h>
#include <stdint.h>

struct amd_cap_header {
	bool iotlb; /* IotlbSup, bit 24: remote IOTLBs (ATS) */
	bool np_cache; /* NpCache, bit 26: not-present entries may be cached */
	bool efr_sup; /* EFRSup, bit 27: the EFR is implemented */
};

struct amd_efr {
	bool ppr; /* bit 1: peripheral page requests */
	bool x2apic; /* XTSup, bit 2 */
	bool nx; /* bit 3: no-execute in page tables */
	bool gt; /* GTSup, bit 4: guest translation (the v2 page table) */
	bool ia; /* bit 6: INVALIDATE_IOMMU_ALL */
	bool ga; /* bit 7: guest virtual APIC */
	bool he; /* bit 8: hardware error registers */
	bool pc; /* bit 9: performance counters */
	unsigned hats; /* HATS, bits 11:10: host table levels - 4; 3 is reserved */
	unsigned gats; /* GATS, bits 13:12: guest table levels - 4 */
	unsigned pasid_bits; /* PASmax, bits 36:32, plus 1 (0 when gt is off) */
	bool hd; /* HDSup, bit 52: host dirty bits */
	bool snp; /* SNPSup, bit 63: SEV-SNP */
	unsigned host_levels; /* 4..6 from HATS; 0 when HATS is the reserved value */
	unsigned host_addr_bits; /* widest IOVA of such a table: 48, 57 or 64; 0 unknown */
};

void amd_cap_header_decode(uint32_t cap, struct amd_cap_header *out);
void amd_efr_decode(uint64_t efr, struct amd_efr *out);

/**
 * amd_features_efr() - Find the EFR in the text of the 'features' file.
 * @text: the file's text
 * @kernel_release: "6.1.0-18-amd64", or NULL when unknown; picks the order of two words
 * @efr: the EFR found
 *
 * Its format changed twice: "EFR" before Linux 6.0; "EFR2:EFR" from 6.0 (the EFR2 patch printed
 * features2 first); "EFR:EFR2" from 6.7, when the per-unit words gave way to the global
 * amd_iommu_efr/efr2 ("iommu/amd: Consolidate feature detection and reporting logic"). Without
 * @kernel_release, the nonzero word of a pair of which one is zero is the EFR (EFR2 is zero on
 * most hardware and in QEMU); otherwise the EFR is unknown.
 *
 * Return: 0, or -1 with errno EINVAL (malformed text), ERANGE (a hex word too long) or ENOENT
 * (order undecidable).
 */
int amd_features_efr(const char *text, const char *kernel_release, uint64_t *efr);

/**
 * amd_v1_pgsize_bitmap() - Page sizes of a domain using the AMD v1 (host) page table.
 *
 * The v1 table is the default. A v1 entry with Next Level 7 is a leaf whose size is encoded in its
 * address bits, repeated over the entries it spans, so any power-of-two size is one page. The set
 * is the Linux driver's AMD_IOMMU_PGSIZES (drivers/iommu/amd/amd_iommu_types.h: "512GB Pages are
 * not supported due to a hardware bug"; recent kernels also stop at the 52-bit physical address
 * width). A 6.1 guest was seen mapping 64 KiB as pgsize 16 KiB x 4 (the design notes' AMD-Vi
 * testbed facts).
 *
 * Return: every power of two from 4 KiB to 2^51 except 512 GiB.
 */
uint64_t amd_v1_pgsize_bitmap(void);

#endif
