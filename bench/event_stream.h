/* A synthetic, deterministic (seeded) IOMMU event stream like an NVMe-heavy machine's: 4 KiB
 * map/unmap churn in two NVMe domains at a queue depth of 128 (a few 32 KiB maps), and a GPU
 * domain mapping its BAR in 2 MiB pieces (a few 1 GiB). Each map or unmap is the driver's
 * map_pages/unmap_pages record followed by the iommu:map/unmap event, as BPF capture delivers
 * them; the domains and their devices' attaches come first. */
#ifndef IOMMUTRACE_BENCH_EVENT_STREAM_H
#define IOMMUTRACE_BENCH_EVENT_STREAM_H

#include <stdint.h>
#include "bpf/iommutrace.h"

#define EVENT_STREAM_GPU_BDF "0000:41:00.0"
#define EVENT_STREAM_GPU_BAR1 0x3800000000ull /* the GPU's BAR1, 64 GiB */
#define EVENT_STREAM_GPU_BAR1_SIZE (64ull << 30)
#define EVENT_STREAM_PROBE_MAP 1 /* probe ids of the driver records */
#define EVENT_STREAM_PROBE_UNMAP 2

typedef int (*event_stream_fn)(const struct it_event *e, void *ctx);

/* Sends count events (at least; a map or unmap is never cut in two) to fn, which returns 0 to go
 * on. Returns the number sent, or -1 when fn failed. */
int64_t event_stream_run(uint64_t count, uint64_t seed, event_stream_fn fn, void *ctx);
/* The driver function a probe id names in the stream */
const char *event_stream_probe_name(void *ctx, uint32_t probe_id);

#endif
