/* The io run report (see io_report.h). Layout: magic, the run, the number of points, the points. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/child_report.h"
#include "common/db.h"
#include "common/db_block_insert.h"
#include "common/log.h"
#include "io/io_report.h"

#define MAGIC 0x3270526f49544d49ull /* "IMTIoRp2" */
#define MAX_POINTS 100000
#define RUN_OFF sizeof(uint64_t)
#define COUNT_OFF (RUN_OFF + sizeof(struct io_report_run))
#define POINTS_OFF (COUNT_OFF + sizeof(uint64_t))

int io_report_write_run(int fd, const struct io_report_run *run)
{
	uint64_t magic = MAGIC, zero = 0;

	return child_report_write(fd, &magic, sizeof(magic), 0) ||
			       child_report_write(fd, run, sizeof(*run), RUN_OFF) ||
			       child_report_write(fd, &zero, sizeof(zero), COUNT_OFF) ?
		       -1 :
		       0;
}

int io_report_write_point(int fd, uint64_t index, const struct io_report_point *p)
{
	uint64_t count = index + 1;

	/* the point first, then the count that makes it visible */
	return child_report_write(fd, p, sizeof(*p), (off_t)(POINTS_OFF + index * sizeof(*p))) ||
			       child_report_write(fd, &count, sizeof(count), COUNT_OFF) ?
		       -1 :
		       0;
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
	if (magic != MAGIC || (rc = child_report_read(fd, run, sizeof(*run), RUN_OFF)) ||
	    (rc = child_report_read(fd, &r->npoints, sizeof(r->npoints), COUNT_OFF)) ||
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
	if ((rc = child_report_read(fd, r->points, r->npoints * sizeof(*r->points), POINTS_OFF)))
		goto malformed;
	for (uint64_t i = 0; i < r->npoints; i++)
		if (r->points[i].device_index >= run->ndevices)
			goto malformed;
	return 0;
malformed:
	io_report_free(r);
	if (rc != -1) /* -1: a read that failed, said */
		log_error("the io command's report is truncated or malformed; its results are not "
			  "stored");
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
	sqlite3_stmt *st =
		itdb_prepare(db,
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

static const struct db_block_table device_table = {
	"INSERT INTO io_devices(session_id, device_index, device, model, serial, block_size, blocks,"
	" iova, numa_node, cpu, iommu, bar_offset_bytes)",
	11, false, "storing an io device"
};

static const struct db_block_table point_table = {
	"INSERT INTO io_points(session_id, point, qd, repeat_index, start_mono_ns, end_mono_ns,"
	" elapsed_ns, completed, failed, verify_errors, bytes, iops, bandwidth_bytes_per_s, mean_ns,"
	" p50_ns, p90_ns, p99_ns, p999_ns, max_ns, device_index)",
	19, false, "storing an io point"
};

static const struct db_block_table bucket_table = {
	"INSERT INTO io_latency_buckets(session_id, point, lo_ns, hi_ns, count)", 4, false,
	"storing a latency bucket"
};

static int insert_devices(sqlite3 *db, int64_t sid, const struct io_report_run *run)
{
	struct db_block *b = db_block_new(db, &device_table, sid);
	bool bar = !strcmp(run->buffer_kind, "bar");
	int rc = 0;

	if (!b)
		return -1;
	for (uint32_t i = 0; i < run->ndevices && !rc; i++) {
		const struct io_report_device *d = &run->devices[i];
		struct db_cell *c = db_block_row(b);

		db_cell_int(&c[0], i);
		db_cell_text(&c[1], d->device);
		db_cell_text(&c[2], d->model);
		db_cell_text(&c[3], d->serial);
		db_cell_nonzero(&c[4], d->block_size);
		db_cell_int_if(&c[5], d->block_size, (int64_t)d->blocks);
		db_cell_nonzero(&c[6], d->iova);
		db_cell_int_if(&c[7], d->numa_node >= 0, d->numa_node);
		db_cell_int_if(&c[8], d->cpu >= 0, d->cpu);
		db_cell_text(&c[9], d->iommu);
		db_cell_int_if(&c[10], bar, (int64_t)d->bar_offset);
		rc = db_block_row_done(b);
	}
	return db_block_end(b, rc);
}

static int insert_point(struct db_block *b, uint64_t index, const struct io_report_point *p,
			bool verify)
{
	const struct io_result *r = &p->result;
	double secs = (double)r->elapsed_ns / 1e9;
	struct db_cell *c = db_block_row(b);
	static const double quantiles[] = { 0.5, 0.9, 0.99, 0.999 };

	db_cell_u64(&c[0], index);
	db_cell_int(&c[1], p->qd);
	db_cell_int(&c[2], p->repeat_index);
	db_cell_u64(&c[3], p->start_mono_ns);
	db_cell_u64(&c[4], p->end_mono_ns);
	db_cell_u64(&c[5], r->elapsed_ns);
	db_cell_u64(&c[6], r->completed);
	db_cell_u64(&c[7], r->failed);
	db_cell_int_if(&c[8], verify, (int64_t)r->verify_errors);
	db_cell_u64(&c[9], r->bytes);
	if (secs > 0) {
		db_cell_real(&c[10], (double)r->completed / secs);
		db_cell_real(&c[11], (double)r->bytes / secs);
	} else {
		db_cell_null(&c[10]);
		db_cell_null(&c[11]);
	}
	if (r->hist.count) {
		db_cell_real(&c[12], (double)r->hist.sum_ns / (double)r->hist.count);
		for (int i = 0; i < 4; i++)
			db_cell_u64(&c[13 + i], lat_hist_percentile(&r->hist, quantiles[i]));
		db_cell_u64(&c[17], r->hist.max_ns);
	} else {
		for (int i = 12; i <= 17; i++)
			db_cell_null(&c[i]);
	}
	db_cell_int(&c[18], p->device_index);
	return db_block_row_done(b);
}

static int insert_buckets(struct db_block *b, uint64_t index, const struct lat_hist *h)
{
	for (unsigned i = 0; i < LAT_HIST_BUCKETS; i++) {
		struct db_cell *c;
		uint64_t lo, hi;

		if (!h->buckets[i])
			continue;
		lat_hist_bucket_range(i, &lo, &hi);
		c = db_block_row(b);
		db_cell_u64(&c[0], index);
		db_cell_u64(&c[1], lo);
		db_cell_u64(&c[2], hi);
		db_cell_u64(&c[3], h->buckets[i]);
		if (db_block_row_done(b))
			return -1;
	}
	return 0;
}

int io_report_store(sqlite3 *db, int64_t sid, const struct io_report *r)
{
	struct db_block *point = NULL, *bucket = NULL;
	int rc = -1;

	if (itdb_exec(db, "BEGIN", "storing the io run"))
		return -1;
	point = db_block_new(db, &point_table, sid);
	bucket = db_block_new(db, &bucket_table, sid);
	if (!point || !bucket || insert_run(db, sid, &r->run) || insert_devices(db, sid, &r->run))
		goto cleanup;
	for (uint64_t i = 0; i < r->npoints; i++)
		if (insert_point(point, i, &r->points[i], r->run.verify) ||
		    insert_buckets(bucket, i, &r->points[i].result.hist))
			goto cleanup;
	if (db_block_flush(point) || db_block_flush(bucket))
		goto cleanup;
	rc = itdb_exec(db, "COMMIT", "storing the io run");
cleanup:
	db_block_free(point);
	db_block_free(bucket);
	if (rc)
		itdb_exec(db, "ROLLBACK", "storing the io run");
	return rc;
}
