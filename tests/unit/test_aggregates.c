/* The aggregates' user side without BPF: the growth of each class between two snapshots of the
 * cumulative counters (what a flush stores), and the schema 8 tables a version 7 file gains. */
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
#include "common/db.h"
#include "tracer/aggregates.h"
#include "tracer/event_writer.h"
#include "common/schema.h"

static struct agg_class class_of(uint32_t op, uint32_t size_log2, uint64_t count, uint64_t bytes,
				 uint64_t pages)
{
	return (struct agg_class){ .key = { .domain = 0xffff888100000000ull,
					    .op = op,
					    .size_log2 = size_log2,
					    .align_log2 = 12 },
				   .value = { .count = count, .bytes = bytes, .pages = pages } };
}

static int print_growth(const struct agg_class *g, void *ctx)
{
	char *out = ctx;
	size_t used = strlen(out);

	snprintf(out + used, 512 - used, "%s/%u:%llu,%llu,%llu;", it_event_kind_name(g->key.op),
		 g->key.size_log2, (unsigned long long)g->value.count,
		 (unsigned long long)g->value.bytes, (unsigned long long)g->value.pages);
	return 0;
}

/* A class new since the last read grows from zero, a class that did not change is left out, and
 * a class that grew gives only its growth; the input order does not matter once sorted. */
static void delta_stores_growth_only(void **state)
{
	struct agg_class prev_classes[] = {
		class_of(IT_EV_MAP, 12, 10, 40960, 0),
		class_of(IT_EV_UNMAP, 12, 4, 16384, 0),
	};
	struct agg_class cur_classes[] = {
		class_of(IT_EV_DRIVER_MAP, 16, 2, 131072, 32),
		class_of(IT_EV_UNMAP, 12, 4, 16384, 0),
		class_of(IT_EV_MAP, 12, 13, 53248, 0),
	};
	struct agg_snapshot prev = { prev_classes, 2 }, cur = { cur_classes, 3 };
	char out[512] = "";

	(void)state;
	agg_snapshot_sort(&prev);
	agg_snapshot_sort(&cur);
	assert_int_equal(agg_snapshot_delta(&prev, &cur, print_growth, out), 0);
	assert_string_equal(out, "map/12:3,12288,0;driver_map/16:2,131072,32;");
}

/* A class read from both the hash and its slot (counted in the hash until its slot was
 * published) becomes one class with the sum of both, wherever the two parts lie. */
static void sort_sums_a_class_read_twice(void **state)
{
	struct agg_class classes[] = {
		class_of(IT_EV_MAP, 12, 3, 12288, 0),	class_of(IT_EV_UNMAP, 12, 1, 4096, 0),
		class_of(IT_EV_MAP, 21, 1, 2097152, 0), class_of(IT_EV_MAP, 12, 5, 20480, 0),
		class_of(IT_EV_UNMAP, 12, 2, 8192, 0),
	};
	struct agg_snapshot none = { NULL, 0 }, cur = { classes, 5 };
	char out[512] = "";

	(void)state;
	agg_snapshot_sort(&cur);
	assert_int_equal(cur.count, 3);
	assert_int_equal(agg_snapshot_delta(&none, &cur, print_growth, out), 0);
	assert_string_equal(out, "map/12:8,32768,0;map/21:1,2097152,0;unmap/12:3,12288,0;");
}

/* The first read stores everything; an empty read stores nothing. */
static void first_flush_stores_all(void **state)
{
	struct agg_class cur_classes[] = { class_of(IT_EV_QI_SUBMIT, 0, 7, 0, 0) };
	struct agg_snapshot none = { NULL, 0 }, cur = { cur_classes, 1 };
	char out[512] = "";

	(void)state;
	assert_int_equal(agg_snapshot_delta(&none, &cur, print_growth, out), 0);
	assert_string_equal(out, "qi_submit/0:7,0,0;");
	out[0] = '\0';
	assert_int_equal(agg_snapshot_delta(&cur, &none, print_growth, out), 0);
	assert_string_equal(out, "");
}

static int stop_at_first(const struct agg_class *g, void *ctx)
{
	(void)g;
	(*(int *)ctx)++;
	return 5;
}

/* A store that fails stops the flush with its code. */
static void delta_stops_on_error(void **state)
{
	struct agg_class cur_classes[] = { class_of(IT_EV_MAP, 12, 1, 4096, 0),
					   class_of(IT_EV_MAP, 13, 1, 8192, 0) };
	struct agg_snapshot none = { NULL, 0 }, cur = { cur_classes, 2 };
	int calls = 0;

	(void)state;
	assert_int_equal(agg_snapshot_delta(&none, &cur, stop_at_first, &calls), 5);
	assert_int_equal(calls, 1);
}

/* capture_settings says what each mode kept; the view gives the classes readable sizes. */
static void settings_and_view(void **state)
{
	char err[256];
	sqlite3 *db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	int64_t sid;

	(void)state;
	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf" },
					    &sid),
			 0);
	assert_int_equal(capture_settings_store(db, sid,
						&(struct bpf_capture_opts){
							.mode = CAPTURE_THRESHOLD },
						1000000000),
			 0);
	assert_string_equal(sql_rows(db, "SELECT mode, threshold_bytes, flush_interval_ns,"
					 " aggregate_entries FROM capture_settings"),
			    "threshold|2097152|1000000000|4096;");
	assert_int_equal(capture_settings_store(db, sid,
						&(struct bpf_capture_opts){
							.mode = CAPTURE_PER_EVENT,
							.threshold_bytes = 4096 },
						1000000000),
			 0);
	assert_string_equal(sql_rows(db, "SELECT mode, threshold_bytes, flush_interval_ns,"
					 " aggregate_entries FROM capture_settings"),
			    "per-event|NULL|NULL|NULL;");
	assert_int_equal(itdb_exec(db,
				   "INSERT INTO map_aggregates VALUES"
				   " (1, 10, 4096, 'map', 12, 0, 12, 3, 12288, 0),"
				   " (1, 20, 4096, 'map', 12, 0, 12, 2, 8192, 0),"
				   " (1, 20, NULL, 'qi_submit', 0, 0, 0, 5, 0, 0),"
				   " (1, 20, 4096, 'driver_map', 21, 2097152, 21, 1, 2097152, 1)",
				   "test"),
			 0);
	assert_string_equal(sql_rows(db, "SELECT domain, op, call_size_min_bytes, call_size_class,"
					 " pgsize_bytes, count, bytes, pages, flushes"
					 " FROM map_aggregates_view ORDER BY op"),
			    "0x1000|driver_map|2097152|2 MiB|2097152|1|2097152|1|1;"
			    "0x1000|map|4096|4 KiB|0|5|20480|0|2;"
			    "NULL|qi_submit|NULL|NULL|0|5|0|0|1;");
	itdb_close(db);
}

/* A version 7 file gains the schema 8 tables and view when opened to append. */
static void version_7_file_migrates(void **state)
{
	char dir[] = "/tmp/iommutrace-agg-XXXXXX", path[128], err[256];
	sqlite3 *db;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v7.db", dir);
	db = itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(itdb_exec(db,
				   "DROP VIEW map_aggregates_view; DROP TABLE map_aggregates;"
				   " DROP TABLE capture_settings;"
				   " UPDATE meta SET value = '7' WHERE key = 'schema_version'",
				   "test"),
			 0);
	itdb_close(db);
	db = itdb_open(path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db,
				     "SELECT group_concat(name) FROM (SELECT name FROM"
				     " sqlite_master WHERE name IN ('capture_settings', 'map_aggregates',"
				     " 'map_aggregates_view') ORDER BY name)"),
			    "capture_settings,map_aggregates,map_aggregates_view;");
	assert_string_equal(sql_rows(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    SCHEMA_VERSION_ROW);
	itdb_close(db);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(delta_stores_growth_only),
		cmocka_unit_test(sort_sums_a_class_read_twice),
		cmocka_unit_test(first_flush_stores_all),
		cmocka_unit_test(delta_stops_on_error),
		cmocka_unit_test(settings_and_view),
		cmocka_unit_test(version_7_file_migrates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
