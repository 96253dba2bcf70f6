/* iommutrace report: the report_*_view rows of a hand-made database whose answers are known
 * (tests/fixtures/analyzer/report.sql: two domains, partial unmaps both ways, a map repeated
 * after its unmap, one mapped over, one never unmapped, observed and derived pages, losses; an
 * import without domains lasting 0 ns; an io run without maps; a session that never ended), and
 * sections rendered as text, JSON and CSV. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tests/analyzer_fixture.h"
#include "tests/sql_rows.h"
#include "analyzer/report.h"

#define A "0xffff888100001000"
#define B "0xffff888100002000"

static int setup(void **state)
{
	struct fixture_db *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	fixture_db_open(f, "report");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_db_close(*state);
	free(*state);
	return 0;
}

static sqlite3 *db_of(void **state)
{
	return ((struct fixture_db *)*state)->db;
}

/* One section of a session as the report renders it; free() the result. */
static char *rendered(sqlite3 *db, enum render_format format, int64_t sid, enum report_section s)
{
	struct render r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	render_begin(&r, format, f, "report", "t.db");
	assert_int_equal(report_section(&r, db, sid, s), 0);
	assert_int_equal(render_end(&r), 0);
	fclose(f);
	return out;
}

static void session_and_probes(void **state)
{
	sqlite3 *db = db_of(state);

	assert_string_equal(sql_rows(db, "SELECT * FROM report_session_view ORDER BY session_id"),
			    "1|record|bpf|box|6.1.0-test|2.0|60|3|1|command-exit|0|"
			    "iommutrace map --device 0000:00:04.0 --buffer thp --size 2M|NULL;"
			    "2|import|ftrace-text|NULL|NULL|0.0|3|1|1|end-of-input|NULL|NULL|/tmp/trace.txt;"
			    "3|record|tracefs|box|6.1.0-test|1.0|0|0|1|command-exit|0|"
			    "iommutrace io --device 0000:00:04.0 --device 0000:00:07.0|NULL;"
			    "4|record|bpf|box|6.1.0-test|NULL|0|0|0|NULL|NULL|NULL|NULL;");
	/* grouped by role and outcome, in the order of the probe plan */
	assert_string_equal(sql_rows(db, "SELECT role, attached, mechanism, probes, reason, targets"
					 " FROM report_probes_view WHERE session_id = 1"),
			    "tracepoint|1|tp_btf|2|NULL|iommu:map iommu:unmap;"
			    "domain|1|fentry|2|NULL|__iommu_map iommu_map;"
			    "domain|0|NULL|1|function not in this kernel|_iommu_map;"
			    "driver-map|1|fentry|1|NULL|intel_iommu_map_pages;"
			    "driver-map|0|NULL|1|function not in this kernel|pt_iommu_vtdss_map_pages;"
			    "device|1|kprobe|1|fentry attach refused; using kprobe|iommu_dma_map_page;");
}

/* Counts and bytes per domain; pages only of joined map rows (not the unjoined record, not the
 * unmap record); a domain known only from an attach; the session row with both sources. */
static void domains(void **state)
{
	assert_string_equal(sql_rows(db_of(state), "SELECT * FROM report_domains_view"
						   " ORDER BY session_id, domain IS 'all', domain"),
			    "1|" A "|DMA|1075843072|6|4222976|5|2125824|9|observed|0000:00:04.0;"
			    "1|" B
			    "|unmanaged|1075843072|4|1245184|3|1179648|304|derived|0000:00:05.0,0000:00:06.0;"
			    "1|0xffff888100003000|identity|1075843072|0|0|0|0|0|NULL|NULL;"
			    "1|0xffffffff81000000|blocked|NULL|0|0|0|0|0|NULL|0000:00:05.0;"
			    "1|all|NULL|NULL|10|5468160|8|3305472|313|mixed|"
			    "0000:00:04.0,0000:00:05.0,0000:00:06.0;"
			    "2|NULL|NULL|NULL|2|12288|1|4096|3|derived|NULL;"
			    "2|all|NULL|NULL|2|12288|1|4096|3|derived|NULL;"
			    "3|all|NULL|NULL|0|0|0|0|0|NULL|NULL;"
			    "4|all|NULL|NULL|0|0|0|0|0|NULL|NULL;");
}

/* A peaks at 2 MiB + 12 KiB, B at 1 MiB; the session at 3 MiB, when map 5 (A) and map 7 (B)
 * were live together, which neither domain's peak shows. Churn over 2 s; none over 0 ns or an
 * unknown duration. */
static void live_bytes_and_churn(void **state)
{
	assert_string_equal(sql_rows(db_of(state), "SELECT * FROM report_live_view"
						   " ORDER BY session_id, domain IS 'all', domain"),
			    "1|" A "|2109440|2097152|1|0|3.0|2111488.0;"
			    "1|" B "|1048576|0|0|65536|2.0|622592.0;"
			    "1|all|3145728|2097152|1|65536|5.0|2734080.0;"
			    "2|NULL|8192|8192|1|0|NULL|NULL;"
			    "2|all|8192|8192|1|0|NULL|NULL;"
			    "3|all|0|0|0|0|0.0|0.0;"
			    "4|all|0|0|0|0|NULL|NULL;");
}

static void call_and_page_sizes(void **state)
{
	sqlite3 *db = db_of(state);

	/* 4 KiB maps 2 and 3, 8 KiB map 1, 12 KiB map 6 in 16 KiB, the two 2 MiB maps */
	assert_string_equal(sql_rows(db, "SELECT * FROM report_call_sizes_view"
					 " ORDER BY session_id, domain, call_size_bytes"),
			    "1|" A "|4096|2|8192;1|" A "|8192|1|8192;1|" A "|16384|1|12288;"
			    "1|" A "|2097152|2|4194304;"
			    "1|" B "|65536|3|196608;1|" B "|1048576|1|1048576;"
			    "2|NULL|4096|1|4096;2|NULL|8192|1|8192;");
	assert_string_equal(sql_rows(db, "SELECT session_id, domain, pgsize_bytes, source, pages,"
					 " map_bytes, printf('%.2f', bytes_pct)"
					 " FROM report_page_sizes_view"
					 " ORDER BY session_id, domain, pgsize_bytes, source"),
			    "1|" A "|4096|observed|7|28672|0.68;1|" A
			    "|2097152|observed|2|4194304|99.32;"
			    "1|" B "|4096|derived|304|1245184|100.00;"
			    "2|NULL|4096|derived|3|12288|100.00;");
}

/* Map 5 (the repeat of map 4) and the import's map 12; map 9, mapped over, is not live. */
static void live_mappings_losses_runs(void **state)
{
	sqlite3 *db = db_of(state);

	assert_string_equal(sql_rows(db, "SELECT * FROM report_live_mappings_view"
					 " ORDER BY session_id, map_id"),
			    "1|5|" A "|1073741824|2149580800|2097152|2097152|0.8|fio;"
			    "2|12|NULL|32768|40960|8192|8192|0.0|qemu;");
	assert_string_equal(sql_rows(db, "SELECT session_id, event, reason, lost, cpus"
					 " FROM report_losses_view ORDER BY session_id"),
			    "1|map|ringbuf-full|3|0,3;2|any|ftrace-lost-unknown|1|1;");
	assert_string_equal(sql_rows(db, "SELECT * FROM report_map_runs_view"),
			    "1|type1|0000:00:04.0|thp|2097152|2|2|1;");
	assert_string_equal(sql_rows(db, "SELECT * FROM report_io_runs_view"),
			    "3|uring|randread|4096|anon|0000:00:04.0,0000:00:07.0|1,4|6100|4;");
	/* without page sizes to expect, no verdict */
	assert_int_equal(itdb_exec(db, "UPDATE map_runs SET expected_pgsize_bitmap = NULL", "t"),
			 0);
	assert_string_equal(sql_rows(db, "SELECT pages_agree FROM report_map_runs_view"), "NULL;");
}

static void text_header_and_domains(void **state)
{
	char *out = rendered(db_of(state), RENDER_TEXT, 1, REPORT_SESSION);

	assert_non_null(strstr(out, "\nsession 1: record (bpf) 'iommutrace map --device "
				    "0000:00:04.0 --buffer thp --size 2M' on 6.1.0-test: 2 s, 60 "
				    "events, 3 lost\n"));
	free(out);
	out = rendered(db_of(state), RENDER_TEXT, 4, REPORT_SESSION);
	assert_non_null(strstr(out, "\nsession 4: record (bpf) on 6.1.0-test: duration unknown, 0 "
				    "events, none lost, incomplete\n"));
	assert_non_null(strstr(out, "  the session is incomplete: its recorder was killed"));
	free(out);
	out = rendered(db_of(state), RENDER_TEXT, 1, REPORT_DOMAINS);
	assert_string_equal(
		out,
		"\n"
		"maps, unmaps and page-table entries per IOMMU domain\n"
		"  domain              type       pgsize_bitmap  maps  map_bytes  unmaps  unmapped_bytes  pages  pages_source  devices\n"
		"  " A
		"  DMA           0x40201000     6  4.027 MiB       5       2.027 MiB      9  observed      0000:00:04.0\n"
		"  " B
		"  unmanaged     0x40201000     4    1.2 MiB       3         1.1 MiB    304  derived       0000:00:05.0,0000:00:06.0\n"
		"  0xffff888100003000  identity      0x40201000     0        0 B       0             0 B      0  -             -\n"
		"  0xffffffff81000000  blocked                -     0        0 B       0             0 B      0  -             0000:00:05.0\n"
		"  all                 -                      -    10    5.2 MiB       8         3.2 MiB    313  mixed         0000:00:04.0,0000:00:05.0,0000:00:06.0\n"
		"  pages counts the leaf page-table entries written for these maps (a 2 MiB page is one): observed in the driver's map_pages calls, derived by the leaf rule, or mixed\n");
	free(out);
}

/* The import: no domain, no churn (its events share one timestamp). */
static void text_notes_of_an_import(void **state)
{
	char *out = rendered(db_of(state), RENDER_TEXT, 2, REPORT_LIVE);

	assert_string_equal(out,
			    "\n"
			    "live bytes and churn per domain\n"
			    "  domain  peak_live_bytes  end_live_bytes  live_maps  remapped_bytes  maps_per_s  map_bytes_per_s\n"
			    "  -                 8 KiB           8 KiB          1             0 B  -           -\n"
			    "  all               8 KiB           8 KiB          1             0 B  -           -\n"
			    "  live bytes from map_pieces: each map's lifetime, split where part of it was unmapped; what was mapped before the session is not seen\n"
			    "  no churn: the session's events share one timestamp (duration 0)\n");
	free(out);
	out = rendered(db_of(state), RENDER_TEXT, 2, REPORT_DOMAINS);
	assert_non_null(strstr(out, "\n  the row without a domain: maps and unmaps whose domain is "
				    "unknown"));
	free(out);
}

/* The probes' note says when page sizes cannot have been observed; a session without probe rows
 * (session 4) gets none. */
static void probes_note_follows_the_probes(void **state)
{
	sqlite3 *db = db_of(state);
	char *out = rendered(db, RENDER_TEXT, 1, REPORT_PROBES);

	assert_null(strstr(out, "no driver map_pages probe attached"));
	free(out);
	assert_int_equal(itdb_exec(db,
				   "UPDATE probes SET attached = 0, mechanism = NULL,"
				   " reason = 'function not in this kernel'"
				   " WHERE role = 'driver-map'",
				   "t"),
			 0);
	out = rendered(db, RENDER_TEXT, 1, REPORT_PROBES);
	assert_non_null(strstr(out, "\n  driver-map         0  -               2  function not "
				    "in this kernel          intel_iommu_map_pages "
				    "pt_iommu_vtdss_map_pages\n"));
	assert_non_null(strstr(out, "\n  no driver map_pages probe attached: page sizes are "
				    "derived by the leaf rule, not observed\n"));
	free(out);
	out = rendered(db, RENDER_TEXT, 4, REPORT_PROBES);
	assert_string_equal(out, "\nwhich probes attached, how, and why the others did not\n"
				 "  (none)\n");
	free(out);
}

static void json_and_csv(void **state)
{
	char *out = rendered(db_of(state), RENDER_JSON, 1, REPORT_LOSSES);

	assert_string_equal(out,
			    "{\n"
			    "  \"command\": \"report\",\n"
			    "  \"database\": \"t.db\",\n"
			    "  \"sections\": [\n"
			    "    {\n"
			    "      \"name\": \"losses\",\n"
			    "      \"title\": \"lost events\",\n"
			    "      \"rows\": [\n"
			    "        {\n"
			    "          \"session_id\": 1,\n"
			    "          \"event\": \"map\",\n"
			    "          \"reason\": \"ringbuf-full\",\n"
			    "          \"lost\": 3,\n"
			    "          \"meaning\": \"the BPF ring buffer was full: record again with a larger --ring-size\",\n"
			    "          \"cpus\": \"0,3\"\n"
			    "        }\n"
			    "      ]\n"
			    "    }\n"
			    "  ]\n"
			    "}\n");
	free(out);
	out = rendered(db_of(state), RENDER_CSV, 1, REPORT_CALL_SIZES);
	assert_string_equal(out,
			    "# call_sizes: map call sizes per domain\n"
			    "session_id,domain,call_size_bytes,maps,map_bytes\n"
			    "1," A ",4096,2,8192\n"
			    "1," A ",8192,1,8192\n"
			    "1," A ",16384,1,12288\n"
			    "1," A ",2097152,2,4194304\n"
			    "1," B ",65536,3,196608\n"
			    "1," B ",1048576,1,1048576\n"
			    "# note: call_size_bytes is each iommu:map call's size rounded up to a power of two (16 KiB: more than 8 KiB, up to 16 KiB)\n");
	free(out);
	/* the live map's addresses as hex strings: JSON readers lose integers above 2^53 */
	out = rendered(db_of(state), RENDER_JSON, 1, REPORT_LIVE_MAPPINGS);
	assert_non_null(strstr(out, "\"iova\": \"0x40000000\",\n"));
	assert_non_null(strstr(out, "\"domain\": \"" A "\",\n"));
	free(out);
}

/* Text lists 20 of the mappings left live and says how to see the rest; JSON lists all. Text
 * leaves out the runs a session lacks, JSON keeps their (empty) sections. */
static void text_limits_and_left_out_runs(void **state)
{
	sqlite3 *db = db_of(state);
	char *out;

	assert_int_equal(itdb_exec(db,
				   "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL"
				   " SELECT i + 1 FROM n WHERE i < 22)"
				   " INSERT INTO maps(session_id, ts_ns, iova, paddr, size_bytes)"
				   " SELECT 4, 20000000000 + i, i * 4096, i * 4096, 4096 FROM n",
				   "t"),
			 0);
	assert_int_equal(lifetimes_compute(db, 4), 0);
	out = rendered(db, RENDER_TEXT, 4, REPORT_LIVE_MAPPINGS);
	assert_non_null(strstr(out, "\n  3 more: --json or --csv lists all, as does 'SELECT * FROM "
				    "report_live_mappings_view WHERE session_id = 4'\n"));
	assert_non_null(strstr(out, "0x13000"));
	assert_null(strstr(out, "0x14000"));
	free(out);
	out = rendered(db, RENDER_JSON, 4, REPORT_LIVE_MAPPINGS);
	assert_non_null(strstr(out, "\"iova\": \"0x16000\""));
	assert_null(strstr(out, "more"));
	free(out);
	out = rendered(db, RENDER_TEXT, 4, REPORT_MAP_RUNS);
	assert_string_equal(out, "");
	free(out);
	out = rendered(db, RENDER_JSON, 4, REPORT_IO_RUNS);
	assert_non_null(strstr(out, "\"name\": \"io_runs\""));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(session_and_probes, setup, teardown),
		cmocka_unit_test_setup_teardown(domains, setup, teardown),
		cmocka_unit_test_setup_teardown(live_bytes_and_churn, setup, teardown),
		cmocka_unit_test_setup_teardown(call_and_page_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(live_mappings_losses_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(text_header_and_domains, setup, teardown),
		cmocka_unit_test_setup_teardown(text_notes_of_an_import, setup, teardown),
		cmocka_unit_test_setup_teardown(probes_note_follows_the_probes, setup, teardown),
		cmocka_unit_test_setup_teardown(json_and_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(text_limits_and_left_out_runs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
