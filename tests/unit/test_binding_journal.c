/* The binding journal (probes/binding_journal.c) in a temporary IOMMUTRACE_RUN_DIR: entries
 * written atomically, read back exactly, removed; malformed entries and values refused; entries
 * of another boot and of processes that no longer run told apart from live ones. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "probes/binding_journal.h"

#define BDF "0000:00:1f.7"
#define OTHER_BOOT_ID "00000000-1111-2222-3333-444444444444"

static char run_dir[64];

static int make_run_dir(void **state)
{
	snprintf(run_dir, sizeof(run_dir), "/tmp/iommutrace-journal-XXXXXX");
	if (!mkdtemp(run_dir))
		return -1;
	return setenv("IOMMUTRACE_RUN_DIR", run_dir, 1);
}

static int remove_run_dir(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run_dir);
	return system(cmd) ? -1 : 0;
}

static void names_of(const char *name, void *ctx)
{
	char *list = ctx;

	if (list[0])
		strcat(list, ",");
	strcat(list, name);
}

/* Every file in the bindings folder, hidden ones too, sorted: what a crash would leave. */
static void files_in_bindings(char *out, size_t len)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls -A '%s/bindings' 2>/dev/null | tr '\\n' ,", run_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	pclose(p);
}

static void write_raw(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bindings", run_dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bindings/%s", run_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void read_raw(const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/bindings/%s", run_dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
}

static void nvme_entry(struct binding_journal_entry *e)
{
	assert_int_equal(binding_journal_entry_init(e, BDF), 0);
	strcpy(e->orig_driver, "nvme");
	strcpy(e->bound_to, "vfio-pci");
}

static void paths_follow_the_run_dir(void **state)
{
	char path[PATH_MAX], want[PATH_MAX];

	assert_int_equal(binding_journal_dir(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/bindings", run_dir);
	assert_string_equal(path, want);
	assert_int_equal(binding_journal_path(BDF, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/bindings/" BDF, run_dir);
	assert_string_equal(path, want);
	unsetenv("IOMMUTRACE_RUN_DIR");
	assert_int_equal(binding_journal_path(BDF, path, sizeof(path)), 0);
	assert_string_equal(path, "/run/iommutrace/bindings/" BDF);
	setenv("IOMMUTRACE_RUN_DIR", run_dir, 1);
}

static void init_names_this_process_and_boot(void **state)
{
	struct binding_journal_entry e;
	char boot_id[BINDING_JOURNAL_BOOT_ID_LEN + 1];
	unsigned long long start;

	assert_int_equal(binding_journal_entry_init(&e, BDF), 0);
	assert_string_equal(e.bdf, BDF);
	assert_int_equal(e.pid, getpid());
	assert_int_equal(binding_journal_pid_start(getpid(), &start), 0);
	assert_true(e.pid_start_ticks == start);
	assert_int_equal(binding_journal_boot_id(boot_id), 0);
	assert_string_equal(e.boot_id, boot_id);
	assert_string_equal(e.orig_driver, "");
	assert_string_equal(e.orig_override, "");
	assert_string_equal(e.bound_to, "");
}

static void written_entry_reads_back_and_no_temporary_file_stays(void **state)
{
	struct binding_journal_entry e, back;
	char text[1024], want[1024], files[256];

	nvme_entry(&e);
	strcpy(e.orig_override, "nvme");
	assert_int_equal(binding_journal_write(&e), 0);
	snprintf(want, sizeof(want),
		 "bdf=" BDF "\ndriver=nvme\ndriver_override=nvme\nbound_to=vfio-pci\npid=%d\n"
		 "pid_start_ticks=%llu\nboot_id=%s\n",
		 (int)getpid(), e.pid_start_ticks, e.boot_id);
	read_raw(BDF, text, sizeof(text));
	assert_string_equal(text, want);
	files_in_bindings(files, sizeof(files));
	assert_string_equal(files, BDF ",");

	assert_int_equal(binding_journal_read(BDF, &back), 0);
	assert_memory_equal(&back, &e, sizeof(e));
}

static void a_new_entry_replaces_the_old(void **state)
{
	struct binding_journal_entry e, back;
	char files[256];

	nvme_entry(&e);
	assert_int_equal(binding_journal_write(&e), 0);
	e.orig_driver[0] = '\0';
	strcpy(e.bound_to, "uio_pci_generic");
	assert_int_equal(binding_journal_write(&e), 0);
	assert_int_equal(binding_journal_read(BDF, &back), 0);
	assert_string_equal(back.orig_driver, "");
	assert_string_equal(back.bound_to, "uio_pci_generic");
	files_in_bindings(files, sizeof(files));
	assert_string_equal(files, BDF ",");
}

static void removed_entry_is_gone(void **state)
{
	struct binding_journal_entry e;
	char files[256];

	nvme_entry(&e);
	assert_int_equal(binding_journal_write(&e), 0);
	assert_int_equal(binding_journal_remove(BDF), 0);
	assert_int_equal(binding_journal_read(BDF, &e), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(binding_journal_remove(BDF), 0);
	files_in_bindings(files, sizeof(files));
	assert_string_equal(files, "");
}

static void entries_listed_sorted_without_hidden_files(void **state)
{
	struct binding_journal_entry e;
	char names[256] = "";

	assert_int_equal(binding_journal_for_each(names_of, names), 0);
	assert_string_equal(names, "");
	nvme_entry(&e);
	assert_int_equal(binding_journal_write(&e), 0);
	strcpy(e.bdf, "0000:00:03.0");
	assert_int_equal(binding_journal_write(&e), 0);
	write_raw(".0000:00:05.0.tmp-1", "half an entry");
	write_raw("junk", "x");
	assert_int_equal(binding_journal_for_each(names_of, names), 0);
	assert_string_equal(names, "0000:00:03.0," BDF ",junk");
}

static void malformed_entries_refused(void **state)
{
	struct binding_journal_entry good, e;
	char valid[512], text[1024];
	/* each a change to the valid entry: {what is replaced, by what} */
	static const char *const edits[][2] = {
		{ "bdf=" BDF "\n", "" }, /* a field missing */
		{ "bdf=" BDF "\n", "bdf=0000:00:1f.6\n" }, /* another device's */
		{ "bdf=" BDF "\n", "bdf=00:1f.7\n" }, /* not canonical */
		{ "driver=nvme\ndriver_override=\n",
		  "driver_override=\ndriver=nvme\n" }, /* order */
		{ "driver=nvme\n", "driver=nv/me\n" },
		{ "driver=nvme\n", "driver=nv me\n" },
		{ "bound_to=vfio-pci\n", "bound_to=\n" },
		{ "pid=", "pid= " },
		{ "pid=", "pid=-" },
		{ "pid=", "pid=x" },
		{ "pid_start_ticks=", "pid_start_ticks=x" },
		{ "boot_id=", "boot_id=x" },
		{ "boot_id=", "boot_id=" OTHER_BOOT_ID }, /* two ids: too long */
		{ "\nboot_id", "\nextra=1\nboot_id" }, /* an unknown field */
		{ "bound_to", "Bound_to" },
	};

	nvme_entry(&good);
	snprintf(valid, sizeof(valid),
		 "bdf=" BDF "\ndriver=nvme\ndriver_override=\nbound_to=vfio-pci\npid=%d\n"
		 "pid_start_ticks=%llu\nboot_id=%s\n",
		 (int)good.pid, good.pid_start_ticks, good.boot_id);
	write_raw(BDF, valid);
	assert_int_equal(binding_journal_read(BDF, &e), 0);
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		const char *at = strstr(valid, edits[i][0]);

		assert_non_null(at);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - valid), valid, edits[i][1],
			 at + strlen(edits[i][0]));
		write_raw(BDF, text);
		errno = 0;
		if (binding_journal_read(BDF, &e) != -1 || errno != EINVAL)
			fail_msg("edit %zu accepted:\n%s", i, text);
	}
	/* pid 0 */
	snprintf(text, sizeof(text),
		 "bdf=" BDF "\ndriver=nvme\ndriver_override=\nbound_to=vfio-pci\npid=0\n"
		 "pid_start_ticks=%llu\nboot_id=%s\n",
		 good.pid_start_ticks, good.boot_id);
	write_raw(BDF, text);
	assert_int_equal(binding_journal_read(BDF, &e), -1);
	assert_int_equal(errno, EINVAL);
	/* a value after the last line, an empty file, one larger than any entry */
	snprintf(text, sizeof(text), "%sbdf=" BDF "\n", valid);
	write_raw(BDF, text);
	assert_int_equal(binding_journal_read(BDF, &e), -1);
	assert_int_equal(errno, EINVAL);
	write_raw(BDF, "");
	assert_int_equal(binding_journal_read(BDF, &e), -1);
	assert_int_equal(errno, EINVAL);
	memset(text, 'x', 600);
	text[600] = '\0';
	write_raw(BDF, text);
	assert_int_equal(binding_journal_read(BDF, &e), -1);
	assert_int_equal(errno, EINVAL);
	/* a file not named by its BDF */
	write_raw("junk", valid);
	assert_int_equal(binding_journal_read("junk", &e), -1);
	assert_int_equal(errno, EINVAL);
}

static void values_the_reader_would_refuse_not_written(void **state)
{
	struct binding_journal_entry e;
	char files[256];

	nvme_entry(&e);
	e.bound_to[0] = '\0';
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, EINVAL);
	nvme_entry(&e);
	strcpy(e.orig_override, "a b");
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, EINVAL);
	nvme_entry(&e);
	strcpy(e.bdf, "00:1f.7");
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, EINVAL);
	nvme_entry(&e);
	strcpy(e.boot_id, "x");
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, EINVAL);
	files_in_bindings(files, sizeof(files));
	assert_string_equal(files, "");
}

static void unwritable_directory_fails(void **state)
{
	struct binding_journal_entry e;
	char file[PATH_MAX], dir[PATH_MAX + 8];

	/* a regular file where the run directory's parent should be: refused even for root */
	snprintf(file, sizeof(file), "%s/file", run_dir);
	fclose(fopen(file, "w"));
	snprintf(dir, sizeof(dir), "%s/run", file);
	setenv("IOMMUTRACE_RUN_DIR", dir, 1);
	nvme_entry(&e);
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, ENOTDIR);
	setenv("IOMMUTRACE_RUN_DIR", run_dir, 1);
}

static void failed_rename_leaves_no_temporary_file(void **state)
{
	struct binding_journal_entry e;
	char dir[128], files[256];

	/* a folder, not empty, where the entry goes: the rename fails after the write */
	snprintf(dir, sizeof(dir), "%s/bindings", run_dir);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/bindings/" BDF, run_dir);
	mkdir(dir, 0755);
	write_raw(BDF "/x", "");
	nvme_entry(&e);
	assert_int_equal(binding_journal_write(&e), -1);
	assert_true(errno == EISDIR || errno == ENOTEMPTY);
	files_in_bindings(files, sizeof(files));
	assert_string_equal(files, BDF ",");
}

static void count_name(const char *name, void *ctx)
{
	(*(int *)ctx)++;
}

/* A journal folder others can write, or a link in its place, is not trusted: entries in it
 * would choose the drivers root binds devices to. Not written, not read. */
static void untrusted_folders_refused(void **state)
{
	struct binding_journal_entry e;
	char bindings[128], elsewhere[128];
	int n = 0;

	nvme_entry(&e);
	assert_int_equal(chmod(run_dir, 0777), 0);
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, EPERM);
	assert_string_equal(binding_journal_strerror(EPERM),
			    "not a folder of this user or root that only its owner can write");
	assert_int_equal(chmod(run_dir, 0755), 0);
	assert_int_equal(binding_journal_write(&e), 0);
	assert_int_equal(binding_journal_for_each(count_name, &n), 0);
	assert_int_equal(n, 1);
	/* bindings/ writable by others, then a link to another folder */
	snprintf(bindings, sizeof(bindings), "%s/bindings", run_dir);
	assert_int_equal(chmod(bindings, 0757), 0);
	assert_int_equal(binding_journal_for_each(count_name, &n), -1);
	assert_int_equal(errno, EPERM);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", run_dir);
	assert_int_equal(rename(bindings, elsewhere), 0);
	assert_int_equal(chmod(elsewhere, 0755), 0);
	assert_int_equal(symlink("elsewhere", bindings), 0);
	assert_int_equal(binding_journal_for_each(count_name, &n), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(binding_journal_write(&e), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(n, 1);
}

static void owner_running_gone_or_other_boot(void **state)
{
	struct binding_journal_entry e;
	pid_t child;

	nvme_entry(&e);
	assert_int_equal(binding_journal_owner(&e), JOURNAL_OWNER_RUNNING);
	/* the same pid with another start time: the pid was reused */
	e.pid_start_ticks++;
	assert_int_equal(binding_journal_owner(&e), JOURNAL_OWNER_GONE);
	/* a process that has ended */
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	nvme_entry(&e);
	e.pid = child;
	assert_int_equal(binding_journal_owner(&e), JOURNAL_OWNER_GONE);
	/* another boot's entry, whatever its pid */
	nvme_entry(&e);
	strcpy(e.boot_id, OTHER_BOOT_ID);
	assert_int_equal(binding_journal_owner(&e), JOURNAL_OWNER_OTHER_BOOT);
}

static void pid_start_of_a_process_that_does_not_run(void **state)
{
	unsigned long long start;

	/* above any pid_max (4194304) */
	assert_int_equal(binding_journal_pid_start(2147483647, &start), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(paths_follow_the_run_dir, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(init_names_this_process_and_boot, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(written_entry_reads_back_and_no_temporary_file_stays,
						make_run_dir, remove_run_dir),
		cmocka_unit_test_setup_teardown(a_new_entry_replaces_the_old, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(removed_entry_is_gone, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(entries_listed_sorted_without_hidden_files,
						make_run_dir, remove_run_dir),
		cmocka_unit_test_setup_teardown(malformed_entries_refused, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(values_the_reader_would_refuse_not_written,
						make_run_dir, remove_run_dir),
		cmocka_unit_test_setup_teardown(unwritable_directory_fails, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(failed_rename_leaves_no_temporary_file,
						make_run_dir, remove_run_dir),
		cmocka_unit_test_setup_teardown(untrusted_folders_refused, make_run_dir,
						remove_run_dir),
		cmocka_unit_test_setup_teardown(owner_running_gone_or_other_boot, make_run_dir,
						remove_run_dir),
		cmocka_unit_test(pid_start_of_a_process_that_does_not_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
