/* A CUDA allocation exported as a dma-buf (see cuda_export.h). The few driver-API types, constants
 * and entry points used are declared here from NVIDIA's documented driver API (cuda.h of the CUDA
 * toolkit; values and layouts checked against 13.0's), so no NVIDIA header is needed. */
#include <assert.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/human_size.h"
#include "common/log.h"
#include "common/parse.h"
#include "probes/cuda_export.h"

#define CUDA_LIBRARY "libcuda.so.1"
#define PAGE 4096ull

typedef int cu_result; /* CUresult: 0 is CUDA_SUCCESS */
typedef int cu_device; /* CUdevice */
typedef struct cu_context_st *cu_context; /* CUcontext, opaque */
typedef unsigned long long cu_deviceptr; /* CUdeviceptr */
typedef unsigned long long cu_mem_handle; /* CUmemGenericAllocationHandle */

enum {
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110,
	CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
	CU_MEM_ALLOCATION_TYPE_PINNED = 1,
	CU_MEM_LOCATION_TYPE_DEVICE = 1,
	CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
	CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
	CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1,
	CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 1,
};

struct cu_mem_location { /* CUmemLocation */
	int type; /* CUmemLocationType */
	int id; /* the device ordinal */
};

struct cu_mem_allocation_prop { /* CUmemAllocationProp */
	int type; /* CUmemAllocationType */
	int requested_handle_types; /* CUmemAllocationHandleType: none */
	struct cu_mem_location location;
	void *win32_handle_meta_data;
	struct {
		unsigned char compression_type;
		unsigned char gpu_direct_rdma_capable;
		unsigned short usage;
		unsigned char reserved[4];
	} alloc_flags;
};

struct cu_mem_access_desc { /* CUmemAccessDesc */
	struct cu_mem_location location;
	int flags; /* CUmemAccess_flags */
};

static_assert(sizeof(struct cu_mem_allocation_prop) == 32, "CUmemAllocationProp ABI");
static_assert(sizeof(struct cu_mem_access_desc) == 12, "CUmemAccessDesc ABI");

struct cuda {
	void *lib;
	cu_device dev;
	cu_context ctx; /* the device's primary context, retained */
	cu_mem_handle mem; /* vmm: the physical allocation */
	bool mem_created, mapped; /* vmm: mem exists; mem is mapped at the export's dptr */
	char why[160]; /* the last error, in CUDA's words */
	cu_result (*get_error_name)(cu_result, const char **);
	cu_result (*get_error_string)(cu_result, const char **);
	cu_result (*init)(unsigned int);
	cu_result (*device_get_count)(int *);
	cu_result (*device_get)(cu_device *, int);
	cu_result (*device_get_name)(char *, int, cu_device);
	cu_result (*device_get_pci_bus_id)(char *, int, cu_device);
	cu_result (*device_get_attribute)(int *, int, cu_device);
	cu_result (*primary_ctx_retain)(cu_context *, cu_device);
	cu_result (*primary_ctx_release)(cu_device);
	cu_result (*ctx_set_current)(cu_context);
	cu_result (*mem_alloc)(cu_deviceptr *, size_t);
	cu_result (*mem_free)(cu_deviceptr);
	cu_result (*mem_get_allocation_granularity)(size_t *, const struct cu_mem_allocation_prop *,
						    int);
	cu_result (*mem_create)(cu_mem_handle *, size_t, const struct cu_mem_allocation_prop *,
				unsigned long long);
	cu_result (*mem_release)(cu_mem_handle);
	cu_result (*mem_address_reserve)(cu_deviceptr *, size_t, size_t, cu_deviceptr,
					 unsigned long long);
	cu_result (*mem_address_free)(cu_deviceptr, size_t);
	cu_result (*mem_map)(cu_deviceptr, size_t, size_t, cu_mem_handle, unsigned long long);
	cu_result (*mem_unmap)(cu_deviceptr, size_t);
	cu_result (*mem_set_access)(cu_deviceptr, size_t, const struct cu_mem_access_desc *,
				    size_t);
	cu_result (*mem_get_handle_for_address_range)(void *, cu_deviceptr, size_t, int,
						      unsigned long long);
};

/* The exported names: cuda.h #defines cuMemAlloc and the like to their _v2 ABI. */
static const struct {
	const char *symbol;
	size_t offset;
} entry_points[] = {
#define ENTRY(field, symbol) \
	{ \
		symbol, offsetof(struct cuda, field) \
	}
	ENTRY(get_error_name, "cuGetErrorName"),
	ENTRY(get_error_string, "cuGetErrorString"),
	ENTRY(init, "cuInit"),
	ENTRY(device_get_count, "cuDeviceGetCount"),
	ENTRY(device_get, "cuDeviceGet"),
	ENTRY(device_get_name, "cuDeviceGetName"),
	ENTRY(device_get_pci_bus_id, "cuDeviceGetPCIBusId"),
	ENTRY(device_get_attribute, "cuDeviceGetAttribute"),
	ENTRY(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
	ENTRY(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2"),
	ENTRY(ctx_set_current, "cuCtxSetCurrent"),
	ENTRY(mem_alloc, "cuMemAlloc_v2"),
	ENTRY(mem_free, "cuMemFree_v2"),
	ENTRY(mem_get_allocation_granularity, "cuMemGetAllocationGranularity"),
	ENTRY(mem_create, "cuMemCreate"),
	ENTRY(mem_release, "cuMemRelease"),
	ENTRY(mem_address_reserve, "cuMemAddressReserve"),
	ENTRY(mem_address_free, "cuMemAddressFree"),
	ENTRY(mem_map, "cuMemMap"),
	ENTRY(mem_unmap, "cuMemUnmap"),
	ENTRY(mem_set_access, "cuMemSetAccess"),
	ENTRY(mem_get_handle_for_address_range, "cuMemGetHandleForAddressRange"),
#undef ENTRY
};

/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", kept in cu->why. */
static const char *why(struct cuda *cu, cu_result rc)
{
	const char *name = NULL, *text = NULL;

	if (cu->get_error_name(rc, &name) || !name)
		snprintf(cu->why, sizeof(cu->why), "CUresult %d", rc);
	else if (cu->get_error_string(rc, &text) || !text)
		snprintf(cu->why, sizeof(cu->why), "%s", name);
	else
		snprintf(cu->why, sizeof(cu->why), "%s (%s)", name, text);
	return cu->why;
}

/* Loads the library and binds every entry point, so that a driver too old for one of them
 * fails here, before anything is allocated. */
static int load(struct cuda *cu)
{
	/* RTLD_NODELETE: CUDA cannot be shut down once cuInit ran (its threads and handlers stay),
	 * so dlclose must not unmap it. */
	cu->lib = dlopen(CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!cu->lib) {
		log_error("gpu buffers need the NVIDIA driver's %s, which did not load (%s): "
			  "install the NVIDIA driver",
			  CUDA_LIBRARY, dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++) {
		void *fn = dlsym(cu->lib, entry_points[i].symbol);

		if (!fn) {
			log_error("%s has no %s: the NVIDIA driver is too old for dma-buf export; "
				  "update it",
				  CUDA_LIBRARY, entry_points[i].symbol);
			return -1;
		}
		*(void **)((char *)cu + entry_points[i].offset) = fn;
	}
	return 0;
}

/* "00000000:65:00.0" (CUDA's 8-digit domain, upper-case hex) as "0000:65:00.0". */
static int read_bdf(struct cuda *cu, struct cuda_export *c)
{
	char bus_id[32], shorter[40];
	unsigned int domain;
	cu_result rc;
	int n = 0;

	rc = cu->device_get_pci_bus_id(bus_id, sizeof(bus_id), cu->dev);
	if (rc) {
		log_error("cuDeviceGetPCIBusId of CUDA device %d: %s", c->ordinal, why(cu, rc));
		return -1;
	}
	if (sscanf(bus_id, "%8x:%n", &domain, &n) == 1 && n) {
		snprintf(shorter, sizeof(shorter), "%04x:%s", domain, bus_id + n);
		if (!parse_bdf(shorter, c->bdf))
			return 0;
	}
	log_error("CUDA device %d is at PCI address \"%s\", which iommutrace cannot name (a "
		  "domain above ffff?)",
		  c->ordinal, bus_id);
	return -1;
}

/* cuInit, the device by index, its name and address, and whether it exports dma-bufs. */
static int open_device(struct cuda *cu, struct cuda_export *c)
{
	int count, supported;
	cu_result rc;

	rc = cu->init(0);
	if (rc) {
		log_error("cuInit: %s: gpu buffers need an NVIDIA GPU with NVIDIA's kernel driver "
			  "loaded (nvidia-smi should list it)",
			  why(cu, rc));
		return -1;
	}
	rc = cu->device_get_count(&count);
	if (rc) {
		log_error("cuDeviceGetCount: %s", why(cu, rc));
		return -1;
	}
	if (c->ordinal < 0 || c->ordinal >= count) {
		log_error("CUDA device %d does not exist: this machine has %d (0 to %d)",
			  c->ordinal, count, count - 1);
		return -1;
	}
	rc = cu->device_get(&cu->dev, c->ordinal);
	if (!rc)
		rc = cu->device_get_name(c->name, sizeof(c->name), cu->dev);
	if (rc) {
		log_error("CUDA device %d: %s", c->ordinal, why(cu, rc));
		return -1;
	}
	if (read_bdf(cu, c))
		return -1;
	rc = cu->device_get_attribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, cu->dev);
	if (rc) {
		log_error("cuDeviceGetAttribute(DMA_BUF_SUPPORTED) of CUDA device %d: %s",
			  c->ordinal, why(cu, rc));
		return -1;
	}
	if (supported != 1) {
		/* the kernel's dma-buf calls are GPL-only: the proprietary module cannot export */
		log_error("CUDA device %d (%s, %s) does not export dma-bufs: that needs NVIDIA's "
			  "open kernel module (/proc/driver/nvidia/version then names the \"Open "
			  "Kernel Module\") and a kernel with dma-buf support",
			  c->ordinal, c->name, c->bdf);
		return -1;
	}
	return 0;
}

/* One line for a failed allocation step; out of memory says so plainly. */
static int alloc_failed(struct cuda *cu, const struct cuda_export *c, const char *call,
			cu_result rc)
{
	char size[HUMAN_SIZE_LEN];

	log_error("%s of %s on CUDA device %d (%s): %s%s", call, human_size(c->alloc_size, size),
		  c->ordinal, c->name, why(cu, rc),
		  rc == CUDA_ERROR_OUT_OF_MEMORY ? ": not enough free device memory; ask for less, "
						   "or stop what holds it (nvidia-smi lists it)" :
						   "");
	return -1;
}

/* cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess, at the device's granularity. */
static int alloc_vmm(struct cuda *cu, struct cuda_export *c)
{
	struct cu_mem_allocation_prop prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, c->ordinal },
	};
	struct cu_mem_access_desc rw = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	cu_deviceptr dptr;
	cu_mem_handle mem;
	size_t granularity;
	int rdma = 0;
	cu_result rc;

	/* As NCCL does for the allocations it registers through dma-buf: ask for GPUDirect
	 * RDMA-capable memory where the device can give it. */
	rc = cu->device_get_attribute(&rdma,
				      CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
				      cu->dev);
	if (!rc && rdma == 1)
		prop.alloc_flags.gpu_direct_rdma_capable = 1;
	rc = cu->mem_get_allocation_granularity(&granularity, &prop,
						CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (rc)
		return alloc_failed(cu, c, "cuMemGetAllocationGranularity", rc);
	c->granularity = granularity;
	c->alloc_size = (c->size + granularity - 1) / granularity * granularity;
	rc = cu->mem_create(&mem, c->alloc_size, &prop, 0);
	if (rc)
		return alloc_failed(cu, c, "cuMemCreate", rc);
	cu->mem = mem;
	cu->mem_created = true;
	rc = cu->mem_address_reserve(&dptr, c->alloc_size, granularity, 0, 0);
	if (rc)
		return alloc_failed(cu, c, "cuMemAddressReserve", rc);
	c->dptr = dptr;
	rc = cu->mem_map(c->dptr, c->alloc_size, 0, cu->mem, 0);
	if (rc)
		return alloc_failed(cu, c, "cuMemMap", rc);
	cu->mapped = true;
	rc = cu->mem_set_access(c->dptr, c->alloc_size, &rw, 1);
	if (rc)
		return alloc_failed(cu, c, "cuMemSetAccess", rc);
	return 0;
}

static int alloc_plain(struct cuda *cu, struct cuda_export *c)
{
	cu_deviceptr dptr;
	cu_result rc = cu->mem_alloc(&dptr, c->size);

	if (rc)
		return alloc_failed(cu, c, "cuMemAlloc_v2", rc);
	c->dptr = dptr;
	return 0;
}

/* The PCIe flag asks for BAR1 pages, which only coherent platforms (Grace's C2C) would not give
 * unasked; drivers older than the flag (CUDA 12.8) refuse it, and are asked again without it. */
static int export(struct cuda *cu, struct cuda_export *c)
{
	cu_result rc;
	int fd = -1;

	rc = cu->mem_get_handle_for_address_range(&fd, c->dptr, c->size,
						  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
						  CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	c->pcie_mapping = !rc;
	if (rc == CUDA_ERROR_INVALID_VALUE || rc == CUDA_ERROR_NOT_SUPPORTED) {
		log_debug("CUDA device %d refused CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE "
			  "(%s): exporting without it",
			  c->ordinal, why(cu, rc));
		rc = cu->mem_get_handle_for_address_range(&fd, c->dptr, c->size,
							  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	}
	if (rc) {
		log_error("cuMemGetHandleForAddressRange(DMA_BUF_FD) on CUDA device %d (%s): %s",
			  c->ordinal, c->name, why(cu, rc));
		return -1;
	}
	c->fd = fd;
	return 0;
}

int cuda_export_create(struct cuda_export *c, int ordinal, bool vmm, uint64_t size)
{
	struct cuda *cu;
	cu_result rc;

	*c = (struct cuda_export){ .fd = -1,
				   .size = size,
				   .alloc_size = size,
				   .vmm = vmm,
				   .ordinal = ordinal };
	if (!size || size % PAGE) {
		log_error("a gpu buffer's size must be a nonzero multiple of 4 KiB, not %llu bytes",
			  (unsigned long long)size);
		return -1;
	}
	cu = calloc(1, sizeof(*cu));
	if (!cu) {
		log_error("out of memory");
		return -1;
	}
	c->priv = cu;
	if (load(cu) || open_device(cu, c))
		goto fail;
	/* The primary context is the one the runtime API and other libraries share. */
	rc = cu->primary_ctx_retain(&cu->ctx, cu->dev);
	if (!rc)
		rc = cu->ctx_set_current(cu->ctx);
	if (rc) {
		log_error("a context on CUDA device %d (%s): %s", c->ordinal, c->name, why(cu, rc));
		goto fail;
	}
	if ((vmm ? alloc_vmm(cu, c) : alloc_plain(cu, c)) || export(cu, c))
		goto fail;
	return 0;
fail:
	cuda_export_destroy(c);
	return -1;
}

void cuda_export_destroy(struct cuda_export *c)
{
	struct cuda *cu = c->priv;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (cu) {
		if (cu->mapped)
			cu->mem_unmap(c->dptr, c->alloc_size);
		if (c->dptr && c->vmm)
			cu->mem_address_free(c->dptr, c->alloc_size);
		else if (c->dptr)
			cu->mem_free(c->dptr);
		if (cu->mem_created)
			cu->mem_release(cu->mem);
		if (cu->ctx) {
			/* release does not unset the context: leave none current behind */
			cu->ctx_set_current(NULL);
			cu->primary_ctx_release(cu->dev);
		}
		if (cu->lib)
			dlclose(cu->lib);
		free(cu);
	}
	c->priv = NULL;
	c->dptr = 0;
}
