/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/* The ioctls of /dev/iommutrace-probe (iommutrace_probe.ko): DMA mappings made on behalf of a
 * PCI device, shared by the module and user space. Fixed-width fields and explicit padding only,
 * so that 32- and 64-bit callers see one layout; the module checks the sizes as it builds. */
#ifndef IOMMUTRACE_PROBE_UAPI_H
#define IOMMUTRACE_PROBE_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define IOMMUTRACE_PROBE_DEVICE_NAME "iommutrace-probe"
#define IOMMUTRACE_PROBE_DEVICE "/dev/" IOMMUTRACE_PROBE_DEVICE_NAME

/* unassigned in Documentation/userspace-api/ioctl/ioctl-number.rst (checked against 7.x) */
#define IOMMUTRACE_PROBE_IOCTL_TYPE 0xD7

/* A PCI function as domain:bus:device.function (0000:00:04.0 is { 0, 0, 4, 0 }). */
struct iommutrace_probe_pci_addr {
	__u32 domain;
	__u8 bus;
	__u8 device;   /* 0-31 */
	__u8 function; /* 0-7 */
	__u8 pad;      /* must be 0 */
};

/* One DMA segment of a mapping: what the device puts on the bus to reach the buffer. */
struct iommutrace_probe_dma_segment {
	__u64 dma_addr;
	__u64 length_bytes;
};

/* Room for an exporter's name, NUL included; a longer one is cut. */
#define IOMMUTRACE_PROBE_EXPORTER_NAME_BYTES 32

/* IMPORT_DMABUF: attach the dma-buf as a dynamic importer that accepts peer-to-peer memory
 * (allow_peer2peer) on behalf of `importer`, map the attachment DMA_BIDIRECTIONAL and keep it
 * mapped until RELEASE or close. The first min(segments_count, segments_capacity) DMA segments are
 * written to segments_ptr; segments_count is the number the mapping has, which may be larger: the
 * import stays in place either way and GET_SEGMENTS reads the rest, so nothing is mapped twice. */
struct iommutrace_probe_import_dmabuf {
	struct iommutrace_probe_pci_addr importer; /* in */
	__s32 dmabuf_fd;                           /* in */
	__u32 segments_capacity;                   /* in: entries at segments_ptr */
	__u64 segments_ptr;                        /* in: struct iommutrace_probe_dma_segment[] */
	__u64 dmabuf_size_bytes;                   /* out */
	__u32 segments_count;                      /* out */
	__u32 handle;                              /* out: for GET_SEGMENTS and RELEASE */
	/* out: the exporter's name (struct dma_buf's exp_name), e.g. "udmabuf" */
	char exporter[IOMMUTRACE_PROBE_EXPORTER_NAME_BYTES];
};

/* GET_SEGMENTS: the DMA segments of an import from first_segment on, at most segments_capacity of
 * them; segments_count is the import's total. -ESTALE when the exporter has since moved or revoked
 * the buffer (the module then unmapped it, as a dynamic importer must). */
struct iommutrace_probe_get_segments {
	__u32 handle;            /* in */
	__u32 first_segment;     /* in */
	__u32 segments_capacity; /* in: entries at segments_ptr */
	__u32 segments_count;    /* out */
	__u64 segments_ptr;      /* in: struct iommutrace_probe_dma_segment[] */
};

/* MAP_RESOURCE: dma_map_resource(DMA_BIDIRECTIONAL) of [bar_offset_bytes, +length_bytes) of the
 * peer's memory BAR bar_index for `importer`, as a GPU driver's dma-buf exporter maps its BAR for a
 * peer importer. Offset and length are page-aligned, the length nonzero, the range inside the BAR.
 * Kept mapped until RELEASE or close. */
struct iommutrace_probe_map_resource {
	struct iommutrace_probe_pci_addr importer; /* in: the device that will do the DMA */
	struct iommutrace_probe_pci_addr peer;     /* in: the device whose BAR is mapped */
	__u32 bar_index;                           /* in: 0-5 */
	__u32 pad;                                 /* must be 0 */
	__u64 bar_offset_bytes;                    /* in */
	__u64 length_bytes;                        /* in */
	__u64 phys_addr;                           /* out: CPU physical address of the range */
	__u64 dma_addr;                            /* out */
	__u32 handle;                              /* out: names the mapping to RELEASE */
	__u32 pad2;                                /* must be 0 */
};

/* RELEASE: undo one import or mapping now rather than at close. */
struct iommutrace_probe_release {
	__u32 handle; /* in */
	__u32 pad;    /* must be 0 */
};

#define IOMMUTRACE_PROBE_IMPORT_DMABUF \
	_IOWR(IOMMUTRACE_PROBE_IOCTL_TYPE, 0x01, struct iommutrace_probe_import_dmabuf)
#define IOMMUTRACE_PROBE_GET_SEGMENTS \
	_IOWR(IOMMUTRACE_PROBE_IOCTL_TYPE, 0x02, struct iommutrace_probe_get_segments)
#define IOMMUTRACE_PROBE_MAP_RESOURCE \
	_IOWR(IOMMUTRACE_PROBE_IOCTL_TYPE, 0x03, struct iommutrace_probe_map_resource)
#define IOMMUTRACE_PROBE_RELEASE \
	_IOW(IOMMUTRACE_PROBE_IOCTL_TYPE, 0x04, struct iommutrace_probe_release)

#endif
