/* The trace.dat importer. This machine has no IOMMU, so no kernel writes iommu records here:
 * the records are laid out by hand in ring-buffer pages as the kernel writes them, and trace-cmd
 * itself turns those pages and the formats of tests/fixtures/tracefs into a real trace.dat
 * (`trace-cmd restore`), which is then read back value for value, and also through
 * `trace-cmd report` and the text importer. As root, a trace.dat extracted by trace-cmd from
 * this kernel's ring buffer is read too (no IOMMU events, the others skipped). Skips without
 * trace-cmd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include "cli/commands.h"
#include "common/db.h"
#include "tracer/import_text.h"
#include "tracer/import_tracedat.h"

#define FIXTURE_TRACEFS "tests/fixtures/tracefs"
#define PAGE 4096
#define MISSED_EVENTS (1ull << 31)
#define MISSED_STORED (1ull << 30)
#define T0 1000000000ull

enum {
	ID_PRINT = 5,
	ID_FAULT = 2178,
	ID_UNMAP,
	ID_MAP,
	ID_ATTACH,
	ID_GROUP_REMOVE,
	ID_GROUP_ADD,
	ID_QI = 2190,
	ID_FLUSH,
	ID_FLUSH_NP,
};

/* One ring-buffer sub-buffer: u64 timestamp, u64 commit (data bytes | missed flags), events of
 * a 32-bit header (type_len = data words, 27-bit time delta) and their data. */
struct page {
	unsigned char b[PAGE];
	size_t used;
	uint64_t last_ts;
};

/* A raw event record being built: the common header, fields, __strings at the end. */
struct rec {
	unsigned char d[112];
	size_t size;
};

static void put(unsigned char *b, size_t off, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++)
		b[off + i] = (unsigned char)(v >> (8 * i));
}

static struct rec rec_new(int id, int pid, size_t fixed)
{
	struct rec r = { .size = fixed };

	put(r.d, 0, (uint64_t)id, 2);
	put(r.d, 4, (uint64_t)pid, 4);
	return r;
}

static void rec_string(struct rec *r, size_t loc_off, const char *s)
{
	size_t len = strlen(s) + 1;

	memcpy(r->d + r->size, s, len);
	put(r->d, loc_off, (uint64_t)(len << 16 | r->size), 4);
	r->size += len;
}

static void page_start(struct page *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	put(p->b, 0, ts, 8);
	p->used = 16;
	p->last_ts = ts;
}

static void page_add(struct page *p, uint64_t ts, const struct rec *r)
{
	size_t padded = (r->size + 3) & ~(size_t)3;
	uint64_t delta = ts - p->last_ts;

	assert_true(delta < (1u << 27) && padded / 4 <= 28 && p->used + 4 + padded < PAGE - 8);
	put(p->b, p->used, (padded / 4) | delta << 5, 4);
	memcpy(p->b + p->used + 4, r->d, r->size);
	p->used += 4 + padded;
	p->last_ts = ts;
}

/* missed: 0 none, > 0 stored after the data, UINT64_MAX flagged without a count */
static void page_write(struct page *p, FILE *f, uint64_t missed)
{
	uint64_t commit = p->used - 16;

	if (missed == UINT64_MAX) {
		commit |= MISSED_EVENTS;
	} else if (missed) {
		put(p->b, p->used, missed, 8);
		commit |= MISSED_EVENTS | MISSED_STORED;
	}
	put(p->b, 8, commit, 8);
	assert_int_equal(fwrite(p->b, 1, PAGE, f), PAGE);
}

static struct rec map_rec(int pid, uint64_t iova, uint64_t paddr, uint64_t size)
{
	struct rec r = rec_new(ID_MAP, pid, 32);

	put(r.d, 8, iova, 8);
	put(r.d, 16, paddr, 8);
	put(r.d, 24, size, 8);
	return r;
}

static struct rec flush_rec(int id, uint64_t start, uint64_t end)
{
	struct rec r = rec_new(id, 5000, 64);

	rec_string(&r, 8, "dmar0");
	rec_string(&r, 12, "0000:00:04.0");
	put(r.d, 16, 0, 2);
	put(r.d, 18, 1, 2);
	put(r.d, 20, 0, 4);
	put(r.d, 24, start, 8);
	put(r.d, 32, end, 8);
	put(r.d, 40, start, 8);
	put(r.d, 48, (end + 1 - start) >> 12, 8);
	put(r.d, 56, 4, 8);
	return r;
}

/* CPU 0: every IOMMU event and an ftrace:print. CPU 1: a page after 7 lost events, then a page
 * after an unknown number of them. Timestamps interleave across the CPUs. */
static void write_cpu_files(const char *dir)
{
	struct page p;
	struct rec r;
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu0.raw", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	page_start(&p, T0);
	r = map_rec(4242, 0x40000000, 0x480f600000ull, 1ull << 30);
	page_add(&p, T0 + 100, &r);
	r = rec_new(ID_PRINT, 4242, 16);
	memcpy(r.d + 16, "marker\n", 8);
	r.size = 24;
	page_add(&p, T0 + 150, &r);
	r = rec_new(ID_UNMAP, 4242, 32);
	put(r.d, 8, 0x40000000, 8);
	put(r.d, 16, 1ull << 30, 8);
	put(r.d, 24, 1ull << 30, 8);
	page_add(&p, T0 + 300, &r);
	r = rec_new(ID_ATTACH, 4242, 12);
	rec_string(&r, 8, "0000:00:04.0");
	page_add(&p, T0 + 400, &r);
	r = rec_new(ID_GROUP_ADD, 1, 16);
	put(r.d, 8, 7, 4);
	rec_string(&r, 12, "0000:00:04.0");
	page_add(&p, T0 + 500, &r);
	r = rec_new(ID_GROUP_REMOVE, 1, 16);
	put(r.d, 8, 7, 4);
	rec_string(&r, 12, "0000:00:04.0");
	page_add(&p, T0 + 600, &r);
	r = rec_new(ID_FAULT, 0, 28);
	rec_string(&r, 8, "0000:00:04.0");
	rec_string(&r, 12, "nvme");
	put(r.d, 16, 0xdeadb000, 8);
	put(r.d, 24, 0x20, 4);
	page_add(&p, T0 + 700, &r);
	r = rec_new(ID_QI, 55, 44);
	put(r.d, 8, 0x10012, 8);
	put(r.d, 16, 0x40000006, 8);
	rec_string(&r, 40, "dmar0");
	page_add(&p, T0 + 800, &r);
	r = flush_rec(ID_FLUSH, 0x40000000, 0x4000ffff);
	page_add(&p, T0 + 900, &r);
	page_write(&p, f, 0);
	fclose(f);

	snprintf(path, sizeof(path), "%s/cpu1.raw", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	page_start(&p, T0 + 200);
	r = map_rec(4242, 0x80000000, 0x5000, 4096);
	page_add(&p, T0 + 250, &r);
	page_write(&p, f, 7);
	page_start(&p, T0 + 1000);
	r = flush_rec(ID_FLUSH_NP, 0x80000000, 0x80000fff);
	page_add(&p, T0 + 1000, &r);
	page_write(&p, f, UINT64_MAX);
	fclose(f);
}

static void run(const char *cmd)
{
	if (system(cmd))
		fail_msg("failed: %s", cmd);
}

static char tmpdir[] = "/tmp/iommutrace-test-dat-XXXXXX";
static char repo[1024];

/* tmpdir/trace.dat from the fixture formats and the pages above, written by trace-cmd. */
static int make_tracedat(void **state)
{
	char cmd[2048];

	write_cpu_files(tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && touch kallsyms && trace-cmd restore -c -t '%s/" FIXTURE_TRACEFS "'"
		 " -k kallsyms -o head.dat >log 2>&1 && trace-cmd restore -i head.dat"
		 " -o trace.dat cpu0.raw cpu1.raw >>log 2>&1"
		 " && trace-cmd convert --file-version 6 -i trace.dat -o v6.dat >>log 2>&1"
		 " && trace-cmd convert --compression any -i trace.dat -o compressed.dat >>log 2>&1"
		 " || { cat log; false; }",
		 tmpdir, repo);
	run(cmd);
	return 0;
}

struct collected {
	struct it_event events[32];
	size_t nevents;
	struct {
		uint32_t cpu;
		uint64_t lost;
		const char *reason;
	} losses[8];
	size_t nlosses;
};

static int collect_event(const struct it_event *e, void *ctx)
{
	struct collected *c = ctx;

	assert_true(c->nevents < 32);
	c->events[c->nevents++] = *e;
	return 0;
}

static int collect_loss(uint32_t cpu, uint64_t lost, const char *reason, void *ctx)
{
	struct collected *c = ctx;

	assert_true(c->nlosses < 8);
	c->losses[c->nlosses].cpu = cpu;
	c->losses[c->nlosses].lost = lost;
	c->losses[c->nlosses++].reason = reason;
	return 0;
}

static void expect_event(const struct collected *c, size_t i, uint32_t kind, uint64_t ts,
			 uint32_t cpu, uint32_t tid, const char *comm)
{
	const struct it_event *e = &c->events[i];

	assert_int_equal(e->h.kind, kind);
	assert_int_equal(e->h.ts_ns, ts);
	assert_int_equal(e->h.cpu, cpu);
	assert_int_equal(e->h.tid, tid);
	assert_int_equal(e->h.pid, tid);
	assert_string_equal(e->h.comm, comm);
	assert_int_equal(e->h.probe_id, 0);
}

/* The payloads the pages hold, in timestamp order, whichever path read them. */
static void expect_crafted_events(const struct collected *c)
{
	assert_int_equal(c->nevents, 10);
	expect_event(c, 0, IT_EV_MAP, T0 + 100, 0, 4242, "qemu-system-x86");
	assert_int_equal(c->events[0].map.iova, 0x40000000);
	assert_int_equal(c->events[0].map.paddr, 0x480f600000ull);
	assert_int_equal(c->events[0].map.size, 1ull << 30);
	expect_event(c, 1, IT_EV_MAP, T0 + 250, 1, 4242, "qemu-system-x86");
	assert_int_equal(c->events[1].map.iova, 0x80000000);
	assert_int_equal(c->events[1].map.paddr, 0x5000);
	assert_int_equal(c->events[1].map.size, 4096);
	expect_event(c, 2, IT_EV_UNMAP, T0 + 300, 0, 4242, "qemu-system-x86");
	assert_int_equal(c->events[2].unmap.unmapped_size, 1ull << 30);
	expect_event(c, 3, IT_EV_ATTACH, T0 + 400, 0, 4242, "qemu-system-x86");
	assert_string_equal(c->events[3].device.dev_name, "0000:00:04.0");
	assert_int_equal(c->events[3].device.group_id, -1);
	expect_event(c, 4, IT_EV_GROUP_ADD, T0 + 500, 0, 1, "<...>");
	assert_int_equal(c->events[4].device.group_id, 7);
	expect_event(c, 5, IT_EV_GROUP_REMOVE, T0 + 600, 0, 1, "<...>");
	assert_string_equal(c->events[5].device.dev_name, "0000:00:04.0");
	expect_event(c, 6, IT_EV_FAULT, T0 + 700, 0, 0, "<idle>");
	assert_string_equal(c->events[6].fault.dev_name, "0000:00:04.0");
	assert_int_equal(c->events[6].fault.iova, 0xdeadb000);
	assert_int_equal(c->events[6].fault.flags, 0x20);
	expect_event(c, 7, IT_EV_QI_SUBMIT, T0 + 800, 0, 55, "kworker/2:1");
	assert_int_equal(c->events[7].qi.qw[0], 0x10012);
	assert_int_equal(c->events[7].qi.qw[1], 0x40000006);
	expect_event(c, 8, IT_EV_CACHE_TAG_FLUSH, T0 + 900, 0, 5000, "<...>");
	assert_int_equal(c->events[8].flush.np, 0);
	assert_int_equal(c->events[8].flush.domain_id, 1);
	assert_int_equal(c->events[8].flush.end, 0x4000ffff);
	assert_int_equal(c->events[8].flush.pages, 16);
	assert_int_equal(c->events[8].flush.mask, 4);
	assert_string_equal(c->events[8].flush.dev_name, "0000:00:04.0");
	expect_event(c, 9, IT_EV_CACHE_TAG_FLUSH, T0 + 1000, 1, 5000, "<...>");
	assert_int_equal(c->events[9].flush.np, 1);
	assert_int_equal(c->events[9].flush.start, 0x80000000);
	assert_int_equal(c->events[9].flush.pages, 1);
}

/* The file as trace-cmd restore writes it (version 7), converted to version 6, and compressed. */
static void reads_crafted_tracedat(void **state)
{
	static const char *const files[] = { "trace.dat", "v6.dat", "compressed.dat" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct collected *c = calloc(1, sizeof(*c));
		struct ftrace_sink sink = { collect_event, collect_loss, c };
		struct ftrace_stats st = { 0 };
		struct tracedat_info info;
		char path[512], err[512];

		snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
		if (import_tracedat(path, &sink, &st, &info, err, sizeof(err)))
			fail_msg("%s", err);
		expect_crafted_events(c);
		assert_int_equal(ftrace_stats_total(&st), 10);
		assert_int_equal(st.events[IT_EV_MAP], 2);
		assert_int_equal(st.events[IT_EV_CACHE_TAG_FLUSH], 2);
		assert_int_equal(st.skipped, 1);
		assert_int_equal(st.malformed, 0);
		assert_int_equal(st.lost, 8);
		assert_int_equal(c->nlosses, 2);
		assert_int_equal(c->losses[0].cpu, 1);
		assert_int_equal(c->losses[0].lost, 7);
		assert_string_equal(c->losses[0].reason, "trace.dat-missed");
		assert_int_equal(c->losses[1].cpu, 1);
		assert_int_equal(c->losses[1].lost, 1);
		assert_string_equal(c->losses[1].reason, "trace.dat-missed-unknown");
		assert_int_equal(info.buffers, 1);
		free(c);
	}
}

/* trace-cmd's own rendering of the same file, read by the text importer, gives the same
 * events: the text parser agrees with libtraceevent's printing of the kernel formats. */
static void report_text_matches(void **state)
{
	struct collected *c = calloc(1, sizeof(*c));
	struct ftrace_sink sink = { collect_event, collect_loss, c };
	struct ftrace_stats st = { 0 };
	char cmd[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "trace-cmd report -t -i %s/trace.dat 2>/dev/null", tmpdir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(import_text_stream(f, "trace-cmd report", &sink, &st), 0);
	assert_int_equal(pclose(f), 0);
	expect_crafted_events(c);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.lost, 8);
	assert_int_equal(c->nlosses, 2);
	assert_int_equal(c->losses[0].lost, 7);
	assert_string_equal(c->losses[0].reason, "ftrace-lost");
	assert_int_equal(c->losses[1].lost, 1);
	assert_string_equal(c->losses[1].reason, "ftrace-lost-unknown");
	free(c);
}

static void refuses_other_and_damaged_files(void **state)
{
	struct collected *c = calloc(1, sizeof(*c));
	struct ftrace_sink sink = { collect_event, collect_loss, c };
	struct ftrace_stats st = { 0 };
	struct tracedat_info info;
	char path[512], cut[512], cmd[1200], err[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/trace.dat", tmpdir);
	assert_int_equal(import_tracedat("/nonexistent/trace.dat", &sink, &st, &info, err,
					 sizeof(err)),
			 -1);
	assert_string_equal(err, "cannot open /nonexistent/trace.dat: No such file or directory");
	assert_int_equal(import_tracedat(FIXTURE_TRACEFS "/README", &sink, &st, &info, err,
					 sizeof(err)),
			 -1);
	assert_string_equal(err, FIXTURE_TRACEFS "/README is not a trace-cmd trace.dat file (its "
						 "first bytes are not the trace.dat magic)");
	/* the magic and a little more, then nothing */
	snprintf(cut, sizeof(cut), "%s/cut.dat", tmpdir);
	snprintf(cmd, sizeof(cmd), "head -c 100 %s > %s", path, cut);
	run(cmd);
	assert_int_equal(import_tracedat(cut, &sink, &st, &info, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot read this trace.dat (truncated or corrupt"));
	/* headers whole, data cut in the middle of a page: version 7 keeps its options at the end,
	 * version 6 before the data */
	assert_int_equal(stat(path, &sb), 0);
	snprintf(cmd, sizeof(cmd), "head -c %lld %s > %s", (long long)sb.st_size - 2 * PAGE - 100,
		 path, cut);
	run(cmd);
	assert_int_equal(import_tracedat(cut, &sink, &st, &info, err, sizeof(err)), -1);
	snprintf(path, sizeof(path), "%s/v6.dat", tmpdir);
	assert_int_equal(stat(path, &sb), 0);
	snprintf(cmd, sizeof(cmd), "head -c %lld %s > %s", (long long)sb.st_size - PAGE - 100, path,
		 cut);
	run(cmd);
	assert_int_equal(import_tracedat(cut, &sink, &st, &info, err, sizeof(err)), -1);
	assert_string_equal(strchr(err, ':'), ": cannot read the data of this trace.dat (truncated"
					      " or corrupt)");
	assert_int_equal(c->nevents, 0);
	free(c);
}

/* Files on which libtracecmd 1.3 and libtraceevent 1.7 crash (a page size of 0; a broken field
 * line, a '%' among the print fmt arguments of an event format): refused in one line, nothing
 * delivered, and this process goes on. */
static void survives_crashing_files(void **state)
{
	static const struct {
		const char *file, *signal;
	} cases[] = {
		{ "page-size-0.dat", "Floating point exception" },
		{ "iommu-field-line-1932-00.dat", "Segmentation fault" },
		{ "iommu-print-fmt-percent-1497-25.dat", "Floating point exception" },
	};
	struct collected *c = calloc(1, sizeof(*c));
	struct ftrace_sink sink = { collect_event, collect_loss, c };
	struct ftrace_stats st = { 0 };
	struct tracedat_info info;
	char path[512], want[1024], err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), "tests/fuzz/regressions/tracedat/%s", cases[i].file);
		assert_int_equal(import_tracedat(path, &sink, &st, &info, err, sizeof(err)), -1);
		snprintf(want, sizeof(want),
			 "%s: this trace.dat is corrupt: libtracecmd crashed "
			 "reading its header, event formats or data (%s); record the trace again",
			 path, cases[i].signal);
		assert_string_equal(err, want);
	}
	assert_int_equal(c->nevents + c->nlosses, 0);
	assert_int_equal(ftrace_stats_total(&st) + st.skipped + st.malformed + st.lost, 0);
	free(c);
}

/* `iommutrace import` of the crafted file (format detected by its magic) into a database. */
static void cli_imports_tracedat(void **state)
{
	char dat[512], db_path[600], err[256];
	char *argv[] = { "import", dat, "-o", db_path, NULL };
	sqlite3 *db;

	snprintf(dat, sizeof(dat), "%s/trace.dat", tmpdir);
	snprintf(db_path, sizeof(db_path), "%s/out.db", tmpdir);
	optind = 1;
	assert_int_equal(cmd_import(4, argv), 0);
	db = itdb_open(db_path, ITDB_READ, NULL, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db,
				     "SELECT kind, capture, source_path LIKE"
				     " '/tmp/iommutrace-test-dat-%/trace.dat', complete, end_reason,"
				     " events_total, events_lost, end_mono_ns FROM sessions"),
			    "import|trace.dat|1|1|end-of-input|10|8|1000001000;");
	assert_string_equal(sql_rows(db,
				     "SELECT ts_ns, cpu, pid, tid, comm, iova, paddr, size_bytes"
				     " FROM maps ORDER BY ts_ns"),
			    "1000000100|0|4242|4242|qemu-system-x86|1073741824|309495595008|"
			    "1073741824;"
			    "1000000250|1|4242|4242|qemu-system-x86|2147483648|20480|4096;");
	/* the unmap takes the 1 GiB mapping away: its pages, derived from the live mapping */
	assert_string_equal(sql_rows(db, "SELECT op, pgsize_bytes, pgcount, source FROM driver_maps"
					 " ORDER BY op, map_id, pgsize_bytes"),
			    "map|2097152|512|derived;map|4096|1|derived;unmap|2097152|512|derived;");
	assert_string_equal(sql_rows(db,
				     "SELECT event, device, group_id FROM attaches ORDER BY ts_ns"),
			    "attach|0000:00:04.0|NULL;group_add|0000:00:04.0|7;"
			    "group_remove|0000:00:04.0|7;");
	assert_string_equal(sql_rows(db, "SELECT event, device, domain_id, pages FROM flushes"
					 " ORDER BY ts_ns"),
			    "qi_submit|NULL|1|NULL;cache_tag_flush_range|0000:00:04.0|1|16;"
			    "cache_tag_flush_range_np|0000:00:04.0|1|1;");
	assert_string_equal(sql_rows(db,
				     "SELECT cpu, event, lost, reason FROM losses ORDER BY lost"),
			    "1|any|1|trace.dat-missed-unknown;1|any|7|trace.dat-missed;");
	itdb_close(db);
}

/* A trace.dat of this kernel's ring buffer: events recorded in a tracefs instance of our own
 * and extracted by `trace-cmd extract` (`trace-cmd record` also writes the function tracer's
 * sysctl, which some kernels refuse). No IOMMU event fires on a machine without an IOMMU, so
 * every record is skipped. The extract is tried up to three times: libtracecmd refuses a
 * /proc/kallsyms whose size changed while it read it ("error in size of file"), which another
 * process loading or unloading BPF programs at that moment causes. */
static void reads_extracted_tracedat(void **state)
{
	struct collected *c = calloc(1, sizeof(*c));
	struct ftrace_sink sink = { collect_event, collect_loss, c };
	struct ftrace_stats st = { 0 };
	struct tracedat_info info;
	char path[512], cmd[2048], err[512], inst[64];

	if (geteuid()) {
		printf("SKIP: recording into a tracefs instance needs root\n");
		free(c);
		skip();
	}
	snprintf(inst, sizeof(inst), "iommutrace-test-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/extracted.dat", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "t=/sys/kernel/tracing; [ -d $t/instances ] || mount -t tracefs nodev $t || exit 1;"
		 " i=$t/instances/%s; mkdir $i && echo 1 > $i/events/iommu/enable &&"
		 " echo 1 > $i/events/sched/sched_process_exec/enable && /bin/true &&"
		 " echo 0 > $i/events/enable && for try in 1 2 3; do"
		 " trace-cmd extract -B %s -o %s >%s/extract.log 2>&1 && break; done;"
		 " r=$?; [ -d $i ] && rmdir $i; [ $r = 0 ] || cat %s/extract.log; exit $r",
		 inst, inst, path, tmpdir, tmpdir);
	run(cmd);
	if (import_tracedat(path, &sink, &st, &info, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(ftrace_stats_total(&st), 0);
	assert_int_equal(c->nevents, 0);
	/* at least /bin/true's exec */
	assert_true(st.skipped >= 1);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(info.buffers, 2);
	assert_true(info.clock[0]);
	free(c);
}

static int cleanup(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_crafted_tracedat),
		cmocka_unit_test(report_text_matches),
		cmocka_unit_test(refuses_other_and_damaged_files),
		cmocka_unit_test(survives_crashing_files),
		cmocka_unit_test(cli_imports_tracedat),
		cmocka_unit_test(reads_extracted_tracedat),
	};
	if (system("command -v trace-cmd >/dev/null")) {
		printf("SKIP: trace-cmd is not installed (apt-get install trace-cmd): it writes the "
		       "trace.dat files these tests read\n");
		return 77;
	}
	if (access(FIXTURE_TRACEFS "/events/header_page", R_OK) || !getcwd(repo, sizeof(repo))) {
		printf("test_import_tracedat: run from the repository root\n");
		return 1;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests_name("trace.dat import", tests, make_tracedat, cleanup);
}
