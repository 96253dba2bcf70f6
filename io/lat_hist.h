/* Latency histogram: log-linear buckets (16 per power of two, so each is within 6.25% of its
 * values) over nanoseconds, with the exact count, sum and maximum; percentiles from it. */
#ifndef IOMMUTRACE_LAT_HIST_H
#define IOMMUTRACE_LAT_HIST_H

#include <stdint.h>

#define LAT_HIST_SUB 16
#define LAT_HIST_BUCKETS (64 * LAT_HIST_SUB)

struct lat_hist {
	uint64_t count, sum_ns, max_ns;
	uint64_t buckets[LAT_HIST_BUCKETS];
};

void lat_hist_add(struct lat_hist *h, uint64_t ns);
/**
 * lat_hist_merge() - Add every sample of @from into @h.
 */
void lat_hist_merge(struct lat_hist *h, const struct lat_hist *from);
/**
 * lat_hist_percentile() - The smallest value v such that at least @p (0 < p <= 1) of the samples
 * are <= v.
 *
 * Return: v as the upper bound of its bucket (never above the maximum); 0 without samples.
 */
uint64_t lat_hist_percentile(const struct lat_hist *h, double p);
/**
 * lat_hist_bucket_range() - The bucket's value range [@lo, @hi].
 */
void lat_hist_bucket_range(unsigned index, uint64_t *lo, uint64_t *hi);

#endif
