/* snapshot_store_group() (tracer/snapshot_store.c): a snapshot's domains, groups and runs written
 * into an in-memory database with the schema and read back: a domain two groups share stored
 * once with both links, one without a domain, identity and unreadable domains with no runs, the
 * permissions' names, unsigned 64-bit values as the schema keeps them, and the pages view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/db.h"
#include "common/schema.h"
#include "tracer/snapshot_store.h"
#include "tests/sql_rows.h"

struct fixture {
	sqlite3 *db;
	int64_t sid;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f ||
	    !(f->db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err))) ||
	    itdb_exec(f->db,
		      "INSERT INTO sessions(kind, capture, tool_version)"
		      " VALUES ('snapshot', 'bpf', 'test')",
		      "session"))
		return -1;
	f->sid = sqlite3_last_insert_rowid(f->db);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sqlite3_close(f->db);
	free(f);
	return 0;
}

/* The study's window (512 pages of 2 MiB) and a 4 KiB read-only page, in a domain whose kernel
 * pointer has bit 63 set, as the direct map's do */
static void stores_a_translated_domain_once(void **state)
{
	struct fixture *f = *state;
	struct it_snap_run runs[] = {
		{ .iova = 1ull << 30,
		  .phys = 0x18f600000,
		  .pgsize = 2 << 20,
		  .count = 512,
		  .level = 2,
		  .perms = 3 },
		{ .iova = 0xfffff000,
		  .phys = 0x1234000,
		  .pgsize = 4096,
		  .count = 1,
		  .level = 1,
		  .perms = 1 },
	};
	struct snapshot_domain d = { .domain = 0xff2a64fa02a1c890ull,
				     .kind = IT_SNAP_TRANSLATED,
				     .format = IT_SNAP_FORMAT_VTD,
				     .domain_type = 1,
				     .pgsize_bitmap = 0x40201000,
				     .levels = 3,
				     .entries = 2048,
				     .leaves = 513,
				     .runs = runs,
				     .nruns = 2,
				     .consistent = true,
				     .changes_by_domain = true,
				     .attempts = 1 };

	assert_int_equal(snapshot_store_group(f->db, f->sid, 2, &d), 0);
	assert_int_equal(snapshot_store_group(f->db, f->sid, 7, &d), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT printf('0x%x', domain_ptr), kind, domain_type, "
				     "pgsize_bitmap, format, levels, entries_read, leaves, runs, "
				     "consistent, changes_seen_in, attempts FROM snapshot_domains"),
			    "0xff2a64fa02a1c890|translated|1|1075843072|vtd|3|2048|513|2|1|domain|1;");
	assert_string_equal(sql_rows(f->db, "SELECT group_id, printf('0x%x', domain_ptr) FROM "
					    "snapshot_groups ORDER BY group_id"),
			    "2|0xff2a64fa02a1c890;7|0xff2a64fa02a1c890;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT printf('0x%x', iova), printf('0x%x', phys), "
				     "pgsize_bytes, count, level, perms FROM snapshot_runs ORDER BY iova"),
			    "0x40000000|0x18f600000|2097152|512|2|rw;0xfffff000|0x1234000|4096|1|1|r;");
	assert_string_equal(sql_rows(f->db, "SELECT pgsize_bytes, pages, bytes, runs FROM "
					    "snapshot_pages_view ORDER BY pgsize_bytes"),
			    "4096|1|4096|1;2097152|512|1073741824|1;");
}

/* Identity, unreadable and no domain: no format, levels or runs */
static void domains_without_a_table(void **state)
{
	struct fixture *f = *state;
	struct snapshot_domain identity = { .domain = 0x1000,
					    .kind = IT_SNAP_IDENTITY,
					    .domain_type = 4,
					    .consistent = true,
					    .attempts = 1 };
	struct snapshot_domain unreadable = { .domain = 0x2000,
					      .kind = IT_SNAP_UNREADABLE,
					      .domain_type = 3,
					      .levels = 4,
					      .consistent = true,
					      .attempts = 1 };
	struct snapshot_domain none = { .kind = IT_SNAP_NO_DOMAIN, .consistent = true };

	assert_int_equal(snapshot_store_group(f->db, f->sid, 1, &identity), 0);
	assert_int_equal(snapshot_store_group(f->db, f->sid, 2, &unreadable), 0);
	assert_int_equal(snapshot_store_group(f->db, f->sid, 3, &none), 0);
	assert_string_equal(sql_rows(f->db,
				     "SELECT domain_ptr, kind, domain_type, format, levels, leaves, "
				     "runs, changes_seen_in FROM snapshot_domains ORDER BY domain_ptr"),
			    "4096|identity|4|NULL|NULL|0|0|NULL;8192|unreadable|3|NULL|NULL|0|0|NULL;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT group_id, domain_ptr FROM snapshot_groups ORDER BY 1"),
			    "1|4096;2|8192;3|NULL;");
	assert_string_equal(sql_rows(f->db, "SELECT count(*) FROM snapshot_runs"), "0;");
}

/* A store that fails (the tables gone) says so and returns -1 */
static void a_failed_store_fails(void **state)
{
	struct fixture *f = *state;
	struct snapshot_domain d = { .domain = 0x1000, .kind = IT_SNAP_IDENTITY, .attempts = 1 };

	assert_int_equal(itdb_exec(f->db, "DROP TABLE snapshot_groups", "drop"), 0);
	assert_int_equal(snapshot_store_group(f->db, f->sid, 1, &d), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(stores_a_translated_domain_once, setup, teardown),
		cmocka_unit_test_setup_teardown(domains_without_a_table, setup, teardown),
		cmocka_unit_test_setup_teardown(a_failed_store_fails, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
