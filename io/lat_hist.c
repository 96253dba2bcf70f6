/* The latency histogram (see lat_hist.h). Values below LAT_HIST_SUB have a bucket each; above,
 * bucket = 16 * (position of the top bit - 3) + the next four bits. */
#include "io/lat_hist.h"

static unsigned bucket_of(uint64_t v)
{
	unsigned top;

	if (v < LAT_HIST_SUB)
		return (unsigned)v;
	top = 63 - (unsigned)__builtin_clzll(v); /* >= 4 */
	return (top - 3) * LAT_HIST_SUB + (unsigned)((v >> (top - 4)) & (LAT_HIST_SUB - 1));
}

void lat_hist_bucket_range(unsigned index, uint64_t *lo, uint64_t *hi)
{
	unsigned top = index / LAT_HIST_SUB + 3, sub = index % LAT_HIST_SUB;

	if (index < LAT_HIST_SUB) {
		*lo = *hi = index;
		return;
	}
	*lo = (uint64_t)(LAT_HIST_SUB + sub) << (top - 4);
	*hi = *lo + ((uint64_t)1 << (top - 4)) - 1;
}

void lat_hist_add(struct lat_hist *h, uint64_t ns)
{
	h->buckets[bucket_of(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void lat_hist_merge(struct lat_hist *h, const struct lat_hist *from)
{
	for (unsigned i = 0; i < LAT_HIST_BUCKETS; i++)
		h->buckets[i] += from->buckets[i];
	h->count += from->count;
	h->sum_ns += from->sum_ns;
	if (from->max_ns > h->max_ns)
		h->max_ns = from->max_ns;
}

uint64_t lat_hist_percentile(const struct lat_hist *h, double p)
{
	uint64_t need, seen = 0, lo, hi;

	if (!h->count)
		return 0;
	need = (uint64_t)(p * (double)h->count + 0.999999);
	if (need < 1)
		need = 1;
	for (unsigned i = 0; i < LAT_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= need) {
			lat_hist_bucket_range(i, &lo, &hi);
			return hi < h->max_ns ? hi : h->max_ns;
		}
	}
	return h->max_ns;
}
