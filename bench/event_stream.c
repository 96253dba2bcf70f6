/* The synthetic event stream (see event_stream.h). */
#include <string.h>
#include "bench/event_stream.h"

#define NDOMAINS 3
#define QUEUE_DEPTH 128
#define IOVA_WINDOW (1ull << 32)

struct live {
	uint64_t iova, size, pgsize;
};

struct domain {
	uint64_t ptr;
	const char *dev;
	uint32_t tid, cpu;
	const char *comm;
	uint64_t next_iova;
	struct live fifo[QUEUE_DEPTH];
	unsigned head, count;
};

struct stream {
	uint64_t rng, ts_ns, sent;
	event_stream_fn fn;
	void *ctx;
	struct domain d[NDOMAINS];
};

static uint64_t next_random(struct stream *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1Dull;
}

static int send(struct stream *s, struct it_event *e, uint32_t kind, const struct domain *d)
{
	e->h.ts_ns = s->ts_ns += 97;
	e->h.kind = kind;
	e->h.cpu = d->cpu;
	e->h.pid = d->tid;
	e->h.tid = d->tid;
	e->h.flags = IT_F_DOMAIN_FROM_CALL;
	strncpy(e->h.comm, d->comm, sizeof(e->h.comm) - 1); /* e is zeroed */
	s->sent++;
	return s->fn(e, s->ctx);
}

static int map(struct stream *s, struct domain *d, int gpu)
{
	uint64_t r = next_random(s), pgsize = gpu ? 2ull << 20 : 4096, pgcount = 1, paddr;
	struct it_event e = {};
	struct live *l;

	if (gpu && r % 1000 == 0)
		pgsize = 1ull << 30;
	else if (!gpu && r % 512 == 0)
		pgcount = 8;
	d->next_iova = (d->next_iova + pgsize - 1) & ~(pgsize - 1);
	if (d->next_iova + pgsize * pgcount > IOVA_WINDOW)
		d->next_iova = pgsize;
	paddr = gpu ? EVENT_STREAM_GPU_BAR1 +
				(r >> 16) % (EVENT_STREAM_GPU_BAR1_SIZE / pgsize) * pgsize :
		      ((r >> 16) % (1ull << 22)) * 4096 + (1ull << 32);
	l = &d->fifo[(d->head + d->count++) % QUEUE_DEPTH];
	*l = (struct live){ d->next_iova, pgsize * pgcount, pgsize };
	d->next_iova += l->size;
	e.h.probe_id = EVENT_STREAM_PROBE_MAP;
	e.driver = (struct it_driver){ .domain = d->ptr,
				       .iova = l->iova,
				       .paddr = paddr,
				       .pgsize = pgsize,
				       .pgcount = pgcount };
	if (send(s, &e, IT_EV_DRIVER_MAP, d))
		return -1;
	memset(&e, 0, sizeof(e));
	e.map = (struct it_map){ .domain = d->ptr,
				 .iova = l->iova,
				 .paddr = paddr,
				 .size = l->size };
	return send(s, &e, IT_EV_MAP, d);
}

static int unmap(struct stream *s, struct domain *d)
{
	struct live l = d->fifo[d->head];
	struct it_event e = {};

	d->head = (d->head + 1) % QUEUE_DEPTH;
	d->count--;
	e.h.probe_id = EVENT_STREAM_PROBE_UNMAP;
	e.driver = (struct it_driver){ .domain = d->ptr,
				       .iova = l.iova,
				       .pgsize = l.pgsize,
				       .pgcount = l.size / l.pgsize };
	if (send(s, &e, IT_EV_DRIVER_UNMAP, d))
		return -1;
	memset(&e, 0, sizeof(e));
	e.unmap = (struct it_unmap){ .domain = d->ptr,
				     .iova = l.iova,
				     .size = l.size,
				     .unmapped_size = l.size };
	return send(s, &e, IT_EV_UNMAP, d);
}

/* Each domain's first sight and its device's attach */
static int announce(struct stream *s)
{
	for (int i = 0; i < NDOMAINS; i++) {
		struct it_event e = {};

		e.domain = (struct it_domain){ .domain = s->d[i].ptr,
					       .type = 3,
					       .pgsize_bitmap =
						       (1ull << 12) | (1ull << 21) | (1ull << 30) };
		if (send(s, &e, IT_EV_DOMAIN, &s->d[i]))
			return -1;
		memset(&e, 0, sizeof(e));
		e.device = (struct it_device){ .domain = s->d[i].ptr,
					       .group_id = 10 + i,
					       .domain_type = 3 };
		strncpy(e.device.dev_name, s->d[i].dev, sizeof(e.device.dev_name) - 1);
		if (send(s, &e, IT_EV_ATTACH, &s->d[i]))
			return -1;
	}
	return 0;
}

int64_t event_stream_run(uint64_t count, uint64_t seed, event_stream_fn fn, void *ctx)
{
	static const char *const devs[NDOMAINS] = { "0000:01:00.0", "0000:02:00.0",
						    EVENT_STREAM_GPU_BDF };
	static const char *const comms[NDOMAINS] = { "fio", "fio", "python3" };
	struct stream s = { .rng = seed | 1, .ts_ns = 1000000000ull, .fn = fn, .ctx = ctx };

	for (int i = 0; i < NDOMAINS; i++)
		s.d[i] = (struct domain){ .ptr = 0xffff888100001000ull + 0x1000ull * i,
					  .dev = devs[i],
					  .tid = 1001 + i,
					  .cpu = i,
					  .comm = comms[i],
					  .next_iova = 1ull << 20 };
	if (announce(&s))
		return -1;
	while (s.sent < count) {
		uint64_t r = next_random(&s);
		/* 45% each NVMe, 10% the GPU */
		int i = r % 20 < 9 ? 0 : r % 20 < 18 ? 1 : 2;
		struct domain *d = &s.d[i];
		int ret;

		if (d->count == QUEUE_DEPTH || (d->count && (r >> 8) % 2))
			ret = unmap(&s, d);
		else
			ret = map(&s, d, i == 2);
		if (ret)
			return -1;
	}
	return (int64_t)s.sent;
}

const char *event_stream_probe_name(void *ctx, uint32_t probe_id)
{
	return probe_id == EVENT_STREAM_PROBE_MAP   ? "intel_iommu_map_pages" :
	       probe_id == EVENT_STREAM_PROBE_UNMAP ? "intel_iommu_unmap_pages" :
						      NULL;
}
