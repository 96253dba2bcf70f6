/* A CUDA device buffer exported as a dma-buf, through the CUDA driver API loaded at run time
 * (dlopen libcuda.so.1: the build never needs CUDA): cuInit, the device by index, its
 * CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, an allocation by cuMemAlloc or (vmm) cuMemCreate +
 * cuMemAddressReserve + cuMemMap + cuMemSetAccess at the allocation granularity, then
 * cuMemGetHandleForAddressRange(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD) with
 * CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, and with flags 0 where the driver refuses that
 * flag. Not thread-safe. Functions log one line on failure (no driver, no such device, dma-buf
 * unsupported, out of device memory: each says what to do) and return -1. */
#ifndef IOMMUTRACE_CUDA_EXPORT_H
#define IOMMUTRACE_CUDA_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

struct cuda_export {
	int fd; /* the dma-buf, or -1 */
	uint64_t size; /* bytes exported (the size asked for), from dptr on */
	uint64_t alloc_size; /* bytes allocated: size rounded up to the granularity (vmm) */
	uint64_t granularity; /* vmm: cuMemGetAllocationGranularity (minimum); else 0 */
	uint64_t dptr; /* CUdeviceptr of the allocation */
	bool vmm; /* cuMemCreate + cuMemMap rather than cuMemAlloc */
	bool pcie_mapping; /* the export took CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE */
	int ordinal; /* CUDA device index */
	char bdf[13]; /* the GPU's PCI address, lower case, "0000:65:00.0" */
	char name[96]; /* cuDeviceGetName */
	void *priv; /* library, context and allocation handles */
};

#define CUDA_EXPORT_INIT \
	{ \
		.fd = -1 \
	}

/**
 * cuda_export_create() - Allocate @size bytes on CUDA device @ordinal and export them as a
 * dma-buf in c->fd.
 * @size: a nonzero multiple of 4 KiB, checked before the driver is loaded
 *
 * On failure everything is undone (fd -1, priv NULL, dptr 0); name, bdf and the sizes may stay
 * filled in, for the caller's messages.
 */
int cuda_export_create(struct cuda_export *c, int ordinal, bool vmm, uint64_t size);
/**
 * cuda_export_destroy() - Close the dma-buf, free the allocation and release the context, in the
 * reverse order of create.
 *
 * Safe after a failed create, and twice. The library stays mapped (RTLD_NODELETE): CUDA cannot be
 * shut down once cuInit ran, and unmapping it under its own threads could crash.
 */
void cuda_export_destroy(struct cuda_export *c);

#endif
