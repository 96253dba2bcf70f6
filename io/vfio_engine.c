/* The vfio engine: the NVMe bound to vfio-pci, its BAR0 mapped, bus mastering on, the DMA area
 * and the data buffer mapped through the mapper, and the user-space driver of nvme_io.h reading
 * at IOVAs. VFIO's request interrupt says when the kernel wants the device back. Several engines
 * of one run share one BAR window: the first binds the BAR's device and maps the window; type1
 * maps any part of that mmap into the others' containers too (it follows the PFNs of a VM_PFNMAP
 * mapping, whoever's device it is). */
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/log.h"
#include "probes/device_setup.h"
#include "probes/dma_area.h"
#include "probes/vfio_region.h"
#include "io/engine.h"
#include "io/nvme_io.h"

/* Registers and the doorbells of the admin and the one I/O queue pair; the MSI-X table, which
 * VFIO may keep out of the mmap, comes after them. */
#define BAR0_MAP_BYTES 0x2000
#define DMA_AREA_IOVA (256ull << 20)

struct vfio_engine {
	struct device_setup setup;
	struct buffer peer_part; /* a part of another engine's bar window, when borrowed */
	struct buffer mapped; /* the part of setup.buffer this device reads into */
	struct dma_area dma;
	struct nvme_io io;
	bool buffer_mapped;
	uint64_t buffer_iova;
	int bar0_fd;
	void *bar0;
};

static uint64_t data_iova(void *ctx, uint64_t offset)
{
	return ((struct vfio_engine *)ctx)->buffer_iova + offset;
}

static int map_bar0(struct vfio_engine *v, const char *bdf)
{
	uint64_t region_size;

	v->bar0_fd = mapper_device_fd(&v->setup.mapper, bdf);
	if (v->bar0_fd < 0 || vfio_pci_enable_bus_master(v->bar0_fd))
		return -1;
	v->bar0 = vfio_region_mmap(v->bar0_fd, VFIO_PCI_BAR0_REGION_INDEX, 0, BAR0_MAP_BYTES,
				   &region_size);
	v->io.request_fd = vfio_request_eventfd(v->bar0_fd);
	return v->bar0 ? 0 : -1;
}

static int vfio_open(struct io_engine *e, const struct io_target *t)
{
	struct vfio_engine *v = calloc(1, sizeof(*v));
	struct device_setup_opts so = { .bdf = t->bdf,
					.mapper = t->mapper,
					.buffer = t->buffer,
					.size = t->bar_window_bytes ? t->bar_window_bytes :
								      t->buffer_size,
					.offset = t->buffer_offset,
					.force = t->force,
					.stop = t->stop,
					.sysfs_root = t->sysfs_root };
	uint64_t dma_bytes;

	if (!v) {
		log_error("out of memory");
		return -1;
	}
	v->setup = (struct device_setup)DEVICE_SETUP_INIT;
	v->dma = (struct dma_area)DMA_AREA_INIT;
	v->bar0_fd = -1;
	v->io.request_fd = -1;
	v->io.stop = t->stop;
	snprintf(v->io.bdf, sizeof(v->io.bdf), "%s", t->bdf);
	snprintf(v->io.driver, sizeof(v->io.driver), "vfio-pci");
	v->io.sysfs_root = t->sysfs_root;
	v->io.data_dma = data_iova;
	v->io.data_ctx = v;
	e->priv = v;
	if (t->peer_window) {
		buffer_view(t->peer_window, t->peer_offset, t->buffer_size, &v->peer_part);
		so.borrow = &v->peer_part;
	}
	dma_bytes = nvme_io_dma_bytes(t->max_qd, t->max_bs);
	if (t->iova < DMA_AREA_IOVA + dma_bytes && DMA_AREA_IOVA < t->iova + t->buffer_size) {
		log_error("--iova %#llx puts the buffer over the driver's own DMA area (IOVA %#llx, "
			  "%llu MiB): give an IOVA above %#llx",
			  (unsigned long long)t->iova, (unsigned long long)DMA_AREA_IOVA,
			  (unsigned long long)(dma_bytes >> 20),
			  (unsigned long long)(DMA_AREA_IOVA + dma_bytes));
		return -1;
	}
	if (device_setup_open(&v->setup, &so) || map_bar0(v, t->bdf) ||
	    dma_area_create(&v->dma, &v->setup.mapper, dma_bytes, DMA_AREA_IOVA) ||
	    nvme_io_open(&v->io, v->bar0, &v->dma, t->nsid, t->max_qd, t->max_bs))
		return -1;
	buffer_view(&v->setup.buffer, 0, t->buffer_size, &v->mapped);
	if (mapper_map(&v->setup.mapper, &v->mapped, t->iova))
		return -1;
	v->buffer_mapped = true;
	v->buffer_iova = t->iova;
	nvme_io_describe(&v->io, e);
	e->buffer = v->mapped.vaddr;
	e->buffer_size = v->mapped.size;
	if (t->bar_window_bytes)
		e->window = &v->setup.buffer;
	return 0;
}

static int vfio_run(struct io_engine *e, const struct io_point *p, struct io_result *r)
{
	struct vfio_engine *v = e->priv;
	int rc = nvme_io_run(&v->io, p, e->buffer, r);

	if (rc == NVME_IO_DEVICE_REQUESTED)
		v->setup.removal_requested = true;
	return rc ? -1 : 0;
}

static int vfio_close(struct io_engine *e)
{
	struct vfio_engine *v = e->priv;
	int ret;

	if (!v)
		return 0;
	/* no DMA may follow once the memory is unmapped */
	nvme_io_close(&v->io);
	if (v->buffer_mapped)
		mapper_unmap(&v->setup.mapper, v->buffer_iova, v->mapped.size);
	dma_area_destroy(&v->dma);
	if (v->bar0)
		munmap(v->bar0, BAR0_MAP_BYTES);
	if (v->io.request_fd >= 0)
		close(v->io.request_fd);
	if (v->bar0_fd >= 0)
		close(v->bar0_fd);
	ret = device_setup_close(&v->setup);
	free(v);
	e->priv = NULL;
	return ret;
}

const struct io_engine_ops io_engine_vfio = {
	.name = "vfio",
	.open = vfio_open,
	.run = vfio_run,
	.close = vfio_close,
};
