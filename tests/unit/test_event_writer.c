/* The database layer and the event writer: schema, session rows, refusal of foreign or newer
 * files, and records turned into rows value for value (the driver-page join, derived pages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include "tests/subjournal_count.h"
#include "common/db.h"
#include "common/leaf.h"
#include "tracer/event_writer.h"
#include "common/schema.h"

struct fixture {
	sqlite3 *db;
	int64_t sid;
	struct event_writer *w;
};

static const char *names(void *ctx, uint32_t id)
{
	return id == 7 ? "intel_iommu_map_pages" : id == 8 ? "vtdss_map_range" : NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	f->db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(f->db);
	assert_int_equal(itdb_session_begin(f->db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf",
									 .start_mono_ns = 1000 },
					    &f->sid),
			 0);
	f->w = event_writer_new(f->db, f->sid,
				&(struct event_writer_opts){ .probe_name = names,
							     .fallback_pgsize_bitmap =
								     LEAF_4K | LEAF_2M | LEAF_1G });
	assert_non_null(f->w);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	event_writer_free(f->w);
	itdb_close(f->db);
	free(f);
	return 0;
}

static struct it_event ev(uint32_t kind, uint32_t tid, uint64_t ts)
{
	struct it_event e;

	memset(&e, 0, sizeof(e));
	e.h.kind = kind;
	e.h.tid = tid;
	e.h.pid = tid;
	e.h.ts_ns = ts;
	e.h.cpu = 1;
	strcpy(e.h.comm, "fio");
	return e;
}

static void add(struct fixture *f, const struct it_event *e)
{
	assert_int_equal(event_writer_add(f->w, e), 0);
}

static void map_joins_observed_driver_pages(void **state)
{
	struct fixture *f = *state;
	struct it_event d = ev(IT_EV_DRIVER_MAP, 42, 100), m = ev(IT_EV_MAP, 42, 200);
	struct it_event other = ev(IT_EV_DRIVER_MAP, 43, 150);

	d.h.probe_id = 7;
	d.driver = (struct it_driver){ .domain = 0xffff888100000000ull,
				       .iova = 0x40000000,
				       .paddr = 0x480f600000ull,
				       .pgsize = 2 << 20,
				       .pgcount = 512 };
	other.h.probe_id = 7;
	other.driver =
		(struct it_driver){ .iova = 0x1000, .paddr = 0x2000, .pgsize = 4096, .pgcount = 1 };
	m.map = (struct it_map){ .domain = 0xffff888100000000ull,
				 .iova = 0x40000000,
				 .paddr = 0x480f600000ull,
				 .size = 1 << 30 };
	m.h.flags = IT_F_DOMAIN_FROM_CALL;
	add(f, &d);
	add(f, &other);
	add(f, &m);
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db, "SELECT map_id, ts_ns, cpu, tid, comm, domain_ptr,"
					    " domain_source, iova, paddr, size_bytes FROM maps"),
			    "1|200|1|42|fio|-131387344551936|driver|1073741824|309495595008|1073741824;");
	/* tid 43's record is stored unjoined at finish; no derived rows for map 1 */
	assert_string_equal(sql_rows(f->db, "SELECT op, map_id, tid, function, iova, pgsize_bytes,"
					    " pgcount, source FROM driver_maps ORDER BY tid"),
			    "map|1|42|intel_iommu_map_pages|1073741824|2097152|512|observed;"
			    "map|NULL|43|intel_iommu_map_pages|4096|4096|1|observed;");
	assert_string_equal(sql_rows(f->db, "SELECT domain, iova_hex, paddr_hex FROM maps_view"),
			    "0xffff888100000000|0x40000000|0x480f600000;");
}

/* An interrupt runs on the thread it interrupts: its unmap, or its map of the same IOVA in another
 * domain, between a map's driver record and its event leaves the map's record waiting for its own
 * event; a record that waited more than a second is stored unjoined. */
static void interleaved_calls_join_their_own_records(void **state)
{
	struct fixture *f = *state;
	struct it_event dm = ev(IT_EV_DRIVER_MAP, 42, 100), du = ev(IT_EV_DRIVER_UNMAP, 42, 110);
	struct it_event u = ev(IT_EV_UNMAP, 42, 120), irq_dm = ev(IT_EV_DRIVER_MAP, 42, 121);
	struct it_event irq_m = ev(IT_EV_MAP, 42, 122), m = ev(IT_EV_MAP, 42, 130);
	struct it_event old = ev(IT_EV_DRIVER_MAP, 7, 140), late = ev(IT_EV_MAP, 8, 1000000141);

	dm.driver = (struct it_driver){ .domain = 0xa0,
					.iova = 0xffe80000,
					.paddr = 0x3f62000,
					.pgsize = 4096,
					.pgcount = 128 };
	du.driver = (struct it_driver){ .domain = 0xa0,
					.iova = 0xfff00000,
					.pgsize = 4096,
					.pgcount = 1 };
	u.unmap = (struct it_unmap){ .domain = 0xa0,
				     .iova = 0xfff00000,
				     .size = 4096,
				     .unmapped_size = 4096 };
	irq_dm.driver = (struct it_driver){ .domain = 0xb0,
					    .iova = 0xffe80000,
					    .paddr = 0x9000,
					    .pgsize = 4096,
					    .pgcount = 1 };
	irq_m.map =
		(struct it_map){ .domain = 0xb0, .iova = 0xffe80000, .paddr = 0x9000, .size = 4096 };
	/* the interrupt's map call took the thread's map-call domain: the driver record's wins */
	m.map = (struct it_map){ .domain = 0xb0,
				 .iova = 0xffe80000,
				 .paddr = 0x3f62000,
				 .size = 524288 };
	m.h.flags = IT_F_DOMAIN_FROM_CALL;
	old.driver =
		(struct it_driver){ .iova = 0x5000, .paddr = 0x6000, .pgsize = 4096, .pgcount = 1 };
	late.map = (struct it_map){ .iova = 0x9000, .paddr = 0xa000, .size = 4096 };
	add(f, &dm);
	add(f, &du);
	add(f, &u);
	add(f, &irq_dm);
	add(f, &irq_m);
	add(f, &m);
	add(f, &old);
	add(f, &late);
	/* rows wait in blocks until a commit; the records still pending stay pending */
	assert_int_equal(event_writer_commit(f->w), 0);
	assert_string_equal(sql_rows(f->db, "SELECT op, map_id, unmap_id, tid, domain_ptr, pgcount,"
					    " source FROM driver_maps ORDER BY rowid"),
			    "unmap|NULL|1|42|160|1|observed;map|1|NULL|42|176|1|observed;"
			    "map|2|NULL|42|160|128|observed;map|NULL|NULL|7|NULL|1|observed;"
			    "map|3|NULL|8|NULL|1|derived;");
	assert_string_equal(sql_rows(f->db, "SELECT map_id, domain, domain_source FROM maps_view"),
			    "1|0xb0|driver;2|0xa0|driver;3|NULL|NULL;");
	assert_int_equal(event_writer_finish(f->w), 0);
}

/* A call that outlasts the second a record may wait (a large map with small pages under
 * emulation): its own records still join it; another thread's record of that age does not. */
static void slow_call_joins_its_old_records(void **state)
{
	struct fixture *f = *state;
	struct it_event d1 = ev(IT_EV_DRIVER_MAP, 42, 100), other = ev(IT_EV_DRIVER_MAP, 43, 150);
	struct it_event d2 = ev(IT_EV_DRIVER_MAP, 42, 1500000000),
			m = ev(IT_EV_MAP, 42, 2000000000);

	d1.driver = (struct it_driver){ .domain = 0xa0,
					.iova = 0x40000000,
					.paddr = 0x80000000,
					.pgsize = 4096,
					.pgcount = 512 };
	d2.driver = (struct it_driver){ .domain = 0xa0,
					.iova = 0x40200000,
					.paddr = 0x80200000,
					.pgsize = 4096,
					.pgcount = 512 };
	other.driver =
		(struct it_driver){ .iova = 0x5000, .paddr = 0x6000, .pgsize = 4096, .pgcount = 1 };
	m.map = (struct it_map){ .domain = 0xa0,
				 .iova = 0x40000000,
				 .paddr = 0x80000000,
				 .size = 4 << 20 };
	add(f, &d1);
	add(f, &other);
	add(f, &d2);
	add(f, &m);
	assert_int_equal(event_writer_commit(f->w), 0);
	assert_string_equal(sql_rows(f->db, "SELECT op, map_id, tid, iova, source FROM driver_maps"
					    " ORDER BY rowid"),
			    "map|1|42|1073741824|observed;map|1|42|1075838976|observed;"
			    "map|NULL|43|20480|observed;");
	assert_int_equal(event_writer_finish(f->w), 0);
}

/* Records of lost map events pile up on their thread: beyond 64 held, the thread's oldest is
 * stored unjoined, so that its next event looks through 64 at most; that event still joins. */
static void thread_holds_64_records_at_most(void **state)
{
	struct fixture *f = *state;
	struct it_event d, m = ev(IT_EV_MAP, 42, 1000);

	for (uint64_t i = 0; i < 70; i++) {
		d = ev(IT_EV_DRIVER_MAP, 42, 100 + i);
		d.driver = (struct it_driver){ .iova = 0x100000 + i * 0x1000,
					       .paddr = 0x800000 + i * 0x1000,
					       .pgsize = 4096,
					       .pgcount = 1 };
		add(f, &d);
	}
	m.map = (struct it_map){ .iova = 0x100000 + 69 * 0x1000,
				 .paddr = 0x800000 + 69 * 0x1000,
				 .size = 4096 };
	add(f, &m);
	assert_int_equal(event_writer_commit(f->w), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT COUNT(*), MIN(ts_ns), MAX(ts_ns) FROM driver_maps"
				     " WHERE map_id IS NULL"),
			    "6|100|105;");
	assert_string_equal(sql_rows(f->db, "SELECT map_id, ts_ns FROM driver_maps"
					    " WHERE map_id IS NOT NULL"),
			    "1|169;");
	assert_int_equal(event_writer_finish(f->w), 0);
}

static void map_without_driver_record_gets_derived_pages(void **state)
{
	struct fixture *f = *state;
	struct it_event dom = ev(IT_EV_DOMAIN, 1, 10), m1 = ev(IT_EV_MAP, 1, 20);
	struct it_event m2 = ev(IT_EV_MAP, 1, 30);

	/* a domain without 1 GiB pages; the second map's domain is unknown: fallback set */
	dom.domain = (struct it_domain){ .domain = 0xd0, .pgsize_bitmap = LEAF_4K | LEAF_2M };
	m1.map = (struct it_map){ .domain = 0xd0,
				  .iova = 0x40000000,
				  .paddr = 0x800000000ull,
				  .size = 1 << 30 };
	m2.map = (struct it_map){ .iova = 0x3fe00000,
				  .paddr = 0x83fe00000ull,
				  .size = (1 << 30) + (2 << 20) };
	add(f, &dom);
	add(f, &m1);
	add(f, &m2);
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT map_id, function, iova, paddr, pgsize_bytes,"
				     " pgcount, source FROM driver_maps ORDER BY map_id, iova"),
			    "1|NULL|1073741824|34359738368|2097152|512|derived;"
			    "2|NULL|1071644672|35431383040|2097152|1|derived;"
			    "2|NULL|1073741824|35433480192|1073741824|1|derived;");
	assert_string_equal(sql_rows(f->db, "SELECT domain_ptr, pgsize_bitmap FROM domains"),
			    "208|2101248;");
	assert_string_equal(sql_rows(f->db, "SELECT map_id, pgsize_bytes, pages, source"
					    " FROM map_pages_view ORDER BY map_id, pgsize_bytes"),
			    "1|2097152|512|derived;2|2097152|1|derived;2|1073741824|1|derived;");
}

/* With no driver unmap record (7.1+ kernels have no unmap_pages to probe), an unmap's pages are
 * those of the live mappings it takes away: whole ones (a scatterlist mapped in pieces and
 * unmapped at once), or the front of one whose rest stays mapped. */
static void unmap_without_driver_record_derives_from_live_maps(void **state)
{
	struct fixture *f = *state;
	struct it_event m1 = ev(IT_EV_MAP, 1, 10), m2 = ev(IT_EV_MAP, 1, 11);
	struct it_event m3 = ev(IT_EV_MAP, 1, 12), u1 = ev(IT_EV_UNMAP, 1, 20);
	struct it_event u2 = ev(IT_EV_UNMAP, 1, 21), u3 = ev(IT_EV_UNMAP, 1, 22);
	struct it_event u4 = ev(IT_EV_UNMAP, 1, 23);

	m1.map = (struct it_map){ .domain = 0xd0, .iova = 0x100000, .paddr = 0x7000, .size = 4096 };
	m2.map = (struct it_map){ .domain = 0xd0, .iova = 0x101000, .paddr = 0x9000, .size = 8192 };
	m3.map = (struct it_map){ .domain = 0xd0,
				  .iova = 0x40000000,
				  .paddr = 0x80000000ull,
				  .size = 4 << 20 };
	u1.unmap = (struct it_unmap){ .domain = 0xd0,
				      .iova = 0x100000,
				      .size = 12288,
				      .unmapped_size = 12288 };
	u2.unmap = (struct it_unmap){ .domain = 0xd0,
				      .iova = 0x40000000,
				      .size = 2 << 20,
				      .unmapped_size = 2 << 20 };
	u3.unmap = (struct it_unmap){ .domain = 0xd0,
				      .iova = 0x40200000,
				      .size = 2 << 20,
				      .unmapped_size = 2 << 20 };
	/* nothing mapped there (any more): nothing derived */
	u4.unmap = (struct it_unmap){ .domain = 0xd0,
				      .iova = 0x100000,
				      .size = 4096,
				      .unmapped_size = 4096 };
	add(f, &m1);
	add(f, &m2);
	add(f, &m3);
	add(f, &u1);
	add(f, &u2);
	add(f, &u3);
	add(f, &u4);
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT unmap_id, iova_hex, paddr_hex, pgsize_bytes,"
				     " pgcount, source FROM driver_maps_view WHERE op = 'unmap'"),
			    "1|0x100000|0x7000|4096|1|derived;1|0x101000|0x9000|4096|2|derived;"
			    "2|0x40000000|0x80000000|2097152|1|derived;"
			    "3|0x40200000|0x80200000|2097152|1|derived;");
}

static void map_range_is_derived_with_its_function(void **state)
{
	struct fixture *f = *state;
	struct it_event r = ev(IT_EV_DRIVER_MAP_RANGE, 5, 10), m = ev(IT_EV_MAP, 5, 20);

	r.h.probe_id = 8;
	r.driver =
		(struct it_driver){ .iova = 0x40000000, .paddr = 0x800000000ull, .len = 1 << 30 };
	m.map = (struct it_map){ .iova = 0x40000000, .paddr = 0x800000000ull, .size = 1 << 30 };
	add(f, &r);
	add(f, &m);
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db, "SELECT map_id, function, pgsize_bytes, pgcount, source"
					    " FROM driver_maps"),
			    "1|vtdss_map_range|1073741824|1|derived;");
}

/* More rows than one block insert takes (32), and a rest: every row as it came, in order, each
 * with its own comm. */
static void rows_in_blocks_keep_order_and_values(void **state)
{
	struct fixture *f = *state;

	for (uint32_t i = 0; i < 70; i++) {
		struct it_event m = ev(IT_EV_MAP, 100 + i, 1000 + i);

		snprintf(m.h.comm, sizeof(m.h.comm), "t%u", i);
		m.map = (struct it_map){ .domain = 0xd0,
					 .iova = 0x100000 + i * 0x1000,
					 .paddr = 0x900000 + i * 0x1000,
					 .size = 4096 };
		add(f, &m);
	}
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT COUNT(*), SUM(map_id = tid - 99),"
				     " SUM(comm = 't' || (map_id - 1)), SUM(iova = 0x100000 +"
				     " (map_id - 1) * 4096), SUM(ts_ns = 999 + map_id) FROM maps"),
			    "70|70|70|70|70;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT COUNT(*), SUM(rowid = map_id),"
				     " SUM(paddr = 0x900000 + (map_id - 1) * 4096), SUM(tid = 99 + map_id),"
				     " MIN(source), MAX(source) FROM driver_maps"),
			    "70|70|70|70|derived|derived;");
	assert_string_equal(sql_rows(f->db, "SELECT comm FROM maps WHERE map_id IN (1, 33, 70)"),
			    "t0;t32;t69;");
}

/* Cells bound only when they change: rows that repeat some columns of the row before them in
 * their place and change others, comms of one length that differ (more than the writer keeps, so
 * that later ones are copied), NULL and non-NULL domains, commits that leave a rest of a block. */
static void repeated_and_changed_cells_are_stored_as_given(void **state)
{
	struct fixture *f = *state;

	for (uint32_t i = 0; i < 400; i++) {
		struct it_event m = ev(IT_EV_MAP, 100 + (i / 3) % 5, 1000 + i);

		snprintf(m.h.comm, sizeof(m.h.comm), "c%03u", i % 300);
		m.h.cpu = i % 2;
		m.map = (struct it_map){ .domain = i % 4 ? 0xd0 : 0,
					 .iova = 0x100000 + i * 0x4000,
					 .paddr = 0x900000 + i * 0x4000,
					 .size = 4096 * (1 + (i / 7) % 2) };
		add(f, &m);
		if (i % 45 == 44)
			assert_int_equal(event_writer_commit(f->w), 0);
	}
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT COUNT(*), MIN(map_id), MAX(map_id),"
				     " SUM(comm = printf('c%03d', (map_id - 1) % 300)),"
				     " SUM(tid = 100 + ((map_id - 1) / 3) % 5), SUM(cpu = (map_id - 1) % 2),"
				     " SUM((domain_ptr IS NULL) = ((map_id - 1) % 4 = 0)),"
				     " SUM(size_bytes = 4096 * (1 + ((map_id - 1) / 7) % 2)),"
				     " SUM(ts_ns = 999 + map_id) FROM maps"),
			    "400|1|400|400|400|400|400|400|400;");
	assert_string_equal(sql_rows(f->db, "SELECT COUNT(DISTINCT d.map_id), SUM(d.iova = m.iova),"
					    " SUM(d.tid = m.tid), SUM(d.pgsize_bytes = 4096)"
					    " FROM driver_maps d JOIN maps m USING (map_id)"),
			    "400|400|400|400;");
}

/* The writer numbers its maps; rows another program adds to the table during the recording
 * would give them other ids: the writer stops rather than join driver pages to the wrong map. */
static void rows_another_program_adds_stop_the_writer(void **state)
{
	struct fixture *f = *state;
	struct it_event m = ev(IT_EV_MAP, 42, 100);
	char sql[256];

	m.map = (struct it_map){ .domain = 0xd0, .iova = 0x100000, .paddr = 0x900000, .size = 4096 };
	add(f, &m);
	assert_int_equal(event_writer_commit(f->w), 0);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO maps(session_id, ts_ns, iova, paddr, size_bytes)"
		 " VALUES (%lld, 150, 0x200000, 0xa00000, 4096)",
		 (long long)f->sid);
	assert_int_equal(itdb_exec(f->db, sql, "test: another program's map"), 0);
	m.h.ts_ns = 200;
	add(f, &m);
	assert_int_equal(event_writer_finish(f->w), -1);
	event_writer_free(f->w); /* rolls the open batch back */
	f->w = NULL;
	assert_string_equal(sql_rows(f->db, "SELECT map_id, ts_ns FROM maps ORDER BY map_id"),
			    "1|100;2|150;");
	assert_string_equal(sql_rows(f->db, "SELECT map_id FROM driver_maps"), "1;");
}

/* The blocks' INSERTs keep no statement journal (tracer/event_writer.c, the block comment: one
 * cost most of the recorder's write calls), and the count sees one where SQLite keeps it: a plain
 * multi-row INSERT in a transaction. */
static void blocks_keep_no_statement_journal(void **state)
{
	char dir[] = "/var/tmp/iommutrace-db-XXXXXX", path[128], err[256], sql[512];
	struct event_writer *w;
	sqlite3 *db;
	int64_t sid;

	(void)state;
	subjournal_count_begin();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.db", dir);
	db = itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf",
									 .start_mono_ns = 1000 },
					    &sid),
			 0);
	w = event_writer_new(db, sid,
			     &(struct event_writer_opts){ .probe_name = names,
							  .fallback_pgsize_bitmap = LEAF_4K });
	assert_non_null(w);
	subjournal_opens = subjournal_writes = 0;
	/* three batches of 64 maps and their unmaps: two full blocks of each hot table a batch */
	for (uint64_t i = 0; i < 3 * 128; i++) {
		struct it_event e = ev(i % 2 ? IT_EV_UNMAP : IT_EV_MAP, 42, 1000 + i);
		uint64_t iova = 0x100000 + i / 2 * 0x1000;

		if (i % 2)
			e.unmap = (struct it_unmap){ .domain = 0xd0,
						     .iova = iova,
						     .size = 4096,
						     .unmapped_size = 4096 };
		else
			e.map = (struct it_map){ .domain = 0xd0,
						 .iova = iova,
						 .paddr = 0x900000 + i * 0x1000,
						 .size = 4096 };
		assert_int_equal(event_writer_add(w, &e), 0);
		if (i % 128 == 127)
			assert_int_equal(event_writer_commit(w), 0);
	}
	assert_int_equal(event_writer_finish(w), 0);
	event_writer_free(w);
	assert_string_equal(sql_rows(db,
				     "SELECT (SELECT COUNT(*) FROM maps),"
				     " (SELECT COUNT(*) FROM unmaps), (SELECT COUNT(*) FROM driver_maps)"),
			    "192|192|384;");
	assert_int_equal(subjournal_opens, 0);
	assert_int_equal(subjournal_writes, 0);
	snprintf(sql, sizeof(sql),
		 "BEGIN; INSERT INTO maps(session_id, ts_ns, iova, paddr,"
		 " size_bytes) VALUES (%lld, 1, 1, 1, 1), (%lld, 2, 2, 2, 2); COMMIT",
		 (long long)sid, (long long)sid);
	assert_int_equal(itdb_exec(db, sql, "test: a plain multi-row insert"), 0);
	assert_int_equal(subjournal_opens, 1);
	assert_true(subjournal_writes > 0);
	itdb_close(db);
	subjournal_count_end();
	unlink(path);
	rmdir(dir);
}

static void unmap_joins_driver_unmap(void **state)
{
	struct fixture *f = *state;
	struct it_event d = ev(IT_EV_DRIVER_UNMAP, 9, 10), u = ev(IT_EV_UNMAP, 9, 20);
	struct it_event flush = ev(IT_EV_QI_SUBMIT, 9, 30), other = ev(IT_EV_QI_SUBMIT, 8, 40);
	struct it_event m = ev(IT_EV_MAP, 9, 50), map_flush = ev(IT_EV_QI_SUBMIT, 9, 60);

	d.h.probe_id = 7;
	d.driver =
		(struct it_driver){ .domain = 0xd0, .iova = 0x1000, .pgsize = 4096, .pgcount = 2 };
	u.unmap = (struct it_unmap){ .iova = 0x1000, .size = 8192, .unmapped_size = 8192 };
	m.map = (struct it_map){ .iova = 0x1000, .paddr = 0x2000, .size = 4096 };
	flush.qi.qw[0] = (1ull << 16) | 2;
	other.qi.qw[0] = (1ull << 16) | 2;
	map_flush.qi.qw[0] = (1ull << 16) | 2;
	add(f, &d);
	add(f, &u);
	add(f, &flush);
	add(f, &other);
	add(f, &m);
	add(f, &map_flush);
	assert_int_equal(event_writer_finish(f->w), 0);
	/* a flush follows the last map or unmap of its thread; the other thread's follows none */
	assert_string_equal(sql_rows(f->db, "SELECT tid, after_unmap_id, after_map_id"
					    " FROM flushes_view ORDER BY ts_ns"),
			    "9|1|NULL;8|NULL|NULL;9|NULL|1;");
	assert_string_equal(sql_rows(f->db, "SELECT unmap_id, iova, size_bytes, unmapped_bytes,"
					    " domain_source FROM unmaps"),
			    "1|4096|8192|8192|NULL;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT op, map_id, unmap_id, domain_ptr, paddr,"
				     " pgsize_bytes, pgcount FROM driver_maps WHERE op = 'unmap'"),
			    "unmap|NULL|1|208|NULL|4096|2;");
}

static void devices_faults_flushes_and_losses(void **state)
{
	struct fixture *f = *state;
	struct it_event a = ev(IT_EV_ATTACH, 1, 1), g = ev(IT_EV_GROUP_ADD, 1, 2);
	struct it_event pf = ev(IT_EV_FAULT, 1, 3), qi = ev(IT_EV_QI_SUBMIT, 1, 4);
	struct it_event ct = ev(IT_EV_CACHE_TAG_FLUSH, 1, 5);

	a.device = (struct it_device){ .domain = 0xd0, .group_id = 3, .domain_type = 3 };
	strcpy(a.device.dev_name, "0000:00:04.0");
	a.h.flags = IT_F_DOMAIN_FROM_GROUP;
	g.device = (struct it_device){ .group_id = 4 };
	strcpy(g.device.dev_name, "0000:00:05.0");
	pf.fault = (struct it_fault){ .iova = 0xdead000, .flags = 2 };
	strcpy(pf.fault.dev_name, "0000:00:04.0");
	/* IOTLB invalidation, DID 5, page-selective: address 0x40000000, am 9 (2 MiB) */
	qi.qi.qw[0] = (5ull << 16) | 2;
	qi.qi.qw[1] = 0x40000000ull | 9;
	ct.flush = (struct it_cache_tag_flush){ .start = 0x1000,
						.end = 0x1fff,
						.addr = 0x1000,
						.pages = 1,
						.mask = 0,
						.domain_id = 7,
						.np = 1 };
	strcpy(ct.flush.dev_name, "0000:00:04.0");
	add(f, &a);
	add(f, &g);
	add(f, &pf);
	add(f, &qi);
	add(f, &ct);
	assert_int_equal(event_writer_add_loss(f->w, 1, "map", 17, "ringbuf-full"), 0);
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT event, device, group_id, domain_ptr,"
				     " domain_source, domain_type FROM attaches ORDER BY ts_ns"),
			    "attach|0000:00:04.0|3|208|group|3;group_add|0000:00:05.0|4|NULL|NULL|NULL;");
	assert_string_equal(sql_rows(f->db, "SELECT device, iova, flags FROM faults"),
			    "0000:00:04.0|233492480|2;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT event, device, domain_id, descriptor_type, addr,"
				     " mask, pages FROM flushes ORDER BY ts_ns"),
			    "qi_submit|NULL|5|iotlb|1073741824|9|NULL;"
			    "cache_tag_flush_range_np|0000:00:04.0|7|NULL|4096|0|1;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT event, addr_hex, after_unmap_id FROM flushes_view"
				     " ORDER BY ts_ns"),
			    "qi_submit|0x40000000|NULL;cache_tag_flush_range_np|0x1000|NULL;");
	assert_string_equal(sql_rows(f->db, "SELECT cpu, event, lost, reason FROM losses"),
			    "1|map|17|ringbuf-full;");
	assert_int_equal(event_writer_count(f->w), 5);
}

/* Domains used before the recording started are tied to devices by DMA API calls. */
static void dma_api_ties_domain_to_device(void **state)
{
	struct fixture *f = *state;
	struct it_event d = ev(IT_EV_DOMAIN_DEVICE, 1, 5), a = ev(IT_EV_ATTACH, 2, 9);

	d.device = (struct it_device){ .domain = 0xd0, .group_id = 3, .domain_type = 3 };
	strcpy(d.device.dev_name, "0000:00:04.0");
	d.h.flags = IT_F_DOMAIN_FROM_GROUP;
	a.device = (struct it_device){ .domain = 0xd0, .group_id = 3 };
	strcpy(a.device.dev_name, "0000:00:04.0");
	a.h.flags = IT_F_DOMAIN_FROM_CALL;
	add(f, &d);
	add(f, &a);
	assert_int_equal(event_writer_finish(f->w), 0);
	assert_string_equal(sql_rows(f->db, "SELECT event, device, group_id, domain_source"
					    " FROM attaches ORDER BY ts_ns"),
			    "dma_api|0000:00:04.0|3|group;attach|0000:00:04.0|3|call;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT domain, device, group_id, seen_by, first_seen_ns"
				     " FROM domain_devices_view"),
			    "0xd0|0000:00:04.0|3|dma_api,attach|5;");
}

static void session_end_marks_complete(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(sql_rows(f->db, "SELECT kind, capture, complete, start_mono_ns"
					    " FROM sessions"),
			    "record|bpf|0|1000;");
	assert_int_equal(itdb_session_end(f->db, f->sid,
					  &(struct itdb_session_end){ .end_mono_ns = 5000,
								      .end_reason = "duration",
								      .events_total = 3 }),
			 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT complete, end_reason, end_mono_ns, events_total,"
				     " command_exit_status FROM sessions"),
			    "1|duration|5000|3|NULL;");
	assert_string_equal(sql_rows(f->db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    SCHEMA_VERSION_ROW);
}

static void open_refuses_existing_foreign_and_newer_files(void **state)
{
	char dir[] = "/tmp/iommutrace-db-XXXXXX", path[128], err[256];
	sqlite3 *db;
	FILE *junk;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.db", dir);
	db = itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	itdb_close(db);
	assert_null(itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err)));
	assert_non_null(strstr(err, "exists; use --force"));
	db = itdb_open(path, ITDB_CREATE_FORCE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	/* a newer schema version is refused */
	assert_int_equal(itdb_exec(db,
				   "UPDATE meta SET value = '99'"
				   " WHERE key = 'schema_version'",
				   "test"),
			 0);
	itdb_close(db);
	assert_null(itdb_open(path, ITDB_READ, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "schema version 99, newer"));
	/* a SQLite file that is not ours */
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_null(itdb_open(path, ITDB_READ, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "is not an iommutrace database"));
	/* a file that is not SQLite at all */
	junk = fopen(path, "w");
	assert_non_null(junk);
	fputs("this is not a database, just text long enough to have a header\n", junk);
	fclose(junk);
	assert_null(itdb_open(path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err)));
	assert_non_null(strstr(err, "is not an iommutrace database"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/missing.db", dir);
	assert_null(itdb_open(path, ITDB_READ, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "No such file"));
	rmdir(dir);
}

/* A version 1 file (no map_* tables) reads as it is and is migrated when opened for writing. */
static void open_migrates_version_1(void **state)
{
	char dir[] = "/tmp/iommutrace-db-XXXXXX", path[128], err[256];
	const char *tables = "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master"
			     " WHERE name GLOB 'map_*' ORDER BY name)";
	sqlite3 *db;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v1.db", dir);
	db = itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(itdb_exec(db,
				   "DROP VIEW map_pages_check_view; DROP TABLE map_runs;"
				   " DROP VIEW map_backing_bars_view; DROP TABLE map_dma_segments;"
				   " DROP TABLE map_backing; DROP TABLE map_expected_pages;"
				   " DROP VIEW map_aggregates_view; DROP TABLE map_aggregates;"
				   " UPDATE meta SET value = '1' WHERE key = 'schema_version'",
				   "test"),
			 0);
	itdb_close(db);
	db = itdb_open(path, ITDB_READ, NULL, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, tables), "map_pages_view;");
	sqlite3_close(db);
	db = itdb_open(path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, tables),
			    "map_aggregates,map_aggregates_view,"
			    "map_backing,map_backing_bars_view,"
			    "map_dma_segments,map_expected_pages,map_pages_check_view,map_pages_view,"
			    "map_runs;");
	assert_string_equal(sql_rows(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    SCHEMA_VERSION_ROW);
	itdb_close(db);
	unlink(path);
	rmdir(dir);
}

/* A version 5 file: map_runs gets the columns of imports (its runs say where their physical runs
 * came from), map_dma_segments appears, and the check view reads both. */
static void open_migrates_version_5(void **state)
{
	char dir[] = "/tmp/iommutrace-db-XXXXXX", path[128], err[256];
	sqlite3 *db;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v5.db", dir);
	db = itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(itdb_exec(db,
				   "DROP VIEW map_pages_check_view; DROP VIEW map_backing_bars_view;"
				   " DROP TABLE map_dma_segments;"
				   " ALTER TABLE map_runs DROP COLUMN phys_source;"
				   " ALTER TABLE map_runs DROP COLUMN exporter;"
				   " ALTER TABLE map_runs DROP COLUMN exporter_device;"
				   " ALTER TABLE map_runs DROP COLUMN dma_segments;"
				   " INSERT INTO sessions(session_id, kind, capture, tool_version)"
				   "  VALUES (1, 'record', 'bpf', 'v5'), (2, 'record', 'bpf', 'v5');"
				   " INSERT INTO map_runs(session_id, mapper, device, buffer, buffer_kind,"
				   "  size_bytes, iova, iova_given, repeat_count, hold, maps_done, phys_runs)"
				   "  VALUES (1, 'type1', '0000:00:04.0', 'thp', 'thp', 4096, 0, 0, 1, 0, 1, 1);"
				   " INSERT INTO map_runs(session_id, mapper, device, buffer, buffer_kind,"
				   "  bar_device, size_bytes, iova, iova_given, repeat_count, hold, maps_done,"
				   "  phys_runs) VALUES (2, 'type1', '0000:00:04.0', 'bar:0000:00:05.0/2',"
				   "  'bar', '0000:00:05.0', 4096, 0, 0, 1, 0, 1, 1);"
				   " UPDATE meta SET value = '5' WHERE key = 'schema_version'",
				   "test"),
			 0);
	itdb_close(db);
	db = itdb_open(path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, "SELECT session_id, phys_source, exporter, dma_segments"
					 " FROM map_runs ORDER BY session_id"),
			    "1|pagemap|NULL|NULL;2|bar|NULL|NULL;");
	assert_string_equal(sql_rows(db, "SELECT COUNT(*) FROM map_dma_segments"), "0;");
	assert_string_equal(sql_rows(db, "SELECT session_id, agrees FROM map_pages_check_view"),
			    "");
	assert_string_equal(sql_rows(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    SCHEMA_VERSION_ROW);
	itdb_close(db);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(map_joins_observed_driver_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(interleaved_calls_join_their_own_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(slow_call_joins_its_old_records, setup, teardown),
		cmocka_unit_test_setup_teardown(thread_holds_64_records_at_most, setup, teardown),
		cmocka_unit_test_setup_teardown(map_without_driver_record_gets_derived_pages, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unmap_without_driver_record_derives_from_live_maps,
						setup, teardown),
		cmocka_unit_test_setup_teardown(map_range_is_derived_with_its_function, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unmap_joins_driver_unmap, setup, teardown),
		cmocka_unit_test_setup_teardown(rows_in_blocks_keep_order_and_values, setup,
						teardown),
		cmocka_unit_test_setup_teardown(repeated_and_changed_cells_are_stored_as_given,
						setup, teardown),
		cmocka_unit_test_setup_teardown(rows_another_program_adds_stop_the_writer, setup,
						teardown),
		cmocka_unit_test(blocks_keep_no_statement_journal),
		cmocka_unit_test_setup_teardown(devices_faults_flushes_and_losses, setup, teardown),
		cmocka_unit_test_setup_teardown(dma_api_ties_domain_to_device, setup, teardown),
		cmocka_unit_test_setup_teardown(session_end_marks_complete, setup, teardown),
		cmocka_unit_test(open_refuses_existing_foreign_and_newer_files),
		cmocka_unit_test(open_migrates_version_1),
		cmocka_unit_test(open_migrates_version_5),
	};

	return cmocka_run_group_tests_name("database and event writer", tests, NULL, NULL);
}
