/* io's lines, table and JSON (see io_output.h). */
#include "common/human_size.h"
#include "common/json_writer.h"
#include "cli/io_output.h"

static double iops_of(const struct io_result *r)
{
	return r->elapsed_ns ? (double)r->completed * 1e9 / (double)r->elapsed_ns : 0;
}

static double mib_s_of(const struct io_result *r)
{
	return r->elapsed_ns ? (double)r->bytes * 1e9 / (double)r->elapsed_ns / 1048576.0 : 0;
}

static double mean_us_of(const struct io_result *r)
{
	return r->hist.count ? (double)r->hist.sum_ns / (double)r->hist.count / 1000.0 : 0;
}

static bool verifies(const struct io_output *o)
{
	return o->run->verify;
}

void io_output_point(FILE *f, const struct io_output *o, const struct io_report_point *p)
{
	const struct lat_hist *h = &p->result.hist;
	char bs[HUMAN_SIZE_LEN];

	fprintf(f,
		"%s %s %s bs=%s qd=%u rep %u/%llu: %.0f IOPS, %.1f MiB/s, mean %.1f us, "
		"p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f us; %llu completed, %llu failed",
		o->run->engine, o->run->devices[p->device_index].device, o->run->workload,
		human_size(o->run->bs, bs), p->qd, p->repeat_index + 1,
		(unsigned long long)o->run->repeat, iops_of(&p->result), mib_s_of(&p->result),
		mean_us_of(&p->result), lat_hist_percentile(h, 0.5) / 1e3,
		lat_hist_percentile(h, 0.9) / 1e3, lat_hist_percentile(h, 0.99) / 1e3,
		lat_hist_percentile(h, 0.999) / 1e3, h->max_ns / 1e3,
		(unsigned long long)p->result.completed, (unsigned long long)p->result.failed);
	if (verifies(o))
		fprintf(f, ", %llu wrong", (unsigned long long)p->result.verify_errors);
	fputc('\n', f);
	fflush(f);
}

/* Sums over rows; mean latency weighted by completions. */
struct sums {
	double iops, mib, lat_ns;
	uint64_t completed, failed, wrong;
};

static struct sums sum_rows(const struct io_report_point *rows, size_t n)
{
	struct sums s = { 0 };

	for (size_t i = 0; i < n; i++) {
		s.iops += iops_of(&rows[i].result);
		s.mib += mib_s_of(&rows[i].result);
		s.lat_ns += (double)rows[i].result.hist.sum_ns;
		s.completed += rows[i].result.completed;
		s.failed += rows[i].result.failed;
		s.wrong += rows[i].result.verify_errors;
	}
	return s;
}

void io_output_total(FILE *f, const struct io_output *o, const struct io_report_point *rows,
		     size_t n)
{
	struct sums s = sum_rows(rows, n);
	char bs[HUMAN_SIZE_LEN];

	fprintf(f,
		"total %zu devices %s bs=%s qd=%u rep %u/%llu: %.0f IOPS, %.1f MiB/s, mean "
		"%.1f us; %llu completed, %llu failed",
		n, o->run->workload, human_size(o->run->bs, bs), rows[0].qd,
		rows[0].repeat_index + 1, (unsigned long long)o->run->repeat, s.iops, s.mib,
		s.completed ? s.lat_ns / (double)s.completed / 1e3 : 0,
		(unsigned long long)s.completed, (unsigned long long)s.failed);
	if (verifies(o))
		fprintf(f, ", %llu wrong", (unsigned long long)s.wrong);
	fputc('\n', f);
	fflush(f);
}

/* One table line: the means over the repeats of the rows of queue depth qd (and device dev, or
 * all devices with dev < 0, summed per repeat). */
static void table_line(FILE *f, const struct io_output *o, const struct io_report_point *rows,
		       size_t n, uint32_t q, int dev)
{
	double iops = 0, mib = 0, lat_ns = 0, p99 = 0;
	uint64_t completed = 0, failed = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct io_result *r = &rows[i].result;

		/* the qd list may repeat a depth: points run in list order */
		if (rows[i].qd != o->qds[q] || i / (o->run->ndevices * o->run->repeat) != q ||
		    (dev >= 0 && rows[i].device_index != (uint32_t)dev))
			continue;
		iops += iops_of(r);
		mib += mib_s_of(r);
		lat_ns += (double)r->hist.sum_ns;
		completed += r->completed;
		p99 += lat_hist_percentile(&r->hist, 0.99) / 1e3;
		failed += r->failed;
		k++;
	}
	if (!k)
		return;
	/* per device: k repeats; all devices: k rows over o->run->repeat repeats */
	k = dev >= 0 ? k : o->run->repeat;
	fprintf(f, "%-5u %-12s %12.0f %10.1f %10.1f ", o->qds[q],
		dev >= 0 ? o->run->devices[dev].device : "all", iops / (double)k, mib / (double)k,
		completed ? lat_ns / (double)completed / 1e3 : 0);
	if (dev >= 0)
		fprintf(f, "%10.1f", p99 / (double)k);
	else
		fprintf(f, "%10s", "-");
	fprintf(f, " %10llu\n", (unsigned long long)failed);
}

void io_output_table(FILE *f, const struct io_output *o, const struct io_report_point *rows,
		     size_t n)
{
	fprintf(f, "\n%-5s %-12s %12s %10s %10s %10s %10s\n", "qd", "device", "IOPS", "MiB/s",
		"mean_us", "p99_us", "failed");
	for (uint32_t q = 0; q < o->nqds; q++) {
		for (uint32_t d = 0; d < o->run->ndevices; d++)
			table_line(f, o, rows, n, q, (int)d);
		if (o->run->ndevices > 1)
			table_line(f, o, rows, n, q, -1);
	}
}

int io_output_json(FILE *f, const struct io_output *o, const struct io_report_point *rows, size_t n)
{
	const struct io_report_run *run = o->run;
	struct json_writer w;

	json_init(&w, f);
	json_begin_object(&w, NULL);
	json_string(&w, "engine", run->engine);
	json_begin_array(&w, "devices");
	for (uint32_t d = 0; d < run->ndevices; d++) {
		const struct io_report_device *dev = &run->devices[d];

		json_begin_object(&w, NULL);
		json_string(&w, "device", dev->device);
		json_string(&w, "model", dev->model);
		json_string(&w, "serial", dev->serial);
		if (dev->iommu[0])
			json_string(&w, "iommu", dev->iommu);
		else
			json_null(&w, "iommu");
		json_int(&w, "block_size", dev->block_size);
		json_int(&w, "blocks", (int64_t)dev->blocks);
		if (dev->numa_node >= 0)
			json_int(&w, "numa_node", dev->numa_node);
		else
			json_null(&w, "numa_node");
		if (dev->cpu >= 0)
			json_int(&w, "cpu", dev->cpu);
		else
			json_null(&w, "cpu");
		json_end_object(&w);
	}
	json_end_array(&w);
	json_int(&w, "nsid", run->nsid);
	json_string(&w, "workload", run->workload);
	json_int(&w, "bs_bytes", run->bs);
	json_string(&w, "buffer", run->buffer);
	json_int(&w, "size_bytes", (int64_t)run->size);
	json_int(&w, "window_bytes", (int64_t)run->window);
	if (run->iova) /* the engine maps the buffer itself */
		json_hex(&w, "iova", run->iova);
	json_begin_array(&w, "points");
	for (size_t i = 0; i < n; i++) {
		const struct io_result *r = &rows[i].result;

		json_begin_object(&w, NULL);
		json_string(&w, "device", run->devices[rows[i].device_index].device);
		json_int(&w, "qd", rows[i].qd);
		json_int(&w, "repeat", rows[i].repeat_index);
		json_int(&w, "elapsed_ns", (int64_t)r->elapsed_ns);
		json_int(&w, "completed", (int64_t)r->completed);
		json_int(&w, "failed", (int64_t)r->failed);
		json_int(&w, "bytes", (int64_t)r->bytes);
		json_int(&w, "iops", (int64_t)(iops_of(r) + 0.5));
		json_int(&w, "mean_ns",
			 r->hist.count ? (int64_t)(r->hist.sum_ns / r->hist.count) : 0);
		json_int(&w, "p50_ns", (int64_t)lat_hist_percentile(&r->hist, 0.5));
		json_int(&w, "p90_ns", (int64_t)lat_hist_percentile(&r->hist, 0.9));
		json_int(&w, "p99_ns", (int64_t)lat_hist_percentile(&r->hist, 0.99));
		json_int(&w, "p999_ns", (int64_t)lat_hist_percentile(&r->hist, 0.999));
		json_int(&w, "max_ns", (int64_t)r->hist.max_ns);
		if (run->verify)
			json_int(&w, "verify_errors", (int64_t)r->verify_errors);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return json_finish(&w);
}
