/* The ftrace text importer: every IOMMU event in the kernel's printed forms (6.1 to 7.x, and map
 * and unmap before 5.13), the column variants (flags, TGID, trace-cmd report), comms with spaces,
 * dashes and brackets, malformed lines, and `iommutrace import` of the checked-in fixture. */
#include <fcntl.h>
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
#include "cli/commands.h"
#include "common/db.h"
#include "tracer/import_text.h"

#define FIXTURE "tests/fixtures/ftrace_iommu.txt"

static struct text_line parse_event(const char *line, uint32_t kind)
{
	struct text_line tl;

	assert_int_equal(import_text_parse_line(line, &tl), TEXT_LINE_EVENT);
	assert_int_equal(tl.event.h.kind, kind);
	assert_int_equal(tl.event.h.probe_id, 0);
	assert_int_equal(tl.event.h.flags, 0);
	return tl;
}

static void expect_header(const struct text_line *tl, uint64_t ts_ns, uint32_t cpu, uint32_t pid,
			  uint32_t tid, const char *comm)
{
	assert_int_equal(tl->event.h.ts_ns, ts_ns);
	assert_int_equal(tl->event.h.cpu, cpu);
	assert_int_equal(tl->event.h.pid, pid);
	assert_int_equal(tl->event.h.tid, tid);
	assert_string_equal(tl->event.h.comm, comm);
}

static void map_6x(void **state)
{
	struct text_line tl =
		parse_event(" qemu-system-x86-4242    [001] .....   512.000001: map: IOMMU: iova=0x0000000040000000"
			    " - 0x0000000080000000 paddr=0x0000004800000000 size=1073741824",
			    IT_EV_MAP);

	expect_header(&tl, 512000001000ull, 1, 4242, 4242, "qemu-system-x86");
	assert_int_equal(tl.event.map.iova, 0x40000000);
	assert_int_equal(tl.event.map.paddr, 0x4800000000ull);
	assert_int_equal(tl.event.map.size, 1073741824);
	assert_int_equal(tl.event.map.domain, 0);
}

/* before 5.13: no end address, and four flag characters */
static void map_before_5_13(void **state)
{
	struct text_line tl =
		parse_event("            qemu-3333  [000] ....  1000.000000: map: IOMMU: iova=0x0000000000100000"
			    " paddr=0x0000000123456000 size=8192",
			    IT_EV_MAP);

	expect_header(&tl, 1000000000000ull, 0, 3333, 3333, "qemu");
	assert_int_equal(tl.event.map.iova, 0x100000);
	assert_int_equal(tl.event.map.paddr, 0x123456000ull);
	assert_int_equal(tl.event.map.size, 8192);
}

static void unmap_both_forms(void **state)
{
	struct text_line tl =
		parse_event("    kworker/u8:2-87      [000] d..1.   512.000100: unmap: IOMMU: iova=0x00000000fee00000"
			    " - 0x00000000fee01000 size=4096 unmapped_size=4096",
			    IT_EV_UNMAP);

	expect_header(&tl, 512000100000ull, 0, 87, 87, "kworker/u8:2");
	assert_int_equal(tl.event.unmap.iova, 0xfee00000);
	assert_int_equal(tl.event.unmap.size, 4096);
	assert_int_equal(tl.event.unmap.unmapped_size, 4096);

	tl = parse_event("  qemu-3333  [000] ....  1000.000001: unmap: IOMMU: iova=0x0000000000100000"
			 " size=8192 unmapped_size=0",
			 IT_EV_UNMAP);
	assert_int_equal(tl.event.unmap.iova, 0x100000);
	assert_int_equal(tl.event.unmap.size, 8192);
	assert_int_equal(tl.event.unmap.unmapped_size, 0);
}

static void attach_and_groups(void **state)
{
	struct text_line tl =
		parse_event("  vfio nvme test-3001    [003] .....    12.500000: attach_device_to_domain:"
			    " IOMMU: device=0000:00:04.0",
			    IT_EV_ATTACH);

	expect_header(&tl, 12500000000ull, 3, 3001, 3001, "vfio nvme test");
	assert_string_equal(tl.event.device.dev_name, "0000:00:04.0");
	assert_int_equal(tl.event.device.group_id, -1);
	assert_int_equal(tl.event.device.domain, 0);

	tl = parse_event("       swapper/0-1       [000] .....     0.912345: add_device_to_group:"
			 " IOMMU: groupID=7 device=0000:00:04.0",
			 IT_EV_GROUP_ADD);
	expect_header(&tl, 912345000ull, 0, 1, 1, "swapper/0");
	assert_int_equal(tl.event.device.group_id, 7);
	assert_string_equal(tl.event.device.dev_name, "0000:00:04.0");

	tl = parse_event("            bash-900     [001] .....    99.000001: remove_device_from_group:"
			 " IOMMU: groupID=12 device=0000:65:00.1",
			 IT_EV_GROUP_REMOVE);
	assert_int_equal(tl.event.device.group_id, 12);
	assert_string_equal(tl.event.device.dev_name, "0000:65:00.1");
}

static void fault_with_and_without_driver(void **state)
{
	struct text_line tl =
		parse_event("          <idle>-0       [002] d.h1.   200.123456: io_page_fault: IOMMU:nvme"
			    " 0000:00:04.0 iova=0x00000000deadb000 flags=0x0020",
			    IT_EV_FAULT);

	expect_header(&tl, 200123456000ull, 2, 0, 0, "<idle>");
	assert_string_equal(tl.event.fault.dev_name, "0000:00:04.0");
	assert_int_equal(tl.event.fault.iova, 0xdeadb000);
	assert_int_equal(tl.event.fault.flags, 0x20);

	/* a device without a driver prints an empty driver name; negative flags in full */
	tl = parse_event("          <idle>-0       [002] d.h1.   200.123457: io_page_fault: IOMMU:"
			 " 0000:00:05.0 iova=0x0000000000001000 flags=0xffffffff",
			 IT_EV_FAULT);
	assert_string_equal(tl.event.fault.dev_name, "0000:00:05.0");
	assert_int_equal(tl.event.fault.iova, 0x1000);
	assert_int_equal(tl.event.fault.flags, -1);
}

static void qi_submit(void **state)
{
	struct text_line tl =
		parse_event("     kworker/2:1-55      [002] .....   300.000000: qi_submit: iotlb_inv dmar0:"
			    " 0x10012 0x40000006 0x0 0x0",
			    IT_EV_QI_SUBMIT);

	expect_header(&tl, 300000000000ull, 2, 55, 55, "kworker/2:1");
	assert_int_equal(tl.event.qi.qw[0], 0x10012);
	assert_int_equal(tl.event.qi.qw[1], 0x40000006);
	assert_int_equal(tl.event.qi.qw[2], 0);
	assert_int_equal(tl.event.qi.qw[3], 0);

	/* a descriptor type outside the kernel's symbol table prints as a number */
	tl = parse_event("  kworker/2:1-55  [002] .....   300.000001: qi_submit: 0xa dmar1:"
			 " 0x1a 0x1 0x2 0xffffffffffffffff",
			 IT_EV_QI_SUBMIT);
	assert_int_equal(tl.event.qi.qw[0], 0x1a);
	assert_int_equal(tl.event.qi.qw[3], UINT64_MAX);
}

static void cache_tag_flush_range_and_np(void **state)
{
	struct text_line tl =
		parse_event("             fio-5000    [001] .....   400.000001: cache_tag_flush_range: dmar0"
			    " 0000:00:04.0[0] type iotlb did 1 [0x40000000-0x4000ffff] addr 0x40000000"
			    " pages 0x10 mask 0x4",
			    IT_EV_CACHE_TAG_FLUSH);

	expect_header(&tl, 400000001000ull, 1, 5000, 5000, "fio");
	assert_string_equal(tl.event.flush.dev_name, "0000:00:04.0");
	assert_int_equal(tl.event.flush.domain_id, 1);
	assert_int_equal(tl.event.flush.start, 0x40000000);
	assert_int_equal(tl.event.flush.end, 0x4000ffff);
	assert_int_equal(tl.event.flush.addr, 0x40000000);
	assert_int_equal(tl.event.flush.pages, 0x10);
	assert_int_equal(tl.event.flush.mask, 4);
	assert_int_equal(tl.event.flush.np, 0);

	tl = parse_event("             fio-5000    [001] .....   400.000002: cache_tag_flush_range_np:"
			 " dmar0 0000:00:04.0[0] type devtlb did 65535 [0x80000000-0x80000fff]"
			 " addr 0x80000000 pages 0x1 mask 0x0",
			 IT_EV_CACHE_TAG_FLUSH);
	assert_int_equal(tl.event.flush.np, 1);
	assert_int_equal(tl.event.flush.domain_id, 65535);
	assert_int_equal(tl.event.flush.pages, 1);

	/* 7.x prints no pages (its format has no such field) */
	tl = parse_event("             fio-5000    [001] .....   400.000003: cache_tag_flush_range:"
			 " dmar0 0000:00:04.0[0] type iotlb did 3 [0x40000000-0x4000ffff]"
			 " addr 0x40000000 mask 0x4",
			 IT_EV_CACHE_TAG_FLUSH);
	assert_int_equal(tl.event.flush.pages, 0);
	assert_int_equal(tl.event.flush.mask, 4);
	assert_int_equal(tl.event.flush.domain_id, 3);
}

static void column_variants(void **state)
{
	struct text_line tl;

	/* options/record-tgid: the thread group goes into pid */
	tl = parse_event("   vfio-thread-2-4245    (   4242) [001] .....   512.000200: map: IOMMU:"
			 " iova=0x0000000000001000 - 0x0000000000002000 paddr=0x0000000000005000"
			 " size=4096",
			 IT_EV_MAP);
	expect_header(&tl, 512000200000ull, 1, 4242, 4245, "vfio-thread-2");
	/* tgid not saved */
	tl = parse_event("           <...>-5673    (-------) [000]    877.010322: map: IOMMU:"
			 " iova=0x0000000000001000 - 0x0000000000002000 paddr=0x0000000000005000"
			 " size=4096",
			 IT_EV_MAP);
	expect_header(&tl, 877010322000ull, 0, 5673, 5673, "<...>");
	/* no irq-info flags column */
	tl = parse_event("            bash-900     [001]    99.000002: unmap: IOMMU:"
			 " iova=0x0000000000001000 - 0x0000000000002000 size=4096"
			 " unmapped_size=4096",
			 IT_EV_UNMAP);
	expect_header(&tl, 99000002000ull, 1, 900, 900, "bash");
	/* `trace-cmd report -t`: nanoseconds, padded event name */
	tl = parse_event("       vfio-test-1234  [000]     1.000000100: map:                  IOMMU:"
			 " iova=0x0000000040000000 - 0x0000000080000000 paddr=0x0000380000000000"
			 " size=1073741824",
			 IT_EV_MAP);
	expect_header(&tl, 1000000100ull, 0, 1234, 1234, "vfio-test");
	/* brackets inside the comm; a comm longer than IT_COMM_LEN - 1 is truncated */
	tl = parse_event("      a [1] b-77     [003] .....     5.000000: map: IOMMU:"
			 " iova=0x0000000000001000 - 0x0000000000002000 paddr=0x0000000000005000"
			 " size=4096\r\n",
			 IT_EV_MAP);
	expect_header(&tl, 5000000000ull, 3, 77, 77, "a [1] b");
	tl = parse_event("  a-very-long-comm-name-9  [000] .....     5.100000: map: IOMMU:"
			 " iova=0x0000000000001000 - 0x0000000000002000 paddr=0x0000000000005000"
			 " size=4096",
			 IT_EV_MAP);
	expect_header(&tl, 5100000000ull, 0, 9, 9, "a-very-long-com");
	/* one fraction digit */
	tl = parse_event("  x-9  [000] .....     5.5: map: IOMMU: iova=0x0000000000001000"
			 " - 0x0000000000002000 paddr=0x0000000000005000 size=4096",
			 IT_EV_MAP);
	assert_int_equal(tl.event.h.ts_ns, 5500000000ull);
}

static void other_lines(void **state)
{
	struct text_line tl;

	assert_int_equal(import_text_parse_line("", &tl), TEXT_LINE_COMMENT);
	assert_int_equal(import_text_parse_line("   \t", &tl), TEXT_LINE_COMMENT);
	assert_int_equal(import_text_parse_line("# tracer: nop", &tl), TEXT_LINE_COMMENT);
	assert_int_equal(import_text_parse_line("##### CPU 2 buffer started ####", &tl),
			 TEXT_LINE_COMMENT);
	assert_int_equal(import_text_parse_line("cpus=4", &tl), TEXT_LINE_COMMENT);
	assert_int_equal(import_text_parse_line("CPU:2 [LOST 17 EVENTS]", &tl), TEXT_LINE_LOST);
	assert_int_equal(tl.lost_cpu, 2);
	assert_int_equal(tl.lost, 17);
	assert_false(tl.lost_count_unknown);
	/* `trace-cmd report` */
	assert_int_equal(import_text_parse_line("CPU:1 [7 EVENTS DROPPED]", &tl), TEXT_LINE_LOST);
	assert_int_equal(tl.lost_cpu, 1);
	assert_int_equal(tl.lost, 7);
	assert_false(tl.lost_count_unknown);
	assert_int_equal(import_text_parse_line("CPU:3 [EVENTS DROPPED]", &tl), TEXT_LINE_LOST);
	assert_int_equal(tl.lost_cpu, 3);
	assert_int_equal(tl.lost, 1);
	assert_true(tl.lost_count_unknown);
	assert_int_equal(import_text_parse_line("            true-5667    [001] .....   876.898264: sched_process_exec:"
						" filename=/bin/true pid=5667 old_pid=5667",
						&tl),
			 TEXT_LINE_OTHER_EVENT);
	/* another subsystem's event called map */
	assert_int_equal(import_text_parse_line("            xe-5667    [001] .....   876.898264: map: vma=0x1000 len=4096",
						&tl),
			 TEXT_LINE_OTHER_EVENT);
	/* an IOMMU event of older kernels that has no it_event kind */
	assert_int_equal(import_text_parse_line("            bash-900     [001] .....    99.000001: detach_device_from_domain:"
						" IOMMU: device=0000:00:04.0",
						&tl),
			 TEXT_LINE_OTHER_EVENT);
}

static void malformed_lines(void **state)
{
	static const char *const bad[] = {
		"this is not ftrace output",
		"CPU:2 [LOST many EVENTS]",
		"CPU:2 [LOST 3 EVENTS] and more",
		"CPU:2 [EVENTS DROPPED",
		"            bash-900     [001] .....    99.0000",
		"            bash-900     [001] .....    99.000001 map: IOMMU: iova=0x1 paddr=0x2 size=3",
		"            bash-900     [001] .....    99: map: IOMMU: iova=0x1 paddr=0x2 size=3",
		"            bash-900     [001] .....    99.0000000001: map: IOMMU: iova=0x1 paddr=0x2"
		" size=3",
		"            bash-900     [x01] .....    99.000001: map: IOMMU: iova=0x1 paddr=0x2 size=3",
		"            bash     [001] .....    99.000001: map: IOMMU: iova=0x1 paddr=0x2 size=3",
		"            -900     [001] .....    99.000001: map: IOMMU: iova=0x1 paddr=0x2 size=3",
		"            bash-900     [001] .....    99.000001: map: IOMMU: iova=0xZZ paddr=0x2"
		" size=3",
		/* the end address must be iova + size */
		"            bash-900     [001] .....    99.000001: map: IOMMU: iova=0x1000 - 0x3000"
		" paddr=0x2000 size=4096",
		"            bash-900     [001] .....    99.000001: map: IOMMU: iova=0x10000000000000000"
		" paddr=0x2 size=3",
		"            bash-900     [001] .....    99.000001: map: IOMMU: iova=0x1 paddr=0x2"
		" size=18446744073709551616",
		"            bash-900     [001] .....    99.000001: map: IOMMU: iova=0x1 paddr=0x2"
		" size=3 extra",
		"            bash-900     [001] .....    99.000001: unmap: IOMMU: iova=0x1 size=3",
		"            bash-900     [001] .....    99.000001: attach_device_to_domain: IOMMU:"
		" device=",
		"            bash-900     [001] .....    99.000001: add_device_to_group: IOMMU:"
		" groupID=x device=0000:00:04.0",
		"            bash-900     [001] .....    99.000001: io_page_fault: IOMMU:nvme"
		" 0000:00:04.0 iova=0x1000",
		"            bash-900     [001] .....    99.000001: io_page_fault: IOMMU:nvme"
		" 0000:00:04.0 iova=0x1000 flags=0x100000000",
		"            bash-900     [001] .....    99.000001: qi_submit: iotlb_inv dmar0:"
		" 0x1 0x2 0x3",
		"            bash-900     [001] .....    99.000001: cache_tag_flush_range: dmar0"
		" 0000:00:04.0 type iotlb did 1 [0x0-0xfff] addr 0x0 pages 0x1 mask 0x0",
		"            bash-900     [001] .....    99.000001: cache_tag_flush_range: dmar0"
		" 0000:00:04.0[0] type iotlb did 65536 [0x0-0xfff] addr 0x0 pages 0x1 mask 0x0",
	};
	struct text_line tl;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (import_text_parse_line(bad[i], &tl) != TEXT_LINE_MALFORMED)
			fail_msg("accepted: %s", bad[i]);
	}
}

struct collected {
	struct it_event events[64];
	size_t nevents;
	uint64_t lost_by_cpu[8];
	const char *reason;
};

static int collect_event(const struct it_event *e, void *ctx)
{
	struct collected *c = ctx;

	assert_true(c->nevents < 64);
	c->events[c->nevents++] = *e;
	return 0;
}

static int collect_loss(uint32_t cpu, uint64_t lost, const char *reason, void *ctx)
{
	struct collected *c = ctx;

	assert_true(cpu < 8);
	c->lost_by_cpu[cpu] += lost;
	c->reason = reason;
	return 0;
}

static void stream_counts_everything(void **state)
{
	static const char text[] =
		"# tracer: nop\n"
		"#\n"
		"  qemu-3333  [000] ....  1000.000000: map: IOMMU: iova=0x0000000000100000"
		" paddr=0x0000000123456000 size=8192\n"
		"garbage\n"
		"CPU:1 [LOST 5 EVENTS]\n"
		"  true-5667    [001] .....   876.898264: sched_process_exec: filename=/bin/true\n"
		"  qemu-3333  [000] ....  1000.000001: unmap: IOMMU: iova=0x0000000000100000"
		" size=8192 unmapped_size=8192"; /* no newline at the end */
	struct ftrace_sink sink = { collect_event, collect_loss, NULL };
	struct ftrace_stats st = { 0 };
	struct collected *c = calloc(1, sizeof(*c));
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	sink.ctx = c;
	assert_non_null(f);
	assert_int_equal(import_text_stream(f, "text", &sink, &st), 0);
	fclose(f);
	assert_int_equal(c->nevents, 2);
	assert_int_equal(c->events[1].h.kind, IT_EV_UNMAP);
	assert_int_equal(c->events[1].unmap.unmapped_size, 8192);
	assert_int_equal(st.events[IT_EV_MAP], 1);
	assert_int_equal(st.events[IT_EV_UNMAP], 1);
	assert_int_equal(ftrace_stats_total(&st), 2);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(st.lost, 5);
	assert_int_equal(c->lost_by_cpu[1], 5);
	assert_string_equal(c->reason, "ftrace-lost");
	free(c);
}

/* A line longer than the limit, and one holding a NUL byte, are malformed; the lines around
 * them still parse. */
static void stream_survives_long_and_nul_lines(void **state)
{
	static const char good[] = "  qemu-3333  [000] ....  1000.000000: map: IOMMU:"
				   " iova=0x0000000000100000 paddr=0x0000000123456000 size=8192\n";
	size_t long_len = 3 * IMPORT_TEXT_LINE_MAX;
	size_t len = 3 * sizeof(good) + long_len + 16;
	char *text = malloc(len), *p = text;
	struct ftrace_sink sink = { collect_event, collect_loss, NULL };
	struct ftrace_stats st = { 0 };
	struct collected *c = calloc(1, sizeof(*c));
	FILE *f;

	sink.ctx = c;
	p += sprintf(p, "%s", good);
	memset(p, 'x', long_len);
	p += long_len;
	p += sprintf(p, "\n%s", good);
	memcpy(p, "ab\0cd\n", 6);
	p += 6;
	p += sprintf(p, "%s", good);
	f = fmemopen(text, (size_t)(p - text), "r");
	assert_non_null(f);
	assert_int_equal(import_text_stream(f, "text", &sink, &st), 0);
	fclose(f);
	assert_int_equal(st.events[IT_EV_MAP], 3);
	assert_int_equal(st.malformed, 2);
	free(text);
	free(c);
}

/* Reads n bytes of text through import_text_stream, counting into *st. */
static int stream_of(const char *text, size_t n, struct collected *c, struct ftrace_stats *st)
{
	struct ftrace_sink sink = { collect_event, collect_loss, c };
	FILE *f = fmemopen((void *)text, n, "r");
	int ret;

	assert_non_null(f);
	ret = import_text_stream(f, "text", &sink, st);
	fclose(f);
	return ret;
}

/* IMPORT_TEXT_UNPARSED_MAX bytes without an event line end the import (so that /dev/zero or
 * /dev/urandom are refused, not read for ever); an event line starts the count again. */
static void stream_refuses_what_is_not_text(void **state)
{
	static const char good[] = "  qemu-3333  [000] ....  1000.000000: map: IOMMU:"
				   " iova=0x0000000000100000 paddr=0x0000000123456000 size=8192\n";
	size_t max = IMPORT_TEXT_UNPARSED_MAX, len = 2 * max + 2 * sizeof(good);
	char *text = calloc(1, len), *p;
	struct collected *c = calloc(1, sizeof(*c));
	struct ftrace_stats st = { 0 };

	/* NUL bytes: one line, cut after the limit */
	assert_int_equal(stream_of(text, max + 1, c, &st), -1);
	assert_int_equal(stream_of(text, max, c, &st), 0);
	/* lines that do not parse, after an event line */
	memset(text, 'x', len);
	memcpy(text, good, sizeof(good) - 1);
	for (p = text + sizeof(good) + 40; p < text + len; p += 80)
		*p = '\n';
	memset(&st, 0, sizeof(st));
	assert_int_equal(stream_of(text, sizeof(good) - 1 + max + 80, c, &st), -1);
	assert_int_equal(st.events[IT_EV_MAP], 1);
	/* an event line in the middle: more than the limit in all, but never without one */
	p = text + sizeof(good) - 1 + max - 200;
	p = memchr(p, '\n', 80) + 1;
	memcpy(p, good, sizeof(good) - 1);
	memset(&st, 0, sizeof(st));
	assert_int_equal(stream_of(text, (size_t)(p - text) + sizeof(good) - 1 + max - 100, c, &st),
			 0);
	assert_int_equal(st.events[IT_EV_MAP], 2);
	free(text);
	free(c);
}

static int refuse_event(const struct it_event *e, void *ctx)
{
	return -1;
}

static void stream_stops_when_sink_refuses(void **state)
{
	static const char text[] = "  qemu-3333  [000] ....  1000.000000: map: IOMMU:"
				   " iova=0x0000000000100000 paddr=0x0000000123456000 size=8192\n";
	struct ftrace_sink sink = { refuse_event, collect_loss, NULL };
	struct ftrace_stats st = { 0 };
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	assert_int_equal(import_text_stream(f, "text", &sink, &st), -1);
	fclose(f);
}

/* The database and the WAL files a read-only open leaves next to it. */
static void remove_db(const char *path)
{
	char side[600];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

static int run_import(const char *a0, const char *a1, const char *a2, const char *a3,
		      const char *a4)
{
	char *argv[] = {
		"import", (char *)a0, (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL
	};
	int argc = 1;

	while (argv[argc])
		argc++;
	optind = 1;
	return cmd_import(argc, argv);
}

/* `iommutrace import` of the fixture: a session, a row per event, the losses, exact values. */
static void cli_imports_fixture(void **state)
{
	char db_path[] = "/tmp/iommutrace-test-import-XXXXXX";
	char err[256];
	int fd = mkstemp(db_path);
	sqlite3 *db;

	assert_true(fd >= 0);
	close(fd);
	unlink(db_path);
	assert_int_equal(run_import(FIXTURE, "-o", db_path, NULL, NULL), 0);
	/* an existing output is refused without --force, and left alone; --force replaces it */
	assert_int_equal(run_import(FIXTURE, "-o", db_path, NULL, NULL), 1);
	assert_int_equal(access(db_path, F_OK), 0);
	assert_int_equal(run_import(FIXTURE, "-o", db_path, "--force", NULL), 0);
	db = itdb_open(db_path, ITDB_READ, NULL, err, sizeof(err));
	assert_non_null(db);
	assert_string_equal(sql_rows(db, "SELECT kind, capture, complete, end_reason, events_total,"
					 " events_lost, end_mono_ns FROM sessions"),
			    "import|ftrace-text|1|end-of-input|13|17|1000000001000;");
	assert_string_equal(sql_rows(db, "SELECT ts_ns, cpu, pid, tid, comm, domain_ptr,"
					 " printf('0x%x', iova), printf('0x%x', paddr), size_bytes"
					 " FROM maps ORDER BY ts_ns"),
			    "512000001000|1|4242|4242|qemu-system-x86|NULL|0x40000000|0x4800000000|"
			    "1073741824;"
			    "512000200000|1|4242|4245|vfio-thread-2|NULL|0x1000|0x5000|4096;"
			    "1000000000000|0|3333|3333|qemu|NULL|0x100000|0x123456000|8192;");
	assert_string_equal(sql_rows(db,
				     "SELECT ts_ns, iova, size_bytes, unmapped_bytes FROM unmaps"
				     " ORDER BY ts_ns"),
			    "99000002000|4096|4096|4096;512000100000|4276092928|4096|4096;"
			    "1000000001000|1048576|8192|8192;");
	assert_string_equal(sql_rows(db, "SELECT event, device, group_id, comm FROM attaches"
					 " ORDER BY ts_ns"),
			    "group_add|0000:00:04.0|7|swapper/0;"
			    "attach|0000:00:04.0|NULL|vfio nvme test;"
			    "group_remove|0000:00:04.0|7|bash;");
	assert_string_equal(sql_rows(db, "SELECT device, iova, flags FROM faults"),
			    "0000:00:04.0|3735924736|32;");
	assert_string_equal(sql_rows(db,
				     "SELECT event, device, domain_id, start_addr, end_addr, addr,"
				     " pages, mask, qw0 FROM flushes ORDER BY ts_ns"),
			    "qi_submit|NULL|1|NULL|NULL|1073741824|NULL|6|65554;"
			    "cache_tag_flush_range|0000:00:04.0|1|1073741824|1073807359|1073741824|"
			    "16|4|NULL;"
			    "cache_tag_flush_range_np|0000:00:04.0|1|2147483648|2147487743|"
			    "2147483648|1|0|NULL;");
	assert_string_equal(sql_rows(db, "SELECT cpu, event, lost, reason FROM losses"),
			    "2|any|17|ftrace-lost;");
	itdb_close(db);
	remove_db(db_path);
}

static void cli_usage_and_bad_input(void **state)
{
	char db_path[] = "/tmp/iommutrace-test-import-XXXXXX";
	char junk[] = "/tmp/iommutrace-test-junk-XXXXXX";
	int fd = mkstemp(db_path);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	unlink(db_path);
	assert_int_equal(run_import("--help", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(run_import(FIXTURE, NULL, NULL, NULL, NULL), 2);
	assert_int_equal(run_import("-o", db_path, NULL, NULL, NULL), 2);
	assert_int_equal(run_import(FIXTURE, FIXTURE, "-o", db_path, NULL), 2);
	assert_int_equal(run_import(FIXTURE, "-o", db_path, "--format", "xml"), 2);
	assert_int_equal(run_import(FIXTURE, "-o", FIXTURE, "--force", NULL), 2);
	assert_int_equal(run_import("/nonexistent/trace.txt", "-o", db_path, NULL, NULL), 1);
	assert_int_equal(access(db_path, F_OK), -1);
	/* not ftrace output: refused, and no database is left behind */
	fd = mkstemp(junk);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "hello\nworld\n");
	fclose(f);
	assert_int_equal(run_import(junk, "-o", db_path, NULL, NULL), 1);
	assert_int_equal(access(db_path, F_OK), -1);
	/* text forced to be read as trace.dat: refused before the database is touched */
	assert_int_equal(run_import(FIXTURE, "-o", db_path, "--format", "dat"), 1);
	assert_int_equal(access(db_path, F_OK), -1);
	fd = open(db_path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(run_import(FIXTURE, "-o", db_path, "--format=dat", "--force"), 1);
	assert_int_equal(access(db_path, F_OK), 0);
	unlink(db_path);
	unlink(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(map_6x),
		cmocka_unit_test(map_before_5_13),
		cmocka_unit_test(unmap_both_forms),
		cmocka_unit_test(attach_and_groups),
		cmocka_unit_test(fault_with_and_without_driver),
		cmocka_unit_test(qi_submit),
		cmocka_unit_test(cache_tag_flush_range_and_np),
		cmocka_unit_test(column_variants),
		cmocka_unit_test(other_lines),
		cmocka_unit_test(malformed_lines),
		cmocka_unit_test(stream_counts_everything),
		cmocka_unit_test(stream_survives_long_and_nul_lines),
		cmocka_unit_test(stream_refuses_what_is_not_text),
		cmocka_unit_test(stream_stops_when_sink_refuses),
		cmocka_unit_test(cli_imports_fixture),
		cmocka_unit_test(cli_usage_and_bad_input),
	};

	if (access(FIXTURE, R_OK)) {
		printf("test_import_text: run from the repository root (%s not found)\n", FIXTURE);
		return 1;
	}
	return cmocka_run_group_tests_name("ftrace text import", tests, NULL, NULL);
}
