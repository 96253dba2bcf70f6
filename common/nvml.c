/* NVML through dlopen (see nvml.h). The few types and entry points used are declared here from
 * NVML's documented C API (nvml.h of the CUDA toolkit), so no NVIDIA header is needed. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/nvml.h"

#define NVML_LIBRARY "libnvidia-ml.so.1"

typedef int nvml_return; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t, opaque */
struct nvml_bar1_info { /* nvmlBAR1Memory_t */
	unsigned long long bar1_total, bar1_free, bar1_used;
};

struct nvml {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*by_bus_id)(const char *, nvml_device *);
	nvml_return (*bar1_info)(nvml_device, struct nvml_bar1_info *);
};

static const char *error_of(const struct nvml *n, nvml_return rc)
{
	const char *s = n->error_string ? n->error_string(rc) : NULL;

	return s ? s : "unknown NVML error";
}

/* Looks up one symbol; 0, or -1 with why in err. */
static int bind(struct nvml *n, const char *name, void **fn, char *err, size_t errlen)
{
	*fn = dlsym(n->lib, name);
	if (*fn)
		return 0;
	snprintf(err, errlen, "%s has no %s (an NVIDIA driver too old for it)", NVML_LIBRARY, name);
	return -1;
}

struct nvml *nvml_open(char *err, size_t errlen)
{
	struct nvml *n = calloc(1, sizeof(*n));
	nvml_return rc;

	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->lib = dlopen(NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(err, errlen, "%s", dlerror());
		free(n);
		return NULL;
	}
	if (bind(n, "nvmlErrorString", (void **)&n->error_string, err, errlen) ||
	    bind(n, "nvmlInit_v2", (void **)&n->init, err, errlen) ||
	    bind(n, "nvmlShutdown", (void **)&n->shutdown, err, errlen) ||
	    bind(n, "nvmlDeviceGetHandleByPciBusId_v2", (void **)&n->by_bus_id, err, errlen) ||
	    bind(n, "nvmlDeviceGetBAR1MemoryInfo", (void **)&n->bar1_info, err, errlen))
		goto fail;
	rc = n->init();
	if (rc) {
		snprintf(err, errlen, "nvmlInit_v2: %s", error_of(n, rc));
		goto fail;
	}
	return n;
fail:
	dlclose(n->lib);
	free(n);
	return NULL;
}

int nvml_bar1(struct nvml *n, const char *bdf, struct nvml_bar1 *out, char *err, size_t errlen)
{
	struct nvml_bar1_info info;
	nvml_device dev;
	nvml_return rc = n->by_bus_id(bdf, &dev);

	if (rc) {
		snprintf(err, errlen, "nvmlDeviceGetHandleByPciBusId_v2(%s): %s", bdf,
			 error_of(n, rc));
		return -1;
	}
	rc = n->bar1_info(dev, &info);
	if (rc) {
		snprintf(err, errlen, "nvmlDeviceGetBAR1MemoryInfo(%s): %s", bdf, error_of(n, rc));
		return -1;
	}
	out->total = info.bar1_total;
	out->used = info.bar1_used;
	out->free = info.bar1_free;
	return 0;
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n);
}
