/* Passing a map run's report between processes and storing it (see map_report.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/child_report.h"
#include "common/db.h"
#include "common/db_block_insert.h"
#include "common/leaf.h"
#include "common/log.h"
#include "probes/map_report.h"

#define MAGIC 0x3270526170614d49ull /* "IMapRp2" */
#define MAX_RUNS (1ull << 24) /* 64 GiB of scattered 4 KiB pages */
#define MAX_SEGS (1ull << 24)

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
			       child_report_write(fd, r->runs, r->nruns * sizeof(*r->runs),
						  sizeof(magic) + FIXED_SIZE) ||
			       child_report_write(fd, r->segs, r->nsegs * sizeof(*r->segs),
						  sizeof(magic) + FIXED_SIZE +
							  r->nruns * sizeof(*r->runs)) ?
		       -1 :
		       0;
}

int map_report_read(int fd, struct map_report *r)
{
	uint64_t magic = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = child_report_read(fd, &magic, sizeof(magic), 0);
	if (rc)
		return rc;
	if (magic != MAGIC || (rc = child_report_read(fd, r, FIXED_SIZE, sizeof(magic))) ||
	    r->nruns > MAX_RUNS || r->nsegs > MAX_SEGS ||
	    !memchr(r->mapper, 0, sizeof(r->mapper)) ||
	    !memchr(r->exporter, 0, sizeof(r->exporter)) ||
	    !memchr(r->exporter_device, 0, sizeof(r->exporter_device)) ||
	    !memchr(r->device, 0, sizeof(r->device)) || !memchr(r->buffer, 0, sizeof(r->buffer)) ||
	    !memchr(r->buffer_kind, 0, sizeof(r->buffer_kind)) ||
	    !memchr(r->bar_device, 0, sizeof(r->bar_device)))
		goto malformed;
	r->runs = calloc(r->nruns ? r->nruns : 1, sizeof(*r->runs));
	r->segs = calloc(r->nsegs ? r->nsegs : 1, sizeof(*r->segs));
	if (!r->runs || !r->segs) {
		map_report_free(r);
		log_error("out of memory for the map report's %llu physical runs and %llu segments",
			  (unsigned long long)r->nruns, (unsigned long long)r->nsegs);
		return -1;
	}
	if ((rc = child_report_read(fd, r->runs, r->nruns * sizeof(*r->runs),
				    sizeof(magic) + FIXED_SIZE)) ||
	    (rc = child_report_read(fd, r->segs, r->nsegs * sizeof(*r->segs),
				    sizeof(magic) + FIXED_SIZE + r->nruns * sizeof(*r->runs))))
		goto malformed;
	return 0;
malformed:
	map_report_free(r);
	if (rc != -1) /* -1: a read that failed, said */
		log_error("the map command's report is truncated or malformed; its parameters are "
			  "not stored");
	return -1;
}

void map_report_free(struct map_report *r)
{
	free(r->runs);
	free(r->segs);
	r->runs = NULL;
	r->segs = NULL;
	r->nruns = r->nsegs = 0;
}

/* The page sizes of the domain that the recorded maps at the run's IOVA went to, or 0. */
static uint64_t domain_pgsizes(sqlite3 *db, int64_t sid, uint64_t iova)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
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

/* The first import's segment holding offset of the buffer, or NULL. */
static const struct map_segment *segment_at(const struct map_report *r, uint64_t offset)
{
	for (uint64_t i = 0; i < r->nsegs && r->segs[i].repetition == 0; i++)
		if (offset >= r->segs[i].offset && offset - r->segs[i].offset < r->segs[i].length)
			return &r->segs[i];
	return NULL;
}

/* Adds to pages (index log2 of the size) what the leaf rule writes for [paddr, + size) at iova. */
static int add_leaves(uint64_t iova, uint64_t paddr, uint64_t size, uint64_t bitmap,
		      uint64_t pages[64])
{
	struct leaf_run leaves[128];
	long n = leaf_pages(iova, paddr, size, bitmap, leaves, sizeof(leaves) / sizeof(leaves[0]));

	if (n < 0 || n > (long)(sizeof(leaves) / sizeof(leaves[0]))) {
		log_error("the leaf rule cannot split the physical run at %#llx",
			  (unsigned long long)paddr);
		return -1;
	}
	for (long k = 0; k < n; k++)
		pages[__builtin_ctzll(leaves[k].pgsize)] += leaves[k].pgcount;
	return 0;
}

/* Pages per size the leaf rule writes for every run at its IOVA: the run's offset from the
 * mapping's IOVA, or for an import its place in the first import's DMA segments (a run crossing
 * from one segment to the next is split there). */
static int expected_pages(const struct map_report *r, uint64_t bitmap, uint64_t pages[64])
{
	for (uint64_t i = 0; i < r->nruns; i++) {
		uint64_t off = r->runs[i].offset, paddr = r->runs[i].paddr, left = r->runs[i].size;

		while (left) {
			const struct map_segment *seg = r->nsegs ? segment_at(r, off) : NULL;
			uint64_t iova = seg ? seg->dma_addr + (off - seg->offset) : r->iova + off;
			uint64_t n = seg ? seg->offset + seg->length - off : left;

			if (r->nsegs && !seg) {
				log_error("offset %#llx of the buffer is in no DMA segment the import "
					  "gave",
					  (unsigned long long)off);
				return -1;
			}
			n = n < left ? n : left;
			if (add_leaves(iova, paddr, n, bitmap, pages))
				return -1;
			off += n;
			paddr += n;
			left -= n;
		}
	}
	return 0;
}

/* An import whose physical runs user space could not see (a vgem object, GPU memory): the maps
 * recorded in the first import's DMA segments, each a physically contiguous run at its offset
 * into the buffer. Other domains have IOVAs of their own: where the session knows the importer's
 * domains, only maps into those count. A repeated import may reuse an IOVA: the first map there
 * is the first import's. */
static int runs_from_recorded(sqlite3 *db, int64_t sid, struct map_report *r)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "SELECT iova, paddr, size_bytes FROM maps WHERE map_id IN (SELECT MIN(map_id)"
			     " FROM maps WHERE session_id = ?1 AND iova >= ?2 AND iova < ?2 + ?3"
			     " AND (domain_ptr IN (SELECT domain_ptr FROM domain_devices_view"
			     "  WHERE session_id = ?1 AND device = ?4) OR NOT EXISTS (SELECT 1"
			     "  FROM domain_devices_view WHERE session_id = ?1 AND device = ?4))"
			     " GROUP BY iova) ORDER BY iova");
	int rc = 0;

	if (!st)
		return -1;
	for (uint64_t i = 0; i < r->nsegs && r->segs[i].repetition == 0 && !rc; i++) {
		const struct map_segment *seg = &r->segs[i];

		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, (int64_t)seg->dma_addr);
		sqlite3_bind_int64(st, 3, (int64_t)seg->length);
		itdb_bind_text(st, 4, r->device);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			uint64_t iova = (uint64_t)sqlite3_column_int64(st, 0);
			uint64_t size = (uint64_t)sqlite3_column_int64(st, 2);
			struct backing_run *more = realloc(r->runs, (r->nruns + 1) * sizeof(*more));

			if (!more) {
				log_error("out of memory");
				rc = SQLITE_NOMEM;
				break;
			}
			if (size > seg->dma_addr + seg->length - iova)
				size = seg->dma_addr + seg->length - iova;
			r->runs = more;
			r->runs[r->nruns++] = (struct backing_run){
				.offset = seg->offset + (iova - seg->dma_addr),
				.paddr = (uint64_t)sqlite3_column_int64(st, 1),
				.size = size
			};
		}
		rc = rc == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc)
		log_error("reading the maps recorded for the import: %s", sqlite3_errmsg(db));
	return rc;
}

static int insert_run(sqlite3 *db, int64_t sid, const struct map_report *r, uint64_t bitmap,
		      const char *bitmap_source, const char *phys_source)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "INSERT INTO map_runs(session_id, mapper, device, buffer, buffer_kind, bar_device,"
			     " bar_index, bar_start, bar_offset_bytes, size_bytes, iova, iova_given, vaddr,"
			     " repeat_count, hold, maps_done, mapper_pgsize_bitmap, expected_pgsize_bitmap,"
			     " expected_pgsize_source, thp_bytes, hugetlb_bytes, phys_runs, phys_source, exporter,"
			     " exporter_device, dma_segments)"
			     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
			     " ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)");
	uint64_t first_segs = 0;
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
	if (measured && !strcmp(phys_source, "pagemap")) {
		sqlite3_bind_int64(st, 20, (int64_t)r->thp_bytes);
		sqlite3_bind_int64(st, 21, (int64_t)r->hugetlb_bytes);
	}
	if (measured) {
		sqlite3_bind_int64(st, 22, (int64_t)r->nruns);
		itdb_bind_text(st, 23, phys_source);
	}
	if (r->exporter[0] || r->nsegs) {
		while (first_segs < r->nsegs && r->segs[first_segs].repetition == 0)
			first_segs++;
		itdb_bind_text(st, 24, r->exporter);
		itdb_bind_text(st, 25, r->exporter_device);
		sqlite3_bind_int64(st, 26, (int64_t)first_segs);
	}
	rc = itdb_step_done(st, "storing the map run");
	sqlite3_finalize(st);
	return rc;
}

static const struct db_block_table backing_table = {
	"INSERT INTO map_backing(session_id, offset_bytes, paddr, size_bytes)", 3, false,
	"storing the buffer's physical runs"
};

static const struct db_block_table segment_table = {
	"INSERT INTO map_dma_segments(session_id, repetition, segment_index, offset_bytes, dma_addr,"
	" length_bytes)",
	5, false, "storing the import's DMA segments"
};

static const struct db_block_table expected_table = {
	"INSERT INTO map_expected_pages(session_id, pgsize_bytes, pgcount)", 2, false,
	"storing the expected pages"
};

static int insert_backing(sqlite3 *db, int64_t sid, const struct map_report *r)
{
	struct db_block *b = db_block_new(db, &backing_table, sid);
	int rc = 0;

	if (!b)
		return -1;
	for (uint64_t i = 0; i < r->nruns && !rc; i++) {
		struct db_cell *c = db_block_row(b);

		db_cell_u64(&c[0], r->runs[i].offset);
		db_cell_u64(&c[1], r->runs[i].paddr);
		db_cell_u64(&c[2], r->runs[i].size);
		rc = db_block_row_done(b);
	}
	return db_block_end(b, rc);
}

static int insert_segments(sqlite3 *db, int64_t sid, const struct map_report *r)
{
	struct db_block *b = db_block_new(db, &segment_table, sid);
	int rc = 0;

	if (!b)
		return -1;
	for (uint64_t i = 0, index = 0; i < r->nsegs && !rc; i++) {
		struct db_cell *c = db_block_row(b);

		index = i && r->segs[i].repetition == r->segs[i - 1].repetition ? index + 1 : 0;
		db_cell_int(&c[0], r->segs[i].repetition);
		db_cell_u64(&c[1], index);
		db_cell_u64(&c[2], r->segs[i].offset);
		db_cell_u64(&c[3], r->segs[i].dma_addr);
		db_cell_u64(&c[4], r->segs[i].length);
		rc = db_block_row_done(b);
	}
	return db_block_end(b, rc);
}

static int insert_expected(sqlite3 *db, int64_t sid, const uint64_t pages[64])
{
	struct db_block *b = db_block_new(db, &expected_table, sid);
	int rc = 0;

	if (!b)
		return -1;
	for (int k = 0; k < 64 && !rc; k++) {
		struct db_cell *c;

		if (!pages[k])
			continue;
		c = db_block_row(b);
		db_cell_u64(&c[0], 1ull << k);
		db_cell_u64(&c[1], pages[k]);
		rc = db_block_row_done(b);
	}
	return db_block_end(b, rc);
}

int map_report_store(sqlite3 *db, int64_t sid, struct map_report *r)
{
	uint64_t bitmap = r->mapper_pgsize_bitmap, pages[64] = { 0 };
	const char *source = "mapper";
	const char *phys_source = r->bar_device[0] ? "bar" : "pagemap";
	int expect;

	if (!r->nruns && r->nsegs) {
		if (runs_from_recorded(db, sid, r))
			return -1;
		phys_source = "recorded";
	}
	if (!bitmap) {
		bitmap = domain_pgsizes(db, sid, r->iova);
		source = "domain";
	}
	expect = bitmap && r->nruns;
	if (expect && expected_pages(r, bitmap, pages))
		return -1;
	if (itdb_exec(db, "BEGIN", "storing the map run") ||
	    insert_run(db, sid, r, expect ? bitmap : 0, source, phys_source) ||
	    insert_backing(db, sid, r) || insert_segments(db, sid, r) ||
	    (expect && insert_expected(db, sid, pages))) {
		itdb_exec(db, "ROLLBACK", "storing the map run");
		return -1;
	}
	return itdb_exec(db, "COMMIT", "storing the map run");
}
