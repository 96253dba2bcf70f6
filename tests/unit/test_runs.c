/* The runs views and their report sections, over tests/fixtures/analyzer/runs.sql (its header
 * says what each session holds): per run and queue depth the IOPS, GB/s, mean latency, p99 of the
 * merged histograms and the page sizes of the buffers (vfio: its IOVA range in its device's
 * domains; uring: the maps of each queue depth's points); the checks (spread of repeats, Little's
 * law, engines, ceiling) with their verdicts; the IOMMU off/on changes, withheld where both runs
 * are at the throughput ceiling; and runs_render's text, notes included. */
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
#include "analyzer/runs.h"

static int setup(void **state)
{
	struct fixture_db *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	fixture_db_open(f, "runs");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_db_close(*state);
	free(*state);
	return 0;
}

static void runs_per_queue_depth(void **state)
{
	struct fixture_db *f = *state;

	assert_string_equal(
		sql_rows(f->db,
			 "SELECT session_id, engine, buffer_kind, bar_device, bar_index, bar_offset_bytes,"
			 " devices, iommu, iommu_state, qd, repeats, iops, ROUND(gb_per_s, 6), mean_ns, p99_ns,"
			 " completed, failed, page_sizes FROM runs_view ORDER BY session_id, qd"),
		"1|uio|hugetlb2m|NULL|NULL|NULL|1|off|off|1|2|10000.0|0.04096|95000.0|200000|20000|0|NULL;"
		"1|uio|hugetlb2m|NULL|NULL|NULL|1|off|off|4|2|38000.0|0.155648|100000.0|300000|76000|0|NULL;"
		"1|uio|hugetlb2m|NULL|NULL|NULL|1|off|off|16|2|100000.0|0.4096|160000.0|400000|200000|0"
		"|NULL;"
		"2|vfio|hugetlb2m|NULL|NULL|NULL|1|translated|on|1|3|9000.0|0.036864|105000.0|220000"
		"|27000|0|2 MiB x 1 observed;"
		/* p99: 98% of 99000 below 110 us, then 600 at 400 us and 720 at 500 us pass 99% */
		"2|vfio|hugetlb2m|NULL|NULL|NULL|1|translated|on|4|3|33000.0|0.135168|120000.0|500000"
		"|99000|0|2 MiB x 1 observed;"
		"2|vfio|hugetlb2m|NULL|NULL|NULL|1|translated|on|16|3|99000.0|0.405504|161616.0|420000"
		"|297000|0|2 MiB x 1 observed;"
		"3|uring|hugetlb2m|NULL|NULL|NULL|1|translated|on|1|1|8000.0|0.032768|100000.0|250000"
		"|8000|0|4 KiB x 3 derived;"
		"3|uring|hugetlb2m|NULL|NULL|NULL|1|translated|on|4|1|31000.0|0.126976|129000.0|450000"
		"|31000|0|4 KiB x 2 derived;"
		"3|uring|hugetlb2m|NULL|NULL|NULL|1|translated|on|16|1|95000.0|0.38912|168000.0|500000"
		"|95000|0|NULL;"
		"4|vfio|bar|0000:00:05.0|2|134217728|2|translated|on|1|1|2000.0|0.262144|1000000.0"
		"|3000000|2000|0|2 MiB x 4 observed;"
		"4|vfio|bar|0000:00:05.0|2|134217728|2|translated|on|4|1|4000.0|0.524288|2000000.0"
		"|6000000|4000|0|2 MiB x 4 observed;"
		/* vfio translates whatever io_devices says; no buckets, no p99 */
		"6|vfio|anon|NULL|NULL|NULL|1|NULL|on|1|1|5000.0|0.02048|200000.0|NULL|5000|0|NULL;");
	/* the maps before the points, and those of another device's domain, count for none */
	assert_string_equal(sql_rows(f->db,
				     "SELECT session_id, qd, pages_from, pgsize_bytes, source, pages, bytes"
				     " FROM runs_pages_view ORDER BY session_id, qd"),
			    "2|NULL|buffer|2097152|observed|1|2097152;"
			    "3|1|commands|4096|derived|3|12288;"
			    "3|4|commands|4096|derived|2|8192;"
			    "4|NULL|buffer|2097152|observed|4|8388608;");
	/* one step per point of the sweep, the devices summed */
	assert_string_equal(sql_rows(f->db,
				     "SELECT session_id, step, qd, repeat_index, devices, iops, ROUND(in_flight, 6)"
				     " FROM runs_steps_view WHERE session_id IN (2, 4) AND qd = 4 ORDER BY session_id, step"),
			    "2|3|4|0|1|30000.0|3.6;"
			    "2|4|4|1|1|36000.0|4.32;"
			    "2|5|4|2|1|33000.0|3.96;"
			    "4|1|4|0|2|4000.0|8.0;");
}

static void validity_verdicts(void **state)
{
	struct fixture_db *f = *state;
	const char *sql =
		"SELECT session_id, qd, repeats, ROUND(spread_pct, 3), spread_check,"
		" ROUND(in_flight, 6), expected_in_flight, ROUND(littles_law_pct, 3), littles_law_check,"
		" other_engines, ROUND(engines_diff_pct, 3), engines_check, ROUND(peak_pct, 3),"
		" ceiling_check, verdict FROM runs_validity_view ORDER BY session_id, qd";

	assert_string_equal(sql_rows(f->db, sql),
			    "1|1|2|0.0|ok|0.95|1|-5.0|ok|NULL|NULL|NULL|10.0|ok|ok;"
			    "1|4|2|0.0|ok|3.8|4|-5.0|ok|NULL|NULL|NULL|38.0|ok|ok;"
			    "1|16|2|0.0|ok|16.0|16|0.0|ok|NULL|NULL|NULL|100.0|at-ceiling|at-ceiling;"
			    "2|1|3|0.0|ok|0.945|1|-5.5|ok|uring|12.5|engines-disagree|9.0|ok|engines-disagree;"
			    /* stddev 3000 of 30000, 36000, 33000 */
			    "2|4|3|9.091|spread|3.96|4|-1.0|ok|uring|6.452|ok|33.0|ok|spread;"
			    "2|16|3|0.0|ok|15.999984|16|0.0|ok|uring|4.211|ok|99.0|at-ceiling|at-ceiling;"
			    "3|1|1|NULL|NULL|0.8|1|-20.0|littles-law|vfio|-11.111|engines-disagree|8.0|ok"
			    "|littles-law,engines-disagree;"
			    "3|4|1|NULL|NULL|3.999|4|-0.025|ok|vfio|-6.061|ok|31.0|ok|ok;"
			    "3|16|1|NULL|NULL|15.96|16|-0.25|ok|vfio|-4.04|ok|95.0|ok|ok;"
			    /* its own devices' peak: the seqread of other devices */
			    "4|1|1|NULL|NULL|2.0|2|0.0|ok|NULL|NULL|NULL|50.0|ok|ok;"
			    "4|4|1|NULL|NULL|8.0|8|0.0|ok|NULL|NULL|NULL|100.0|at-ceiling|at-ceiling;"
			    /* writes have a peak of their own: 0000:00:04.0 reads 20 times faster */
			    "6|1|1|NULL|NULL|1.0|1|0.0|ok|NULL|NULL|NULL|100.0|at-ceiling|at-ceiling;");
	/* the limits are one view, recreated to change them */
	assert_int_equal(itdb_exec(f->db,
				   "DROP VIEW runs_limits_view; CREATE VIEW runs_limits_view"
				   " AS SELECT 10.0 AS spread_max_pct, 25.0 AS littles_law_max_pct,"
				   " 15.0 AS engines_max_pct, 99.5 AS ceiling_min_pct",
				   "limits"),
			 0);
	assert_string_equal(sql_rows(f->db, "SELECT session_id, qd, verdict FROM runs_validity_view"
					    " WHERE session_id IN (2, 3) ORDER BY session_id, qd"),
			    "2|1|ok;2|4|ok;2|16|ok;3|1|ok;3|4|ok;3|16|ok;");
}

static void iommu_change(void **state)
{
	struct fixture_db *f = *state;

	/* uio (off) beside vfio and uring (on); at qd 16 uio and vfio are both at the ceiling */
	assert_string_equal(sql_rows(f->db,
				     "SELECT session_id, off_session_id, qd, off_engine, off_iommu, on_engine, off_iops,"
				     " on_iops, ROUND(iops_change_pct, 3), off_mean_ns, on_mean_ns,"
				     " ROUND(mean_change_pct, 3), off_p99_ns, on_p99_ns, ROUND(p99_change_pct, 3),"
				     " ROUND(off_peak_pct, 3), ROUND(on_peak_pct, 3), ceiling_check"
				     " FROM runs_iommu_change_view ORDER BY qd, session_id"),
			    "2|1|1|uio|off|vfio|10000.0|9000.0|-10.0|95000.0|105000.0|10.526|200000|220000|10.0"
			    "|10.0|9.0|ok;"
			    "3|1|1|uio|off|uring|10000.0|8000.0|-20.0|95000.0|100000.0|5.263|200000|250000|25.0"
			    "|10.0|8.0|ok;"
			    "2|1|4|uio|off|vfio|38000.0|33000.0|-13.158|100000.0|120000.0|20.0|300000|500000|66.667"
			    "|38.0|33.0|ok;"
			    "3|1|4|uio|off|uring|38000.0|31000.0|-18.421|100000.0|129000.0|29.0|300000|450000|50.0"
			    "|38.0|31.0|ok;"
			    "2|1|16|uio|off|vfio|100000.0|99000.0|NULL|160000.0|161616.0|NULL|400000|420000|NULL"
			    "|100.0|99.0|at-ceiling;"
			    "3|1|16|uio|off|uring|100000.0|95000.0|-5.0|160000.0|168000.0|5.0|400000|500000|25.0"
			    "|100.0|95.0|ok;");
}

/* runs_render's output for the session, as text (or NULL with its return value not 0). */
static char *rendered(sqlite3 *db, int64_t session_id, enum render_format format)
{
	struct render r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int rc;

	assert_non_null(f);
	render_begin(&r, format, f, "report", "runs.db");
	rc = runs_render(&r, db, session_id);
	assert_int_equal(render_end(&r), 0);
	fclose(f);
	if (!rc)
		return out;
	free(out);
	return NULL;
}

static void render_text_with_notes(void **state)
{
	struct fixture_db *f = *state;
	char *out = rendered(f->db, 3, RENDER_TEXT);

	assert_non_null(out);
	assert_string_equal(
		out,
		"\n"
		"I/O run per queue depth: throughput, latency, IOMMU page sizes\n"
		"  qd  devices  engine  workload  bs_bytes  buffer     iommu       repeats   iops "
		" gb_per_s  mean_us  p99_us  page_sizes\n"
		"   1        1  uring   randread     4 KiB  hugetlb2m  translated        1   8000   "
		" 0.0328      100     250  4 KiB x 3 derived\n"
		"   4        1  uring   randread     4 KiB  hugetlb2m  translated        1  31000    "
		" 0.127      129     450  4 KiB x 2 derived\n"
		"  16        1  uring   randread     4 KiB  hugetlb2m  translated        1  95000    "
		" 0.389      168     500  -\n"
		"  iops, gb_per_s (10^9 bytes/s): each repeat's sum over the devices, then the mean"
		" over the repeats; mean_us: over every completed command; p99_us: of all the repeats'"
		" commands together (their latency histograms merged)\n"
		"  page_sizes: the IOMMU pages of the maps made during the points of that queue depth"
		" (the kernel maps each command)\n"
		"  observed: the page sizes the IOMMU driver was seen writing; derived: the leaf"
		" rule's, where no driver probe saw them\n"
		"\n"
		"what the IOMMU changed: this run beside comparable runs with it off or on\n"
		"  qd  off_session_id  off_engine  off_iommu  on_session_id  on_engine  off_iops "
		" on_iops  iops_change_pct  off_mean_us  on_mean_us  mean_change_pct  off_p99_us "
		" on_p99_us  p99_change_pct  ceiling_check\n"
		"   1               1  uio         off                    3  uring         10000    "
		" 8000           -20.0%           95         100             5.3%         200       "
		" 250           25.0%  ok\n"
		"   4               1  uio         off                    3  uring         38000   "
		" 31000           -18.4%          100         129            29.0%         300       "
		" 450           50.0%  ok\n"
		"  16               1  uio         off                    3  uring        100000   "
		" 95000            -5.0%          160         168             5.0%         400       "
		" 500           25.0%  ok\n"
		"  *_change_pct: (on / off - 1) x 100; what the IOMMU costs shows as fewer IOPS and"
		" more latency\n"
		"\n"
		"do the numbers hold: spread of repeats, Little's law, engines, throughput ceiling\n"
		"  qd  repeats  spread_pct  spread_check  in_flight  expected_in_flight "
		" littles_law_pct  littles_law_check  other_engines  engines_diff_pct  engines_check  "
		"   peak_pct  ceiling_check  verdict\n"
		"   1        1  -           -                   0.8                   1          "
		" -20.0%  littles-law        vfio                     -11.1%  engines-disagree     "
		" 8.0%  ok             littles-law,engines-disagree\n"
		"   4        1  -           -                     4                   4           "
		" -0.0%  ok                 vfio                      -6.1%  ok                  "
		" 31.0%  ok             ok\n"
		"  16        1  -           -                    16                  16           "
		" -0.2%  ok                 vfio                      -4.0%  ok                  "
		" 95.0%  ok             ok\n"
		"  limits (runs_limits_view): spread up to 5% of the mean IOPS, Little's law within"
		" 10%, engines within 10%, the ceiling from 97% of the peak\n"
		"  qd 1: IOPS x mean latency gives 0.80 commands in flight, against 1 kept in flight"
		" (devices x qd): -20.0%, beyond 10%; the queue was not kept full (time between a"
		" completion and the next command counts in neither)\n"
		"  qd 1: uring made 11.1% fewer IOPS than vfio at the same point with the IOMMU in the"
		" same state (more than 10% apart): the engines' own costs differ here, so compare"
		" runs of one engine\n"
		"  spread: a queue depth run once has nothing to compare (io --repeat N)\n");
	free(out);
}

static void render_without_counterpart_or_run(void **state)
{
	struct fixture_db *f = *state;
	char *out = rendered(f->db, 4, RENDER_TEXT);

	assert_non_null(out);
	assert_non_null(
		strstr(out,
		       "\n  nothing to compare: no run with the IOMMU off (engine uio,"
		       " or iommu off or passthrough) at the same workload, block size, buffer"
		       " kind (bar), device count and queue depth in this database: add that run to it"));
	assert_non_null(strstr(out, "\n  the uio engine, the only one that runs with the IOMMU off,"
				    " cannot read into a BAR window\n"));
	assert_non_null(strstr(out, "\n  qd 4: 100.0% of the devices' peak throughput (from 97% on"
				    " counts as the ceiling)"));
	free(out);
	/* a session without an io run renders nothing */
	out = rendered(f->db, 5, RENDER_TEXT);
	assert_non_null(out);
	assert_string_equal(out, "");
	free(out);
	/* JSON: the three sections, notes with each */
	out = rendered(f->db, 2, RENDER_JSON);
	assert_non_null(out);
	assert_non_null(strstr(out, "\"name\": \"runs\""));
	assert_non_null(strstr(out, "\"name\": \"runs_iommu_change\""));
	assert_non_null(strstr(out, "\"name\": \"runs_validity\""));
	assert_non_null(strstr(out, "\"verdict\": \"spread\""));
	assert_non_null(strstr(out, "qd 4: the 3 repeats' IOPS spread 9.1% of their mean"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(runs_per_queue_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(validity_verdicts, setup, teardown),
		cmocka_unit_test_setup_teardown(iommu_change, setup, teardown),
		cmocka_unit_test_setup_teardown(render_text_with_notes, setup, teardown),
		cmocka_unit_test_setup_teardown(render_without_counterpart_or_run, setup, teardown),
	};

	return cmocka_run_group_tests_name("runs views and report sections", tests, NULL, NULL);
}
