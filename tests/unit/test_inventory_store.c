/* inventory_store(): the testbed inventory written into an in-memory database with the schema
 * and read back row by row; unknown values as NULL; no transaction of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/db.h"
#include "common/inventory.h"
#include "common/schema.h"
#include "tests/unit/sysfs_fixture.h"

struct store_fixture {
	sqlite3 *db;
	int64_t session_id;
	char root[PATH_MAX];
	char rows[8192];
};

static int setup(void **state)
{
	struct store_fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f ||
	    !(f->db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err))))
		return -1;
	if (itdb_exec(f->db,
		      "INSERT INTO sessions(kind, capture, tool_version)"
		      " VALUES ('record', 'bpf', 'test')",
		      "session"))
		return -1;
	f->session_id = sqlite3_last_insert_rowid(f->db);
	fixture_create(f->root);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct store_fixture *f = *state;

	sqlite3_close(f->db);
	fixture_destroy(f->root);
	free(f);
	return 0;
}

/* Every row of the query, columns joined by '|', rows ended by '\n'; NULL as "NULL". */
static const char *rows(struct store_fixture *f, const char *sql)
{
	sqlite3_stmt *st = NULL;
	size_t used = 0;

	f->rows[0] = '\0';
	assert_int_equal(sqlite3_prepare_v2(f->db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const char *text = (const char *)sqlite3_column_text(st, c);

			used += (size_t)snprintf(f->rows + used, sizeof(f->rows) - used, "%s%s",
						 c ? "|" : "", text ? text : "NULL");
			assert_true(used < sizeof(f->rows));
		}
		used += (size_t)snprintf(f->rows + used, sizeof(f->rows) - used, "\n");
		assert_true(used < sizeof(f->rows));
	}
	sqlite3_finalize(st);
	return f->rows;
}

static void stores_the_testbed(void **state)
{
	struct store_fixture *f = *state;
	struct inventory inv;

	fixture_qemu(f->root);
	assert_int_equal(inventory_read(f->root, &inv), 0);
	assert_int_equal(itdb_exec(f->db, "BEGIN", "test"), 0);
	assert_int_equal(inventory_store(f->db, f->session_id, &inv), 0);
	assert_int_equal(itdb_exec(f->db, "COMMIT", "test"), 0);
	inventory_free(&inv);

	assert_string_equal(rows(f, "SELECT session_id, name, value FROM boot_options"
				    " ORDER BY rowid"),
			    "1|intel_iommu|on\n"
			    "1|iommu.strict|0\n");
	assert_string_equal(rows(f, "SELECT session_id, name, vendor, printf('%x', cap),"
				    " printf('%x', ecap), version, printf('%x', pgsize_bitmap),"
				    " supports_2m, supports_1g, mgaw_bits, sagaw, caching_mode,"
				    " pass_through, scalable_mode FROM iommus"),
			    "1|dmar0|intel|d2008c22260286|f00f5a|1:0|40201000|1|1|39|2|1|1|0\n");
	assert_string_equal(rows(f,
				 "SELECT session_id, bdf, printf('%04x', vendor_id),"
				 " printf('%04x', device_id), printf('%06x', class_code), driver,"
				 " iommu_group, iommu_name, numa_node FROM devices ORDER BY bdf"),
			    "1|0000:00:04.0|1b36|0010|010802|nvme|3|dmar0|NULL\n"
			    "1|0000:00:05.0|1af4|1110|050000|NULL|4|dmar0|0\n"
			    "1|0000:00:1f.2|8086|2922|010601|ahci|2|dmar0|NULL\n");
	assert_string_equal(rows(f, "SELECT session_id, bdf, bar_index, printf('0x%x', start_addr),"
				    " size_bytes, is_64bit, prefetchable FROM bars"
				    " ORDER BY bdf, bar_index"),
			    "1|0000:00:04.0|0|0xfebd0000|16384|1|0\n"
			    "1|0000:00:05.0|0|0xfebd4000|256|0|0\n"
			    "1|0000:00:05.0|2|0x800000000|2147483648|1|1\n"
			    "1|0000:00:1f.2|5|0xfebd5000|4096|0|0\n");
	assert_string_equal(rows(f, "SELECT session_id, group_id, domain_type FROM iommu_groups"
				    " ORDER BY group_id"),
			    "1|2|identity\n"
			    "1|3|DMA-FQ\n"
			    "1|4|DMA\n"
			    "1|10|NULL\n");
	assert_string_equal(rows(f, "SELECT bdf, bar_index, start_hex, end_hex FROM bars_view"
				    " WHERE bdf = '0000:00:05.0' AND bar_index = 2"),
			    "0000:00:05.0|2|0x800000000|0x880000000\n");
}

/* Unknowns are NULL; a register with bit 63 set reads back negative and prints as itself. */
static void stores_unknowns_and_high_registers(void **state)
{
	struct store_fixture *f = *state;
	struct boot_option opts[] = { { "iommu", NULL }, { "iommu.strict", "" } };
	struct iommu_unit units[2] = {
		{ .name = "dmar0",
		  .vendor = IOMMU_VENDOR_INTEL,
		  .have_cap = true,
		  .cap = 0x993f008c00380c16ull,
		  .sagaw = 0xc,
		  .caching_mode = 0,
		  .pass_through = IOMMU_CAP_UNKNOWN,
		  .scalable_mode = IOMMU_CAP_UNKNOWN,
		  .pgsize_bitmap = 0x40201000,
		  .addr_width_bits = 57 },
		{ .name = "viommu0",
		  .vendor = IOMMU_VENDOR_OTHER,
		  .sagaw = -1,
		  .caching_mode = IOMMU_CAP_UNKNOWN,
		  .pass_through = IOMMU_CAP_UNKNOWN,
		  .scalable_mode = IOMMU_CAP_UNKNOWN },
	};
	struct pci_device dev = { .bdf = "0000:01:00.0",
				  .vendor_id = -1,
				  .device_id = -1,
				  .class_code = -1,
				  .iommu_group = -1,
				  .numa_node = -1 };
	struct inventory inv = { .boot_options = opts,
				 .n_boot_options = 2,
				 .iommus = units,
				 .n_iommus = 2,
				 .devices = &dev,
				 .n_devices = 1 };

	assert_int_equal(inventory_store(f->db, f->session_id, &inv), 0);
	assert_string_equal(rows(f, "SELECT name, quote(value) FROM boot_options ORDER BY rowid"),
			    "iommu|NULL\n"
			    "iommu.strict|''\n");
	assert_string_equal(rows(f, "SELECT name, vendor, cap, printf('%x', cap), ecap, version,"
				    " pgsize_bitmap, supports_2m, supports_1g, mgaw_bits, sagaw,"
				    " caching_mode, pass_through, scalable_mode FROM iommus"
				    " ORDER BY name"),
			    "dmar0|intel|-7404198661074711530|993f008c00380c16|NULL|NULL|"
			    "1075843072|1|1|57|12|0|NULL|NULL\n"
			    "viommu0|other|NULL|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n");
	assert_string_equal(rows(f, "SELECT * FROM devices"),
			    "1|0000:01:00.0|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n");
	assert_string_equal(rows(f, "SELECT count(*) FROM bars"), "0\n");
}

/* GPUs' BAR1: the place when assigned, NVML's numbers when it answered, its status always. */
static void stores_gpu_bar1(void **state)
{
	struct store_fixture *f = *state;
	struct gpu_bar1 gpus[2] = {
		{ .bdf = "0000:65:00.0",
		  .device_id = 0x2330,
		  .assigned = true,
		  .start = 0x238000000000ull,
		  .size = 96ull << 30,
		  .have_nvml = true,
		  .nvml_total = 96ull << 30,
		  .nvml_used = 1ull << 30,
		  .nvml_free = 95ull << 30,
		  .nvml_status = "ok" },
		{ .bdf = "0000:b3:00.0",
		  .device_id = -1,
		  .nvml_status = "libnvidia-ml.so.1: cannot open shared object file" },
	};
	struct inventory inv = { .gpus = gpus, .n_gpus = 2 };

	assert_int_equal(inventory_store(f->db, f->session_id, &inv), 0);
	assert_string_equal(rows(f,
				 "SELECT bdf, device_id, printf('%x', start_addr), size_bytes,"
				 " nvml_total_bytes, nvml_used_bytes, nvml_free_bytes, nvml_status"
				 " FROM gpu_bar1 ORDER BY bdf"),
			    "0000:65:00.0|9008|238000000000|103079215104|103079215104|1073741824|"
			    "102005473280|ok\n"
			    "0000:b3:00.0|NULL|0|NULL|NULL|NULL|NULL|"
			    "libnvidia-ml.so.1: cannot open shared object file\n");
}

/* It writes inside the caller's transaction: a rollback leaves nothing. */
static void runs_inside_the_callers_transaction(void **state)
{
	struct store_fixture *f = *state;
	struct inventory inv;

	fixture_qemu(f->root);
	assert_int_equal(inventory_read(f->root, &inv), 0);
	assert_int_equal(itdb_exec(f->db, "BEGIN", "test"), 0);
	assert_int_equal(inventory_store(f->db, f->session_id, &inv), 0);
	assert_false(sqlite3_get_autocommit(f->db));
	assert_int_equal(itdb_exec(f->db, "ROLLBACK", "test"), 0);
	inventory_free(&inv);
	assert_string_equal(rows(f,
				 "SELECT (SELECT count(*) FROM boot_options),"
				 " (SELECT count(*) FROM iommus), (SELECT count(*) FROM devices),"
				 " (SELECT count(*) FROM bars), (SELECT count(*) FROM iommu_groups)"),
			    "0|0|0|0|0\n");
}

/* A database error is reported, not ignored: the same inventory twice breaks the keys. */
static void database_errors_fail(void **state)
{
	struct store_fixture *f = *state;
	struct inventory inv;

	fixture_qemu(f->root);
	assert_int_equal(inventory_read(f->root, &inv), 0);
	assert_int_equal(inventory_store(f->db, f->session_id, &inv), 0);
	assert_int_equal(inventory_store(f->db, f->session_id, &inv), -1);
	inventory_free(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(stores_the_testbed, setup, teardown),
		cmocka_unit_test_setup_teardown(stores_unknowns_and_high_registers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(stores_gpu_bar1, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_inside_the_callers_transaction, setup,
						teardown),
		cmocka_unit_test_setup_teardown(database_errors_fail, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
