/* The io run report (see io_report.h). Layout: magic, the run, the number of points, the points. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/child_report.h"
#include "common/db.h"
#include "common/log.h"
#include "io/io_report.h"

#define MAGIC 0x3270526f49544d49ull	/* "IMTIoRp2" */
#define MAX_POINTS 100000
#define RUN_OFF sizeof(uint64_t)
#define COUNT_OFF (RUN_OFF + sizeof(struct io_report_run))
#define POINTS_OFF (COUNT_OFF + sizeof(uint64_t))

int io_report_write_run(int fd, const struct io_report_run *run)
{
	uint64_t magic = MAGIC, zero = 0;

	return child_report_write(fd, &magic, sizeof(magic), 0) ||
	       child_report_write(fd, run, sizeof(*run), RUN_OFF) ||
	       child_report_write(fd, &zero, sizeof(zero), COUNT_OFF) ? -1 : 0;
}

int io_report_write_point(int fd, uint64_t index, const struct io_report_point *p)
{
	uint64_t count = index + 1;

	/* the point first, then the count that makes it visible */
	return child_report_write(fd, p, sizeof(*p), (off_t)(POINTS_OFF + index * sizeof(*p))) ||
	       child_report_write(fd, &count, sizeof(count), COUNT_OFF) ? -1 : 0;
}

static bool terminated(const char *s, size_t len)
{
	return memchr(s, 0, len) != NULL;
}

static bool devices_terminated(const struct io_report_run *run)
{
	for (uint32_t i = 0; i < run->ndevices; i++) {
		const struct io_report_device *d = &run->devices[i];

		if (!terminated(d->device, sizeof(d->device)) ||
		    !terminated(d->iommu, sizeof(d->iommu)) ||
		    !terminated(d->model, sizeof(d->model)) ||
		    !terminated(d->serial, sizeof(d->serial)))
			return false;
	}
	return true;
}

int io_report_read(int fd, struct io_report *r)
{
	struct io_report_run *run = &r->run;
	uint64_t magic = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = child_report_read(fd, &magic, sizeof(magic), 0);
	if (rc)
		return rc;
	if (magic != MAGIC || child_report_read(fd, run, sizeof(*run), RUN_OFF) ||
	    child_report_read(fd, &r->npoints, sizeof(r->npoints), COUNT_OFF) ||
	    r->npoints > MAX_POINTS || !terminated(run->engine, sizeof(run->engine)) ||
	    !run->ndevices || run->ndevices > IO_MAX_DEVICES || !devices_terminated(run) ||
	    !terminated(run->mapper, sizeof(run->mapper)) ||
	    !terminated(run->workload, sizeof(run->workload)) ||
	    !terminated(run->buffer, sizeof(run->buffer)) ||
	    !terminated(run->buffer_kind, sizeof(run->buffer_kind)))
		goto malformed;
	r->points = calloc(r->npoints ? r->npoints : 1, sizeof(*r->points));
	if (!r->points) {
		log_error("out of memory for %llu io points", (unsigned long long)r->npoints);
		return -1;
	}
	if (child_report_read(fd, r->points, r->npoints * sizeof(*r->points), POINTS_OFF))
		goto malformed;
	for (uint64_t i = 0; i < r->npoints; i++)
		if (r->points[i].device_index >= run->ndevices)
			goto malformed;
	return 0;
malformed:
	io_report_free(r);
	log_error("the io command's report is truncated or malformed; its results are not stored");
	return -1;
}

void io_report_free(struct io_report *r)
{
	free(r->points);
	r->points = NULL;
	r->npoints = 0;
}

static int insert_run(sqlite3 *db, int64_t sid, const struct io_report_run *run)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"INSERT INTO io_runs(session_id, engine, device, model, serial, nsid, block_size,"
		" blocks, workload, bs_bytes, duration_ns, repeat_count, mapper, buffer, buffer_kind,"
		" size_bytes, bar_offset_bytes, window_bytes, iova, verify, device_count) VALUES (?1,"
		" ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		" ?20, ?21)");
	const struct io_report_device *first = &run->devices[0];
	char devices[IO_MAX_DEVICES * sizeof(first->device)] = "";
	int rc;

	if (!st)
		return -1;
	for (uint32_t i = 0; i < run->ndevices; i++) {
		if (i)
			strcat(devices, ",");
		strcat(devices, run->devices[i].device);
	}
	sqlite3_bind_int64(st, 1, sid);
	itdb_bind_text(st, 2, run->engine);
	itdb_bind_text(st, 3, devices);
	itdb_bind_text(st, 4, first->model);
	itdb_bind_text(st, 5, first->serial);
	sqlite3_bind_int64(st, 6, run->nsid);
	if (first->block_size) {
		sqlite3_bind_int64(st, 7, first->block_size);
		sqlite3_bind_int64(st, 8, (int64_t)first->blocks);
	}
	itdb_bind_text(st, 9, run->workload);
	sqlite3_bind_int64(st, 10, run->bs);
	sqlite3_bind_int64(st, 11, (int64_t)run->duration_ns);
	sqlite3_bind_int64(st, 12, (int64_t)run->repeat);
	itdb_bind_text(st, 13, run->mapper);
	itdb_bind_text(st, 14, run->buffer);
	itdb_bind_text(st, 15, run->buffer_kind);
	sqlite3_bind_int64(st, 16, (int64_t)run->size);
	if (!strcmp(run->buffer_kind, "bar"))
		sqlite3_bind_int64(st, 17, (int64_t)run->bar_offset);
	sqlite3_bind_int64(st, 18, (int64_t)run->window);
	if (run->iova)
		sqlite3_bind_int64(st, 19, (int64_t)run->iova);
	sqlite3_bind_int64(st, 20, run->verify);
	sqlite3_bind_int64(st, 21, run->ndevices);
	rc = itdb_step_done(st, "storing the io run");
	sqlite3_finalize(st);
	return rc;
}

static int insert_devices(sqlite3 *db, int64_t sid, const struct io_report_run *run)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"INSERT INTO io_devices(session_id, device_index, device, model, serial, block_size,"
		" blocks, iova, numa_node, cpu, iommu, bar_offset_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
		" ?7, ?8, ?9, ?10, ?11, ?12)");
	int rc = 0;

	if (!st)
		return -1;
	for (uint32_t i = 0; i < run->ndevices && !rc; i++) {
		const struct io_report_device *d = &run->devices[i];

		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, i);
		itdb_bind_text(st, 3, d->device);
		itdb_bind_text(st, 4, d->model);
		itdb_bind_text(st, 5, d->serial);
		if (d->block_size) {
			sqlite3_bind_int64(st, 6, d->block_size);
			sqlite3_bind_int64(st, 7, (int64_t)d->blocks);
		}
		if (d->iova)
			sqlite3_bind_int64(st, 8, (int64_t)d->iova);
		if (d->numa_node >= 0)
			sqlite3_bind_int64(st, 9, d->numa_node);
		if (d->cpu >= 0)
			sqlite3_bind_int64(st, 10, d->cpu);
		itdb_bind_text(st, 11, d->iommu);
		if (!strcmp(run->buffer_kind, "bar"))
			sqlite3_bind_int64(st, 12, (int64_t)d->bar_offset);
		rc = itdb_step_done(st, "storing an io device");
	}
	sqlite3_finalize(st);
	return rc;
}

static int insert_point(sqlite3_stmt *st, int64_t sid, uint64_t index,
			const struct io_report_point *p, bool verify)
{
	const struct io_result *r = &p->result;
	double secs = (double)r->elapsed_ns / 1e9;

	sqlite3_bind_int64(st, 1, sid);
	sqlite3_bind_int64(st, 2, (int64_t)index);
	sqlite3_bind_int64(st, 3, p->qd);
	sqlite3_bind_int64(st, 4, p->repeat_index);
	sqlite3_bind_int64(st, 5, (int64_t)p->start_mono_ns);
	sqlite3_bind_int64(st, 6, (int64_t)p->end_mono_ns);
	sqlite3_bind_int64(st, 7, (int64_t)r->elapsed_ns);
	sqlite3_bind_int64(st, 8, (int64_t)r->completed);
	sqlite3_bind_int64(st, 9, (int64_t)r->failed);
	if (verify)
		sqlite3_bind_int64(st, 10, (int64_t)r->verify_errors);
	else
		sqlite3_bind_null(st, 10);
	sqlite3_bind_int64(st, 11, (int64_t)r->bytes);
	sqlite3_bind_int64(st, 20, p->device_index);
	if (secs > 0) {
		sqlite3_bind_double(st, 12, (double)r->completed / secs);
		sqlite3_bind_double(st, 13, (double)r->bytes / secs);
	} else {
		sqlite3_bind_null(st, 12);
		sqlite3_bind_null(st, 13);
	}
	if (r->hist.count) {
		sqlite3_bind_double(st, 14, (double)r->hist.sum_ns / (double)r->hist.count);
		sqlite3_bind_int64(st, 15, (int64_t)lat_hist_percentile(&r->hist, 0.5));
		sqlite3_bind_int64(st, 16, (int64_t)lat_hist_percentile(&r->hist, 0.9));
		sqlite3_bind_int64(st, 17, (int64_t)lat_hist_percentile(&r->hist, 0.99));
		sqlite3_bind_int64(st, 18, (int64_t)lat_hist_percentile(&r->hist, 0.999));
		sqlite3_bind_int64(st, 19, (int64_t)r->hist.max_ns);
	} else {
		for (int i = 14; i <= 19; i++)
			sqlite3_bind_null(st, i);
	}
	return itdb_step_done(st, "storing an io point");
}

static int insert_buckets(sqlite3_stmt *st, int64_t sid, uint64_t index, const struct lat_hist *h)
{
	for (unsigned i = 0; i < LAT_HIST_BUCKETS; i++) {
		uint64_t lo, hi;

		if (!h->buckets[i])
			continue;
		lat_hist_bucket_range(i, &lo, &hi);
		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, (int64_t)index);
		sqlite3_bind_int64(st, 3, (int64_t)lo);
		sqlite3_bind_int64(st, 4, (int64_t)hi);
		sqlite3_bind_int64(st, 5, (int64_t)h->buckets[i]);
		if (itdb_step_done(st, "storing a latency bucket"))
			return -1;
	}
	return 0;
}

int io_report_store(sqlite3 *db, int64_t sid, const struct io_report *r)
{
	sqlite3_stmt *point = NULL, *bucket = NULL;
	int rc = -1;

	if (itdb_exec(db, "BEGIN", "storing the io run"))
		return -1;
	point = itdb_prepare(db,
		"INSERT INTO io_points(session_id, point, qd, repeat_index, start_mono_ns,"
		" end_mono_ns, elapsed_ns, completed, failed, verify_errors, bytes, iops,"
		" bandwidth_bytes_per_s, mean_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns,"
		" device_index) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" ?15, ?16, ?17, ?18, ?19, ?20)");
	bucket = itdb_prepare(db,
		"INSERT INTO io_latency_buckets(session_id, point, lo_ns, hi_ns, count)"
		" VALUES (?1, ?2, ?3, ?4, ?5)");
	if (!point || !bucket || insert_run(db, sid, &r->run) || insert_devices(db, sid, &r->run))
		goto cleanup;
	for (uint64_t i = 0; i < r->npoints; i++)
		if (insert_point(point, sid, i, &r->points[i], r->run.verify) ||
		    insert_buckets(bucket, sid, i, &r->points[i].result.hist))
			goto cleanup;
	rc = itdb_exec(db, "COMMIT", "storing the io run");
cleanup:
	sqlite3_finalize(point);
	sqlite3_finalize(bucket);
	if (rc)
		itdb_exec(db, "ROLLBACK", "storing the io run");
	return rc;
}
