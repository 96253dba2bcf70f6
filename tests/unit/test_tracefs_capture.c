/* The tracefs live capture on this kernel: the instance it makes (trace clock, events), the
 * per-CPU readers on real ring-buffer data (trace_marker records: no IOMMU event fires on a
 * machine without an IOMMU), the wake-up on new data, the losses, the plan marks, and that the
 * instance is gone after stop, also when a killed process left one. Needs root. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <tracefs.h>
#include "tracer/probe_plan.h"
#include "tracer/tracefs_capture.h"

static char instances[512];

static bool dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void instance_file(const struct tracefs_capture *c, const char *file, char *path, size_t len)
{
	snprintf(path, len, "%s/%s/%s", instances, tracefs_capture_instance_name(c), file);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	buf[fread(buf, 1, len - 1, f)] = '\0';
	fclose(f);
}

static void write_marker(const struct tracefs_capture *c, const char *text)
{
	char path[768];
	FILE *f;

	instance_file(c, "trace_marker", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int count_event(const struct it_event *e, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static int count_loss(uint32_t cpu, uint64_t lost, void *ctx)
{
	*(uint64_t *)ctx += lost;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct tracefs_capture *start(void)
{
	char err[256];
	struct tracefs_capture *c = tracefs_capture_start(err, sizeof(err));

	if (!c)
		fail_msg("tracefs_capture_start: %s", err);
	return c;
}

static void instance_is_set_up_and_removed(void **state)
{
	struct tracefs_capture *c = start();
	char name[64], path[768], buf[4096];
	uint64_t lost = 0;

	snprintf(name, sizeof(name), "iommutrace-%d", (int)getpid());
	assert_string_equal(tracefs_capture_instance_name(c), name);
	snprintf(path, sizeof(path), "%s/%s", instances, name);
	assert_true(dir_exists(path));
	instance_file(c, "trace_clock", path, sizeof(path));
	read_file(path, buf, sizeof(buf));
	assert_non_null(strstr(buf, "[mono]"));
	instance_file(c, "events/iommu/map/enable", path, sizeof(path));
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "1\n");
	instance_file(c, "events/iommu/io_page_fault/enable", path, sizeof(path));
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "1\n");
	assert_true(tracefs_capture_has_event(c, "iommu:map"));
	assert_true(tracefs_capture_has_event(c, "iommu:unmap"));
	assert_false(tracefs_capture_has_event(c, "iommu:nonexistent"));
	assert_false(tracefs_capture_has_event(c, "map"));
	snprintf(path, sizeof(path), "%s/../events/intel_iommu/qi_submit", instances);
	assert_int_equal(tracefs_capture_has_event(c, "intel_iommu:qi_submit"), dir_exists(path));
	assert_int_equal(tracefs_capture_losses(c, count_loss, &lost), 0);
	assert_int_equal(lost, 0);
	tracefs_capture_stop(c);
	snprintf(path, sizeof(path), "%s/%s", instances, name);
	assert_false(dir_exists(path));
}

/* Kernel-written records reach the readers (partial sub-buffers included) and are consumed
 * once; not being IOMMU events, they are counted as skipped. */
static void drains_records_once(void **state)
{
	struct tracefs_capture *c = start();
	int delivered = 0;

	assert_int_equal(tracefs_capture_poll(c, 0, count_event, &delivered), 0);
	assert_int_equal(tracefs_capture_skipped(c), 0);
	write_marker(c, "iommutrace test marker 1");
	write_marker(c, "iommutrace test marker 2");
	assert_int_equal(tracefs_capture_poll(c, 1000, count_event, &delivered), 0);
	assert_int_equal(delivered, 0);
	assert_int_equal(tracefs_capture_skipped(c), 2);
	assert_int_equal(tracefs_capture_malformed(c), 0);
	assert_int_equal(tracefs_capture_poll(c, 0, count_event, &delivered), 0);
	assert_int_equal(tracefs_capture_skipped(c), 2);
	/* after disable, what is buffered still drains */
	write_marker(c, "iommutrace test marker 3");
	tracefs_capture_disable(c);
	assert_int_equal(tracefs_capture_poll(c, 0, count_event, &delivered), 0);
	assert_int_equal(tracefs_capture_skipped(c), 3);
	tracefs_capture_stop(c);
}

struct late_writer {
	struct tracefs_capture *c;
	unsigned delay_ms;
};

static void *write_late(void *arg)
{
	struct late_writer *w = arg;

	usleep(w->delay_ms * 1000);
	write_marker(w->c, "iommutrace test late marker");
	return NULL;
}

/* An empty poll waits its timeout; a record arriving during the wait ends it early. */
static void poll_waits_and_wakes(void **state)
{
	struct tracefs_capture *c = start();
	struct late_writer w = { c, 200 };
	pthread_t thread;
	uint64_t t0;
	int delivered = 0;

	t0 = now_ms();
	assert_int_equal(tracefs_capture_poll(c, 300, count_event, &delivered), 0);
	assert_true(now_ms() - t0 >= 250);
	assert_int_equal(pthread_create(&thread, NULL, write_late, &w), 0);
	t0 = now_ms();
	assert_int_equal(tracefs_capture_poll(c, 10000, count_event, &delivered), 0);
	assert_true(now_ms() - t0 < 5000);
	pthread_join(thread, NULL);
	/* the wake-up may come before the record is readable on another CPU: drain it */
	for (int i = 0; i < 50 && !tracefs_capture_skipped(c); i++)
		tracefs_capture_poll(c, 100, count_event, &delivered);
	assert_int_equal(tracefs_capture_skipped(c), 1);
	tracefs_capture_stop(c);
}

static void marks_the_probe_plan(void **state)
{
	struct tracefs_capture *c = start();
	struct probe_plan plan = { .count = 3 };

	plan.probes[0] = (struct probe){ .role = ROLE_TRACEPOINT, .target = "iommu:map" };
	plan.probes[1] = (struct probe){ .role = ROLE_TRACEPOINT, .target = "intel_iommu:none" };
	plan.probes[2] = (struct probe){ .role = ROLE_DRIVER_MAP,
					 .target = "intel_iommu_map_pages",
					 .reason = "no BPF" };
	tracefs_capture_mark_plan(c, &plan);
	assert_true(plan.probes[0].attached);
	assert_int_equal(plan.probes[0].mech, MECH_TRACEFS);
	assert_false(plan.probes[1].attached);
	assert_int_equal(plan.probes[1].mech, MECH_NONE);
	assert_string_equal(plan.probes[1].reason, "not in this kernel's tracefs events");
	assert_false(plan.probes[2].attached);
	assert_string_equal(plan.probes[2].reason, "no BPF");
	tracefs_capture_stop(c);
}

/* An instance whose process died (SIGKILL leaves it behind) is removed by the next start. */
static void removes_instance_of_dead_process(void **state)
{
	struct tracefs_capture *c;
	char path[768];
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	snprintf(path, sizeof(path), "%s/iommutrace-%d", instances, (int)pid);
	assert_int_equal(mkdir(path, 0755), 0);
	c = start();
	assert_false(dir_exists(path));
	tracefs_capture_stop(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(instance_is_set_up_and_removed),
		cmocka_unit_test(drains_records_once),
		cmocka_unit_test(poll_waits_and_wakes),
		cmocka_unit_test(marks_the_probe_plan),
		cmocka_unit_test(removes_instance_of_dead_process),
	};
	const char *dir;

	if (geteuid()) {
		printf("SKIP: the tracefs capture tests need root (they create a tracefs instance)\n");
		return 77;
	}
	/* mounts tracefs when it is not */
	dir = tracefs_tracing_dir();
	if (!dir) {
		printf("SKIP: tracefs is not mounted and cannot be mounted on /sys/kernel/tracing\n");
		return 77;
	}
	snprintf(instances, sizeof(instances), "%s/events/iommu/map", dir);
	if (!dir_exists(instances)) {
		printf("SKIP: this kernel has no iommu:map tracepoint (CONFIG_IOMMU_API off)\n");
		return 77;
	}
	snprintf(instances, sizeof(instances), "%s/instances", dir);
	return cmocka_run_group_tests_name("tracefs live capture", tests, NULL, NULL);
}
