/* Map lifetimes (analyzer/lifetimes.h) over a fixture with known answers: every piece with the
 * event that ended it, the live set at the end, each domain's live bytes over time and its peak,
 * a recomputation that changes nothing, and lifetimes_ensure noticing a session that grew. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/schema.h"
#include "tests/sql_rows.h"
#include "tests/analyzer_fixture.h"
#include "tests/subjournal_count.h"
#include "analyzer/piece_writer.h"
#include "analyzer/analysis.h"
#include "tests/full_schema.h"

#define PIECES \
	"SELECT map_id, domain_ptr, printf('%x', iova), size_bytes, printf('%x', paddr)," \
	" mapped_ns, unmapped_ns, unmap_id, end_reason FROM map_pieces ORDER BY map_id, iova"

static const char every_piece[] =
	"1|209|1000|4096|100000|10|20|1|unmap;" /* 8 KiB unmapped 4 KiB at a time */
	"1|209|2000|4096|101000|10|30|2|unmap;"
	"2|209|10000|4096|200000|40|50|3|unmap;" /* two maps, one unmap */
	"3|209|11000|4096|300000|41|50|3|unmap;"
	"4|209|10000|4096|400000|60|NULL|NULL|NULL;" /* mapped again, never unmapped */
	"5|209|20000|4096|500000|70|NULL|NULL|NULL;" /* a hole unmapped in the middle */
	"5|209|21000|4096|501000|70|80|4|unmap;"
	"5|209|22000|4096|502000|70|NULL|NULL|NULL;"
	"6|209|30000|4096|600000|90|95|NULL|remapped;" /* mapped over: its unmap unseen */
	"7|209|30000|4096|700000|95|NULL|NULL|NULL;"
	"8|210|1000|4096|800000|15|25|5|unmap;" /* the same IOVA, another domain */
	"9|NULL|5000|4096|900000|100|110|6|unmap;" /* unknown domain matches unknown */
	"10|209|40000|4096|a00000|120|120|7|unmap;"; /* map and unmap at one time */

static void pieces_and_their_ends(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "lifetimes");
	assert_string_equal(sql_rows(f.db, PIECES), every_piece);
	assert_string_equal(sql_rows(f.db, "SELECT maps, unmaps, pieces FROM map_pieces_state"),
			    "10|8|13;");
	assert_string_equal(sql_rows(f.db, "SELECT map_id, iova_hex, size_bytes FROM"
					   " live_mappings_view ORDER BY map_id, iova"),
			    "4|0x10000|4096;5|0x20000|4096;5|0x22000|4096;7|0x30000|4096;");
	/* recomputing replaces, never adds */
	assert_int_equal(lifetimes_compute(f.db, 1), 0);
	assert_string_equal(sql_rows(f.db, PIECES), every_piece);
	fixture_db_close(&f);
}

static void live_bytes_and_peak(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "lifetimes");
	assert_string_equal(sql_rows(f.db, "SELECT ts_ns, live_bytes FROM live_bytes_view"
					   " WHERE domain_ptr = 209 ORDER BY ts_ns"),
			    "10|8192;20|4096;30|0;40|4096;41|8192;50|0;60|4096;70|16384;80|12288;"
			    "90|16384;95|16384;120|16384;");
	assert_string_equal(sql_rows(f.db,
				     "SELECT IFNULL(domain_ptr, 'NULL'), MAX(live_bytes)"
				     " FROM live_bytes_view GROUP BY domain_ptr ORDER BY domain_ptr"),
			    "NULL|4096;209|16384;210|4096;");
	fixture_db_close(&f);
}

/* A session that got another event since its pieces were made is made again; one that did not
 * is left alone. */
static void ensure_follows_the_events(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "lifetimes");
	assert_int_equal(itdb_exec(f.db, it_capture_index_sql, "test"), 0); /* as a session end */
	assert_int_equal(itdb_exec(f.db, "DELETE FROM map_pieces WHERE map_id = 1", "test"), 0);
	assert_int_equal(lifetimes_ensure(f.db, 1), 0);
	assert_string_equal(sql_rows(f.db, "SELECT COUNT(*) FROM map_pieces"), "11;");
	assert_int_equal(itdb_exec(f.db,
				   "INSERT INTO unmaps(unmap_id, session_id, ts_ns, domain_ptr,"
				   " iova, size_bytes, unmapped_bytes) VALUES (9, 1, 140, 209, 65536,"
				   " 4096, 4096)",
				   "test"),
			 0);
	assert_int_equal(lifetimes_ensure(f.db, 1), 0);
	assert_string_equal(sql_rows(f.db, "SELECT unmapped_ns, unmap_id FROM map_pieces"
					   " WHERE map_id = 4"),
			    "140|9;");
	assert_string_equal(sql_rows(f.db, "SELECT COUNT(*) FROM map_pieces"), "13;");
	/* set aside for the sweep, then made again */
	assert_string_equal(sql_rows(f.db, "SELECT name FROM sqlite_master WHERE type = 'index'"
					   " AND tbl_name = 'map_pieces' ORDER BY name"),
			    "map_pieces_by_session;map_pieces_live;");
	fixture_db_close(&f);
}

/* A version 6 file gets its pieces when an analyzer command opens it, not by its migration (which
 * runs no analysis); a missing file is refused. */
static void analysis_computes_them(void **state)
{
	struct fixture_db f;
	struct analysis a;
	char err[256];

	fixture_db_open(&f, "lifetimes");
	assert_int_equal(itdb_exec(f.db,
				   "DROP VIEW live_mappings_view; DROP VIEW live_bytes_view;"
				   " DROP TABLE map_pieces; DROP TABLE map_pieces_state;"
				   " UPDATE meta SET value = '6' WHERE key = 'schema_version'",
				   "test"),
			 0);
	itdb_close(f.db);
	f.db = itdb_open(f.path, ITDB_MIGRATE, &test_full_schema, err, sizeof(err));
	assert_non_null(f.db);
	assert_string_equal(sql_rows(f.db, "SELECT COUNT(*) FROM map_pieces"), "0;");
	assert_int_equal(atoi(sql_rows(f.db, "SELECT value FROM meta"
					     " WHERE key = 'schema_version'")),
			 IT_SCHEMA_VERSION);
	itdb_close(f.db);
	assert_int_equal(analysis_open(&a, f.path, &test_full_schema, -1), 0);
	assert_string_equal(sql_rows(a.db, PIECES), every_piece);
	analysis_close(&a);
	f.db = NULL;
	assert_null(itdb_open("/tmp/iommutrace-no-such.db", ITDB_MIGRATE, &test_full_schema, err,
			      sizeof(err)));
	assert_string_equal(err, "/tmp/iommutrace-no-such.db: No such file or directory");
	fixture_db_close(&f);
}

/* The pieces go in blocks of 64 rows that keep no statement journal (analyzer/piece_writer.c),
 * where setting the indexes aside does (a schema change); and the count sees a journal where SQLite
 * keeps one: a plain multi-row INSERT in a transaction. */
static void pieces_keep_no_statement_journal(void **state)
{
	struct piece_writer *w;
	struct fixture_db f;

	(void)state;
	subjournal_count_begin();
	fixture_db_open(&f, "lifetimes");
	assert_int_equal(itdb_exec(f.db, "BEGIN", "test"), 0);
	w = piece_writer_begin(f.db, 1);
	assert_non_null(w);
	subjournal_writes = 0;
	for (int64_t i = 1; i <= 200; i++)
		assert_int_equal(piece_writer_add(w, &(struct piece_row){ .map_id = i,
									  .iova = i << 12,
									  .paddr = i << 12,
									  .size = 4096,
									  .mapped_ns = i,
									  .end_ns = -1,
									  .unmap_id = -1 }),
				 0);
	assert_int_equal(subjournal_writes, 0);
	assert_int_equal(piece_writer_end(w), 0);
	piece_writer_free(w);
	assert_int_equal(itdb_exec(f.db, "COMMIT", "test"), 0);
	assert_string_equal(sql_rows(f.db, "SELECT COUNT(*), SUM(map_id), SUM(unmapped_ns IS NULL)"
					   " FROM map_pieces"),
			    "200|20100|200;");
	subjournal_writes = 0;
	assert_int_equal(itdb_exec(f.db,
				   "BEGIN; INSERT INTO map_pieces(session_id, map_id, iova,"
				   " paddr, size_bytes, mapped_ns) VALUES (1, 1, 1, 1, 1, 1),"
				   " (1, 2, 2, 2, 2, 2); COMMIT",
				   "test"),
			 0);
	assert_true(subjournal_writes > 0);
	fixture_db_close(&f);
	subjournal_count_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pieces_and_their_ends),
		cmocka_unit_test(live_bytes_and_peak),
		cmocka_unit_test(ensure_follows_the_events),
		cmocka_unit_test(analysis_computes_them),
		cmocka_unit_test(pieces_keep_no_statement_journal),
	};

	return cmocka_run_group_tests_name("map lifetimes", tests, NULL, NULL);
}
