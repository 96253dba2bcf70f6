/* Passing a map run's report between processes and storing it (see map_report.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/child_report.h"
#include "common/db.h"
#include "common/leaf.h"
#include "common/log.h"
#include "map_report.h"

#define MAGIC 0x3170526170614d49ull	/* "IMapRp1" */
#define MAX_RUNS (1ull << 24)		/* 64 GiB of scattered 4 KiB pages */

/* The fixed part as written: the struct without its runs pointer. */
#define FIXED_SIZE offsetof(struct map_report, runs)

int map_report_write(int fd, const struct map_report *r)
{
	uint64_t magic = MAGIC;

	if (ftruncate(fd, 0)) {
		log_error("truncating the map report: %s", strerror(errno));
		return -1;
	}
	return child_report_write(fd, &magic, sizeof(magic), 0) ||
	       child_report_write(fd, r, FIXED_SIZE, sizeof(magic)) ||
	       child_report_write(fd, r->runs, r->nruns * sizeof(*r->runs), sizeof(magic) + FIXED_SIZE);
}

int map_report_read(int fd, struct map_report *r)
{
	uint64_t magic = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = child_report_read(fd, &magic, sizeof(magic), 0);
	if (rc)
		return rc;
	if (magic != MAGIC || child_report_read(fd, r, FIXED_SIZE, sizeof(magic)) ||
	    r->nruns > MAX_RUNS || !memchr(r->mapper, 0, sizeof(r->mapper)) ||
	    !memchr(r->device, 0, sizeof(r->device)) || !memchr(r->buffer, 0, sizeof(r->buffer)) ||
	    !memchr(r->buffer_kind, 0, sizeof(r->buffer_kind)) ||
	    !memchr(r->bar_device, 0, sizeof(r->bar_device)))
		goto malformed;
	r->runs = calloc(r->nruns ? r->nruns : 1, sizeof(*r->runs));
	if (!r->runs) {
		log_error("out of memory for the map report's %llu physical runs",
			  (unsigned long long)r->nruns);
		return -1;
	}
	if (child_report_read(fd, r->runs, r->nruns * sizeof(*r->runs), sizeof(magic) + FIXED_SIZE))
		goto malformed;
	return 0;
malformed:
	map_report_free(r);
	log_error("the map command's report is truncated or malformed; its parameters are not stored");
	return -1;
}

void map_report_free(struct map_report *r)
{
	free(r->runs);
	r->runs = NULL;
	r->nruns = 0;
}

/* The page sizes of the domain that the recorded maps at the run's IOVA went to, or 0. */
static uint64_t domain_pgsizes(sqlite3 *db, int64_t sid, uint64_t iova)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"SELECT d.pgsize_bitmap FROM maps m JOIN domains d ON d.session_id = m.session_id"
		" AND d.domain_ptr = m.domain_ptr WHERE m.session_id = ?1 AND m.iova = ?2"
		" AND d.pgsize_bitmap IS NOT NULL LIMIT 1");
	uint64_t bitmap = 0;

	if (!st)
		return 0;
	sqlite3_bind_int64(st, 1, sid);
	sqlite3_bind_int64(st, 2, (int64_t)iova);
	if (sqlite3_step(st) == SQLITE_ROW)
		bitmap = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return bitmap;
}

/* Pages per size (index log2 of the size) the leaf rule writes for every run at its IOVA. */
static int expected_pages(const struct map_report *r, uint64_t bitmap, uint64_t pages[64])
{
	struct leaf_run leaves[128];

	for (uint64_t i = 0; i < r->nruns; i++) {
		const struct backing_run *b = &r->runs[i];
		long n = leaf_pages(r->iova + b->offset, b->paddr, b->size, bitmap, leaves,
				    sizeof(leaves) / sizeof(leaves[0]));

		if (n < 0 || n > (long)(sizeof(leaves) / sizeof(leaves[0]))) {
			log_error("the leaf rule cannot split the physical run at offset %#llx",
				  (unsigned long long)b->offset);
			return -1;
		}
		for (long k = 0; k < n; k++)
			pages[__builtin_ctzll(leaves[k].pgsize)] += leaves[k].pgcount;
	}
	return 0;
}

static int insert_run(sqlite3 *db, int64_t sid, const struct map_report *r, uint64_t bitmap,
		      const char *bitmap_source)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"INSERT INTO map_runs(session_id, mapper, device, buffer, buffer_kind, bar_device,"
		" bar_index, bar_start, bar_offset_bytes, size_bytes, iova, iova_given, vaddr,"
		" repeat_count, hold, maps_done, mapper_pgsize_bitmap, expected_pgsize_bitmap,"
		" expected_pgsize_source, thp_bytes, hugetlb_bytes, phys_runs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		" ?17, ?18, ?19, ?20, ?21, ?22)");
	int bar = r->bar_device[0] != 0, measured = r->nruns > 0, rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	itdb_bind_text(st, 2, r->mapper);
	itdb_bind_text(st, 3, r->device);
	itdb_bind_text(st, 4, r->buffer);
	itdb_bind_text(st, 5, r->buffer_kind);
	itdb_bind_text(st, 6, r->bar_device);
	if (bar) {
		sqlite3_bind_int64(st, 7, r->bar_index);
		sqlite3_bind_int64(st, 8, (int64_t)r->bar_start);
		sqlite3_bind_int64(st, 9, (int64_t)r->bar_offset);
	}
	sqlite3_bind_int64(st, 10, (int64_t)r->size);
	sqlite3_bind_int64(st, 11, (int64_t)r->iova);
	sqlite3_bind_int64(st, 12, r->iova_given);
	if (r->vaddr)
		sqlite3_bind_int64(st, 13, (int64_t)r->vaddr);
	sqlite3_bind_int64(st, 14, (int64_t)r->repeat);
	sqlite3_bind_int64(st, 15, r->hold);
	sqlite3_bind_int64(st, 16, (int64_t)r->maps_done);
	if (r->mapper_pgsize_bitmap)
		sqlite3_bind_int64(st, 17, (int64_t)r->mapper_pgsize_bitmap);
	if (bitmap) {
		sqlite3_bind_int64(st, 18, (int64_t)bitmap);
		itdb_bind_text(st, 19, bitmap_source);
	}
	if (measured && !bar) {
		sqlite3_bind_int64(st, 20, (int64_t)r->thp_bytes);
		sqlite3_bind_int64(st, 21, (int64_t)r->hugetlb_bytes);
	}
	if (measured)
		sqlite3_bind_int64(st, 22, (int64_t)r->nruns);
	rc = itdb_step_done(st, "storing the map run");
	sqlite3_finalize(st);
	return rc;
}

static int insert_backing(sqlite3 *db, int64_t sid, const struct map_report *r)
{
	sqlite3_stmt *st = itdb_prepare(db,
		"INSERT INTO map_backing(session_id, offset_bytes, paddr, size_bytes)"
		" VALUES (?1, ?2, ?3, ?4)");
	int rc = 0;

	if (!st)
		return -1;
	for (uint64_t i = 0; i < r->nruns && !rc; i++) {
		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, (int64_t)r->runs[i].offset);
		sqlite3_bind_int64(st, 3, (int64_t)r->runs[i].paddr);
		sqlite3_bind_int64(st, 4, (int64_t)r->runs[i].size);
		rc = itdb_step_done(st, "storing the buffer's physical runs");
	}
	sqlite3_finalize(st);
	return rc;
}

static int insert_expected(sqlite3 *db, int64_t sid, const uint64_t pages[64])
{
	sqlite3_stmt *st = itdb_prepare(db,
		"INSERT INTO map_expected_pages(session_id, pgsize_bytes, pgcount) VALUES (?1, ?2, ?3)");
	int rc = 0;

	if (!st)
		return -1;
	for (int k = 0; k < 64 && !rc; k++) {
		if (!pages[k])
			continue;
		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, (int64_t)(1ull << k));
		sqlite3_bind_int64(st, 3, (int64_t)pages[k]);
		rc = itdb_step_done(st, "storing the expected pages");
	}
	sqlite3_finalize(st);
	return rc;
}

int map_report_store(sqlite3 *db, int64_t sid, const struct map_report *r)
{
	uint64_t bitmap = r->mapper_pgsize_bitmap, pages[64] = { 0 };
	const char *source = "mapper";
	int expect;

	if (!bitmap) {
		bitmap = domain_pgsizes(db, sid, r->iova);
		source = "domain";
	}
	expect = bitmap && r->nruns;
	if (expect && expected_pages(r, bitmap, pages))
		return -1;
	if (itdb_exec(db, "BEGIN", "storing the map run") ||
	    insert_run(db, sid, r, expect ? bitmap : 0, source) || insert_backing(db, sid, r) ||
	    (expect && insert_expected(db, sid, pages))) {
		itdb_exec(db, "ROLLBACK", "storing the map run");
		return -1;
	}
	return itdb_exec(db, "COMMIT", "storing the map run");
}
