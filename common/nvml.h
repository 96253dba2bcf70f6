/* NVIDIA's management library (NVML), loaded at run time (dlopen libnvidia-ml.so.1): the build
 * never needs it, and a machine without NVIDIA's driver says so in one line. Used for what sysfs
 * cannot tell about a GPU: how much of its BAR1 aperture is in use. Not thread-safe. */
#ifndef IOMMUTRACE_NVML_H
#define IOMMUTRACE_NVML_H

#include <stddef.h>
#include <stdint.h>

struct nvml;

struct nvml_bar1 {
	uint64_t total, used, free; /* bytes */
};

/**
 * nvml_open() - Load the library and initialize NVML.
 *
 * Return: a handle, or NULL with why in @err ("libnvidia-ml.so.1: cannot open shared object file:
 * ...", "nvmlInit_v2: Driver Not Loaded").
 */
struct nvml *nvml_open(char *err, size_t errlen);
/**
 * nvml_bar1() - BAR1 use of the GPU at @bdf ("0000:65:00.0").
 *
 * Return: 0, or -1 with why in @err.
 */
int nvml_bar1(struct nvml *n, const char *bdf, struct nvml_bar1 *out, char *err, size_t errlen);
/**
 * nvml_close() - Shut NVML down and unload it; NULL is fine.
 */
void nvml_close(struct nvml *n);

#endif
