/* audit align and audit bar (analyzer/audit_align.h, audit_bar.h) over a fixture with known
 * answers (tests/fixtures/analyzer/audit.sql): the views' rows, the reasons and fixes, the
 * IOTLB conclusions, and the rendered text, JSON and CSV; odd rows must not break them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include "tests/analyzer_fixture.h"
#include "analyzer/audit_align.h"
#include "analyzer/audit_bar.h"

#define GROUP_COLUMNS \
	"SELECT group_no, maps, size_bytes, IFNULL(bar_device || '/' || bar_index, 'host')," \
	" bar_offset_bytes, iova_align_bytes, paddr_align_bytes, pages, pages_source," \
	" written_page_bytes, expected_page_bytes, aligned_page_bytes, hw_page_bytes," \
	" possible_page_bytes, hw_source, reason, short_bytes FROM audit_align_view"

/* Session 1, biggest shortfall first; the ties by bytes, then by first map. */
static void align_groups(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "audit");
	assert_string_equal(sql_rows(f.db, GROUP_COLUMNS " WHERE session_id = 1 ORDER BY group_no"),
			    /* the reference study: 1 GiB at 246 MiB into the BAR, IOVA 1 GiB-aligned */
			    "1|1|1073741824|0000:00:05.0/2|257949696|1073741824|2097152|2 MiB x 512|observed|"
			    "2097152|2097152|2097152|1073741824|1073741824|domain|paddr misaligned|1073741824;"
			    /* twice: 2 MiB across the 1 GiB boundary of the BAR, both 1 MiB-aligned */
			    "2|2|2097152|0000:00:05.0/2|1072693248|1048576|1048576|4 KiB x 512|observed|"
			    "4096|4096|4096|1073741824|2097152|domain|iova and paddr misaligned|4194304;"
			    "3|1|4194304|host|NULL|4096|2097152|4 KiB x 1024|observed|"
			    "4096|4096|4096|1073741824|2097152|domain|iova misaligned|4194304;"
			    /* IOVA 4 MiB-aligned: capped at 2 MiB, the largest page a 4 MiB map can hold */
			    "4|1|4194304|host|NULL|2097152|4096|4 KiB x 1024|observed|"
			    "4096|4096|4096|1073741824|2097152|domain|paddr misaligned|4194304;"
			    "5|1|2097152|host|NULL|2097152|2097152|4 KiB x 512|observed|"
			    "4096|2097152|2097152|1073741824|2097152|domain|driver|2097152;"
			    /* 1 GiB + 2 MiB across the boundary at 1022 MiB: 2 MiB, then 1 GiB */
			    "6|1|1075838976|0000:00:05.0/2|1071644672|2097152|2097152|1 GiB x 1 + 2 MiB x 1|"
			    "observed|1073741824|1073741824|1073741824|1073741824|1073741824|domain|none|0;"
			    "7|1|1073741824|0000:00:05.0/2|0|1073741824|1073741824|1 GiB x 1|observed|"
			    "1073741824|1073741824|1073741824|1073741824|1073741824|domain|none|0;"
			    "8|1|268435456|0000:01:00.0/1|268435456|2097152|2097152|2 MiB x 128|observed|"
			    "2097152|2097152|2097152|1073741824|2097152|domain|length|0;"
			    /* domain unknown: the unit's page sizes */
			    "9|1|2097152|host|NULL|2097152|2097152|2 MiB x 1|derived|"
			    "2097152|2097152|2097152|1073741824|2097152|iommu|length|0;"
			    /* no driver_maps row: the leaf rule's 4 KiB explains it */
			    "10|1|65536|host|NULL|4096|4096|NULL|NULL|"
			    "NULL|4096|4096|1073741824|4096|domain|length|0;"
			    "11|3|4096|host|NULL|4096|4096|4 KiB x 1|observed|"
			    "4096|4096|4096|1073741824|4096|domain|length|0;");
	fixture_db_close(&f);
}

/* The fixes: BAR offsets, IOVAs, huge pages, the boot option, the driver. */
static void align_fixes(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "audit");
	assert_string_equal(sql_rows(f.db, "SELECT session_id, group_no, fix FROM audit_align_view"
					   " WHERE fix IS NOT NULL ORDER BY session_id, group_no"),
			    "1|1|1 GiB pages need paddr 1 GiB-aligned: place the buffer at BAR offset 0 or 1 GiB;"
			    "1|2|2 MiB pages need the IOVA and paddr 2 MiB-aligned: place the buffer at BAR offset"
			    " 1022 MiB or 1 GiB; map at an IOVA aligned to 2 MiB (e.g. 0x80000000);"
			    "1|3|2 MiB pages need the IOVA 2 MiB-aligned: map at an IOVA aligned to 2 MiB"
			    " (e.g. 0x40200000);"
			    "1|4|2 MiB pages need paddr 2 MiB-aligned: use hugetlb2m (or THP) memory;"
			    "1|5|the driver wrote 4 KiB pages where the alignment and the domain's page sizes"
			    " allow 2 MiB: a driver or kernel limit;"
			    "2|1|the domain's page sizes stop at 4 KiB where the IOMMU has 1 GiB pages: boot"
			    " without intel_iommu=sp_off;"
			    "3|1|2 MiB pages need the IOVA 2 MiB-aligned: map at an IOVA aligned to 2 MiB"
			    " (e.g. 0x400000);"
			    "3|2|2 MiB pages need paddr 2 MiB-aligned: place the buffer at a 2 MiB-aligned"
			    " physical address (host memory: hugetlb2m or THP);"
			    "4|1|64 KiB pages need paddr 64 KiB-aligned: use physically contiguous 64 KiB-aligned"
			    " memory;");
	fixture_db_close(&f);
}

/* superpages off, an import without inventory, an AMD v1 table */
static void align_other_sessions(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "audit");
	assert_string_equal(sql_rows(f.db, GROUP_COLUMNS " WHERE session_id > 1"
							 " ORDER BY session_id, group_no"),
			    "1|1|1073741824|0000:00:05.0/2|0|1073741824|1073741824|4 KiB x 262144|observed|"
			    "4096|4096|1073741824|4096|1073741824|domain|hardware|1073741824;"
			    "1|1|2097152|host|NULL|4096|2097152|4 KiB x 512|derived|"
			    "4096|4096|4096|1073741824|2097152|session|iova misaligned|2097152;"
			    "2|1|2097152|host|NULL|2097152|4096|4 KiB x 512|derived|"
			    "4096|4096|4096|1073741824|2097152|session|paddr misaligned|2097152;"
			    "3|1|2097152|host|NULL|2097152|2097152|2 MiB x 1|derived|"
			    "2097152|2097152|2097152|1073741824|2097152|session|length|0;"
			    "1|1|65536|host|NULL|65536|16384|16 KiB x 4|observed|"
			    "16384|16384|16384|2251799813685248|65536|domain|paddr misaligned|65536;");
	fixture_db_close(&f);
}

static void align_summary(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "audit");
	assert_string_equal(sql_rows(f.db,
				     "SELECT session_id, maps, mapped_bytes,"
				     " at_possible_bytes, below_possible_bytes, pages_unknown_bytes,"
				     " printf('%.2f', at_possible_pct) FROM audit_align_summary_view"
				     " ORDER BY session_id"),
			    "1|14|3508613120|2420125696|1088421888|65536|68.98;"
			    "2|1|1073741824|0|1073741824|0|0.00;"
			    "3|3|6291456|2097152|4194304|0|33.33;"
			    "4|1|65536|0|65536|0|0.00;");
	/* per map: the crossing window's pages summed per size, the unknown ones */
	assert_string_equal(sql_rows(f.db,
				     "SELECT map_id, pages, pages_source, entries,"
				     " written_page_bytes, expected_page_bytes, hw_source, reason"
				     " FROM audit_align_maps_view WHERE map_id IN (3, 8, 13)"
				     " ORDER BY map_id"),
			    "3|1 GiB x 1 + 2 MiB x 1|observed|2|1073741824|1073741824|domain|none;"
			    "8|NULL|NULL|NULL|NULL|4096|domain|length;"
			    "13|2 MiB x 1|derived|1|2097152|2097152|iommu|length;");
	fixture_db_close(&f);
}

/* GPU BAR1 first, then each BAR's windows by offset; identical calls counted. */
static void bar_windows(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "audit");
	assert_string_equal(sql_rows(f.db,
				     "SELECT session_id, gpu_bar1, bar_device, bar_index,"
				     " bar_offset_bytes, size_bytes, maps, printf('0x%x', iova),"
				     " paddr_align_bytes, pages, entries, best_page_bytes, best_pages,"
				     " best_entries FROM audit_bar_view ORDER BY session_id,"
				     " gpu_bar1 DESC, bar_device, bar_index, bar_offset_bytes"),
			    "1|1|0000:01:00.0|1|268435456|268435456|1|0xc0000000|2097152|2 MiB x 128|128|"
			    "2097152|2 MiB x 128|128;"
			    "1|0|0000:00:05.0|2|0|1073741824|1|0x80000000|1073741824|1 GiB x 1|1|"
			    "1073741824|1 GiB x 1|1;"
			    "1|0|0000:00:05.0|2|257949696|1073741824|1|0x40000000|2097152|2 MiB x 512|512|"
			    "1073741824|1 GiB x 1|1;"
			    "1|0|0000:00:05.0|2|1071644672|1075838976|1|0x3fe00000|2097152|"
			    "1 GiB x 1 + 2 MiB x 1|2|1073741824|1 GiB x 1 + 2 MiB x 1|2;"
			    "1|0|0000:00:05.0|2|1072693248|2097152|2|0x7ff00000|1048576|4 KiB x 512|512|"
			    "2097152|2 MiB x 1|1;"
			    "2|0|0000:00:05.0|2|0|1073741824|1|0x40000000|1073741824|4 KiB x 262144|262144|"
			    "1073741824|1 GiB x 1|1;");
	assert_string_equal(sql_rows(f.db, "SELECT * FROM audit_bar_summary_view"
					   " ORDER BY session_id, gpu_bar1 DESC, bar_device"),
			    "1|1|0000:01:00.0|1|17179869184|1|1|268435456|128|128|0;"
			    "1|0|0000:00:05.0|2|2147483648|4|5|3225419776|1027|5|0;"
			    "2|0|0000:00:05.0|2|2147483648|1|1|1073741824|262144|1|0;");
	assert_int_equal(audit_bar_device_known(f.db, "0000:00:05.0"), 1);
	assert_int_equal(audit_bar_device_known(f.db, "0000:00:1f.0"), 0);
	fixture_db_close(&f);
}

/* A window mapped again at other IOVAs: one row while the IOVA's offset within the largest
 * power of two not above the size is the same (the pages cannot differ), another where not. */
static void bar_window_remapped(void **state)
{
	struct fixture_db f;

	fixture_db_open(&f, "audit");
	assert_int_equal(itdb_exec(f.db,
				   "INSERT INTO maps(map_id, session_id, ts_ns, domain_ptr, domain_source, iova, paddr,"
				   " size_bytes) VALUES"
				   " (15, 1, 2200, 0xffff888100001000, 'driver', 0xd0000000, 0x4810000000, 0x10000000),"
				   " (16, 1, 2300, 0xffff888100001000, 'driver', 0x10000000, 0x4810000000, 0x10000000),"
				   " (17, 1, 2400, 0xffff888100001000, 'driver', 0x20200000, 0x4810000000, 0x10000000);"
				   "INSERT INTO driver_maps(session_id, op, map_id, function, domain_ptr, iova, paddr,"
				   " pgsize_bytes, pgcount, source) VALUES"
				   " (1, 'map', 15, 'intel_iommu_map_pages', 0xffff888100001000, 0xd0000000,"
				   "  0x4810000000, 0x200000, 128, 'observed'),"
				   " (1, 'map', 16, 'intel_iommu_map_pages', 0xffff888100001000, 0x10000000,"
				   "  0x4810000000, 0x200000, 128, 'observed'),"
				   " (1, 'map', 17, 'intel_iommu_map_pages', 0xffff888100001000, 0x20200000,"
				   "  0x4810000000, 0x200000, 128, 'observed');",
				   "test"),
			 0);
	assert_int_equal(lifetimes_ensure(f.db, 1), 0);
	assert_string_equal(sql_rows(f.db, "SELECT first_map_id, maps, printf('0x%x', iova),"
					   " iova_align_bytes, entries FROM audit_bar_view"
					   " WHERE gpu_bar1 ORDER BY first_map_id"),
			    "14|3|0xc0000000|2097152|128;"
			    "17|1|0x20200000|2097152|128;");
	assert_string_equal(sql_rows(f.db, "SELECT windows, maps, entries FROM"
					   " audit_bar_summary_view WHERE gpu_bar1"),
			    "2|4|256;");
	fixture_db_close(&f);
}

/* What a command prints for one session: returns a malloc'd string. */
static char *rendered(sqlite3 *db, enum render_format format, int64_t session, bool bar,
		      const struct audit_bar_opts *o)
{
	struct render r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	render_begin(&r, format, f, bar ? "audit bar" : "audit align", "t.db");
	if (bar)
		assert_int_equal(audit_bar_render(&r, db, session, "", o), 0);
	else
		assert_int_equal(audit_align_render(&r, db, session, ""), 0);
	assert_int_equal(render_end(&r), 0);
	fclose(f);
	return out;
}

static void align_text(void **state)
{
	struct fixture_db f;
	char *out;

	fixture_db_open(&f, "audit");
	out = rendered(f.db, RENDER_TEXT, 1, false, NULL);
	assert_non_null(strstr(out, "\nmap calls, most bytes below the largest page possible"
				    " first\n"));
	assert_non_null(strstr(out, "\n  #1 paddr misaligned: 1 GiB pages need paddr 1 GiB-aligned:"
				    " place the buffer at BAR offset 0 or 1 GiB\n"));
	assert_non_null(strstr(out, "\n  #5 driver: the driver wrote 4 KiB pages"));
	assert_null(strstr(out, "#6")); /* no fix, no note */
	assert_non_null(strstr(out, "\n  pages '-': no driver_maps row for those maps"));
	assert_non_null(strstr(out, "   14       3.3 GiB            2.3 GiB             1.013 GiB"
				    "               64 KiB            69.0%\n"));
	free(out);
	/* the copy of the groups is gone: a second session renders from scratch */
	out = rendered(f.db, RENDER_TEXT, 2, false, NULL);
	assert_non_null(strstr(out, "#1 hardware: the domain's page sizes stop at 4 KiB"));
	free(out);
	out = rendered(f.db, RENDER_CSV, 3, false, NULL);
	assert_non_null(strstr(out, "# align: map calls"));
	assert_non_null(strstr(out,
			       ",iova misaligned,2 MiB pages need the IOVA 2 MiB-aligned: map at"
			       " an IOVA aligned to 2 MiB (e.g. 0x400000)\n"));
	free(out);
	fixture_db_close(&f);
}

static void bar_text_and_json(void **state)
{
	struct audit_bar_opts o = { .iotlb_entries = AUDIT_IOTLB_ENTRIES };
	struct fixture_db f;
	char *out;

	fixture_db_open(&f, "audit");
	out = rendered(f.db, RENDER_TEXT, 1, true, &o);
	assert_non_null(strstr(out, "  1  0000:01:00.0  GPU BAR1"));
	assert_non_null(strstr(out, "\n  #1 covered by 128 entries of 2 MiB: more than the 64-entry"
				    " IOTLB; no page size of this IOMMU would take fewer\n"));
	assert_non_null(
		strstr(out, "\n  #2 covered by 1 entry of 1 GiB: fits the 64-entry IOTLB\n"));
	assert_non_null(strstr(out,
			       "\n  #3 covered by 512 entries of 2 MiB: more than the 64-entry"
			       " IOTLB; at 1 GiB pages 1 entry would cover it\n     1 GiB pages"
			       " need paddr 1 GiB-aligned: place the buffer at BAR offset 0 or"
			       " 1 GiB\n"));
	assert_non_null(strstr(out, "\n  #4 covered by 2 entries (1 GiB x 1 + 2 MiB x 1): fits the"
				    " 64-entry IOTLB\n"));
	assert_non_null(strstr(out, "4 windows take 1027 entries: more than the 64-entry IOTLB;"
				    " aligned to the largest pages, 5 entries\n"));
	free(out);
	o.iotlb_entries = 1024;
	snprintf(o.device, sizeof(o.device), "0000:00:05.0");
	out = rendered(f.db, RENDER_JSON, 1, true, &o);
	assert_null(strstr(out, "0000:01:00.0"));
	assert_non_null(strstr(out, "\"iotlb_entries\": 1024"));
	assert_non_null(strstr(out, "\"conclusion\": \"covered by 512 entries of 2 MiB: fits the"
				    " 1024-entry IOTLB; at 1 GiB pages 1 entry would cover it\""));
	assert_non_null(strstr(out,
			       "\"conclusion\": \"4 windows take 1027 entries: more than the"
			       " 1024-entry IOTLB; aligned to the largest pages, 5 entries\""));
	free(out);
	o.iotlb_entries = AUDIT_IOTLB_ENTRIES;
	out = rendered(f.db, RENDER_TEXT, 2, true, &o);
	assert_non_null(strstr(out,
			       "#1 covered by 262144 entries of 4 KiB: more than the 64-entry"
			       " IOTLB; at 1 GiB pages 1 entry would cover it\n     the domain's"
			       " page sizes stop at 4 KiB where the IOMMU has 1 GiB pages: boot"
			       " without intel_iommu=sp_off\n"));
	free(out);
	o.device[0] = '\0';
	out = rendered(f.db, RENDER_TEXT, 3, true, &o);
	assert_non_null(strstr(out, "  (none)\n  no PCI BARs recorded in this session"));
	free(out);
	out = rendered(f.db, RENDER_TEXT, 4, true, &o);
	assert_non_null(strstr(out, "  (none)\n  no mapping into a PCI BAR in this session"));
	free(out);
	fixture_db_close(&f);
}

/* Text lists the first 20 windows and every one that aligning would shrink, then says how many
 * it left out; JSON lists them all. 24 more 2 MiB windows of the GPU's BAR1 (one entry each). */
static void bar_text_leaves_out_windows(void **state)
{
	struct audit_bar_opts o = { .iotlb_entries = AUDIT_IOTLB_ENTRIES };
	struct fixture_db f;
	char *out, sql[256];

	fixture_db_open(&f, "audit");
	for (int i = 0; i < 24; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO maps(map_id, session_id, ts_ns, domain_ptr,"
			 " iova, paddr, size_bytes) VALUES (%d, 1, %d, 0xffff888100001000,"
			 " 0x%x, 0x%llx, 0x200000)",
			 100 + i, 3000 + i, 0x20000000 + i * 0x200000,
			 0x4800000000ull + i * 0x200000ull);
		assert_int_equal(itdb_exec(f.db, sql, "test"), 0);
	}
	assert_int_equal(lifetimes_ensure(f.db, 1), 0);
	out = rendered(f.db, RENDER_TEXT, 1, true, &o);
	/* 29 windows of session 1, the 24 new ones first (BAR1 at offset 0 up): #1-#20, and #27
	 * and #29 (the BAR2 windows aligning shrinks) */
	assert_non_null(strstr(out, "\n  20  0000:01:00.0  GPU BAR1"));
	assert_null(strstr(out, "\n  21  "));
	assert_non_null(strstr(out, "\n  27  0000:00:05.0  BAR2"));
	assert_non_null(strstr(out, "\n  #27 covered by 512 entries"));
	assert_non_null(strstr(out, "\n  29  0000:00:05.0  BAR2"));
	assert_null(strstr(out, "\n  28  "));
	assert_non_null(strstr(out,
			       "\n  7 more windows that aligning would not shrink, or whose"
			       " pages were not recorded: --json or --csv lists every window\n"));
	free(out);
	out = rendered(f.db, RENDER_JSON, 1, true, &o);
	assert_non_null(strstr(out, "\"bar_offset_bytes\": 46137344")); /* the 24th: 44 MiB */
	free(out);
	fixture_db_close(&f);
}

/* Rows no kernel writes, or that a broken capture could: zero and odd sizes, unaligned and top
 * addresses, a domain without page sizes, BARs of size 0, of 4 EiB and at the top of the address
 * space, driver rows of no known map. */
static void odd_rows(void **state)
{
	struct audit_bar_opts o = { .iotlb_entries = 1 };
	struct fixture_db f;
	char *out;

	fixture_db_open(&f, "audit");
	assert_int_equal(itdb_exec(f.db,
				   "INSERT INTO domains(session_id, domain_ptr, domain_type, pgsize_bitmap)"
				   " VALUES (4, 0xffff888100006000, NULL, 0);"
				   "INSERT INTO bars(session_id, bdf, bar_index, start_addr, size_bytes, is_64bit,"
				   " prefetchable) VALUES (4, '0000:00:06.0', 0, 0x190000000, 0, 0, 0),"
				   " (4, '0000:00:06.0', 2, 0x4000000000000000, 0x3fffffffffffffff, 1, 1),"
				   " (4, '0000:00:06.0', 4, -4096, 4096, 1, 1);"
				   "INSERT INTO maps(map_id, session_id, ts_ns, domain_ptr, iova, paddr, size_bytes)"
				   " VALUES (50, 4, 2000, 0xffff888100006000, 0x1000, 0x2000, 0),"
				   " (51, 4, 2100, 0xffff888100006000, 0x1800, 0x2800, 100),"
				   " (52, 4, 2200, NULL, -4096, 0x180000000, 4096),"
				   " (53, 4, 2300, NULL, -9223372036854775808, 0x7ffffffffffff000, 4096),"
				   " (54, 4, 2400, 0xffff888100006000, 0x40000000, 0x190000000, 0x40000000);"
				   "INSERT INTO driver_maps(session_id, op, map_id, iova, paddr, pgsize_bytes, pgcount,"
				   " source) VALUES (4, 'map', 52, -4096, 0x180000000, 4096, 1, 'observed'),"
				   " (4, 'map', NULL, 0x5000, 0x6000, 4096, 1, 'observed'),"
				   " (4, 'unmap', NULL, 0x5000, NULL, 4096, 1, 'observed');",
				   "test"),
			 0);
	/* rows added after the session ended: summarized again, as opening the file does */
	assert_int_equal(lifetimes_ensure(f.db, 4), 0);
	assert_string_equal(sql_rows(f.db,
				     "SELECT map_id, iova_align_bytes, pages, reason,"
				     " bar_device FROM audit_align_maps_view WHERE map_id >= 50"
				     " ORDER BY map_id"),
			    "50|4096|NULL|NULL|NULL;"
			    "51|2048|NULL|NULL|NULL;"
			    "52|4096|4 KiB x 1|length|0000:00:05.0;"
			    "53|4096|NULL|length|NULL;"
			    /* in the BAR of session 4; the unit's (AMD) page sizes */
			    "54|1073741824|NULL|paddr misaligned|0000:00:05.0;");
	assert_string_equal(sql_rows(f.db, "SELECT hw_source, expected_page_bytes, fix"
					   " FROM audit_align_maps_view WHERE map_id = 54"),
			    "iommu|268435456|1 GiB pages need paddr 1 GiB-aligned: place the"
			    " buffer at BAR offset 0 or 1 GiB;");
	out = rendered(f.db, RENDER_TEXT, 4, false, NULL);
	assert_non_null(strstr(out, "bytes mapped with the largest page possible"));
	free(out);
	out = rendered(f.db, RENDER_JSON, 4, true, &o);
	assert_non_null(strstr(out, "\"conclusion\": \"covered by 1 entry of 4 KiB: fits the"
				    " 1-entry IOTLB\""));
	free(out);
	fixture_db_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(align_groups),
		cmocka_unit_test(align_fixes),
		cmocka_unit_test(align_other_sessions),
		cmocka_unit_test(align_summary),
		cmocka_unit_test(bar_windows),
		cmocka_unit_test(bar_window_remapped),
		cmocka_unit_test(align_text),
		cmocka_unit_test(bar_text_and_json),
		cmocka_unit_test(bar_text_leaves_out_windows),
		cmocka_unit_test(odd_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
