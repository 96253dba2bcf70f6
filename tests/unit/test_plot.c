/* report --plot: the figures of tests/fixtures/analyzer/runs.sql's sessions made with gnuplot into
 * a temporary folder (PNG files, and the data files exactly), skipped loudly without gnuplot; the
 * one-line refusal when gnuplot is absent (PATH an empty folder) or IOMMUTRACE_GNUPLOT names no
 * program, before anything is written; a gnuplot that fails; database strings that would be
 * gnuplot code or terminal escapes; a DIR, or names in it, that are not ours to write; and no
 * start-up file or gnuplot from the working folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "tests/analyzer_fixture.h"
#include "analyzer/plot.h"

struct plot_test {
	struct fixture_db db;
	char dir[64]; /* the figures go to dir/plots */
	char plots[96];
	char logged[2048]; /* what the last plot() wrote on standard error */
};

static int setup(void **state)
{
	struct plot_test *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	fixture_db_open(&t->db, "runs");
	snprintf(t->dir, sizeof(t->dir), "/tmp/iommutrace-plot-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->plots, sizeof(t->plots), "%s/plots", t->dir);
	*state = t;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct plot_test *t = *state;

	fixture_db_close(&t->db);
	assert_int_equal(nftw(t->dir, remove_one, 8, FTW_DEPTH | FTW_PHYS), 0);
	free(t);
	return 0;
}

/* plot_session with standard error captured into t->logged. */
static int plot(struct plot_test *t, int64_t session_id)
{
	char path[128];
	int saved, fd, rc;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr", t->dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	rc = plot_session(t->db.db, session_id, t->plots);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fd, t->logged, sizeof(t->logged) - 1, 0);
	assert_true(n >= 0);
	t->logged[n] = '\0';
	close(fd);
	unlink(path);
	return rc;
}

static char *read_file(const char *dir, const char *name, size_t *len)
{
	char path[256];
	FILE *f;
	char *s;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return s;
}

static void assert_file(const char *dir, const char *name, const char *expected)
{
	size_t len;
	char *s = read_file(dir, name, &len);

	assert_string_equal(s, expected);
	free(s);
}

static void assert_exists(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(access(path, R_OK), 0);
}

static void assert_png(const char *dir, const char *name)
{
	static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t len;
	char *s = read_file(dir, name, &len);

	assert_true(len > sizeof(signature));
	assert_memory_equal(s, signature, sizeof(signature));
	free(s);
}

static void makes_the_figures(void **state)
{
	struct plot_test *t = *state;
	static const char *const what[] = { "pages", "footprint", "throughput", "latency" };
	char name[128];
	int rc;

	unsetenv("IOMMUTRACE_GNUPLOT");
	rc = plot(t, 2);
	if (rc < 0 && strstr(t->logged, "--plot needs gnuplot, which is not installed")) {
		printf("SKIP: no gnuplot here (apt-get install gnuplot-nox): %s", t->logged);
		skip();
	}
	assert_int_equal(rc, 4);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "session-2-%s.png", what[i]);
		assert_png(t->plots, name);
		snprintf(name, sizeof(name), "session-2-%s.gp", what[i]);
		assert_exists(t->plots, name);
	}
	assert_file(t->plots, "session-2-pages.dat",
		    "# session 2: IOMMU pages mapped per page size (driver_maps rows of op 'map')\n"
		    "# page_size pgsize_bytes observed derived\n"
		    "\"4 KiB\" 4096 512 0\n"
		    "\"2 MiB\" 2097152 1 0\n");
	/* held at the last value until the session's end (12 s after its start at 1 s) */
	assert_file(t->plots, "session-2-footprint.dat",
		    "# session 2: live IOMMU-mapped bytes per domain (live_bytes_view), after each change;"
		    " time from the session's start\n"
		    "# seconds live_bytes\n"
		    "# domain 0xffff888101234000 (0000:00:04.0)\n"
		    "0.050000000 2097152\n"
		    "0.100000000 4194304\n"
		    "10.000000000 2097152\n"
		    "10.100000000 0\n"
		    "11.000000000 0\n");
	/* the IOMMU off first, then this run, then the other runs with it on */
	assert_file(t->plots, "session-2-throughput.dat",
		    "# session 2 and the comparable runs (runs_view): per queue depth the mean over the"
		    " repeats and its standard deviation\n"
		    "# qd iops iops_stddev gb_per_s gb_per_s_stddev\n"
		    "# uio, IOMMU off, session 1\n"
		    "1 10000 0 0.04096 0\n"
		    "4 38000 0 0.155648 0\n"
		    "16 100000 0 0.4096 0\n"
		    "\n\n"
		    "# vfio, IOMMU on, session 2 (this run)\n"
		    "1 9000 0 0.036864 0\n"
		    "4 33000 3000 0.135168 0.012288\n"
		    "16 99000 0 0.405504 0\n"
		    "\n\n"
		    "# uring, IOMMU on, session 3\n"
		    "1 8000 0 0.032768 0\n"
		    "4 31000 0 0.126976 0\n"
		    "16 95000 0 0.38912 0\n");
	assert_file(t->plots, "session-2-latency.dat",
		    "# session 2 and the comparable runs (runs_view): latency per queue depth in"
		    " microseconds\n"
		    "# qd mean_us p99_us\n"
		    "# uio, IOMMU off, session 1\n"
		    "1 95 200\n"
		    "4 100 300\n"
		    "16 160 400\n"
		    "\n\n"
		    "# vfio, IOMMU on, session 2 (this run)\n"
		    "1 105 220\n"
		    "4 120 500\n"
		    "16 161.616 420\n"
		    "\n\n"
		    "# uring, IOMMU on, session 3\n"
		    "1 100 250\n"
		    "4 129 450\n"
		    "16 168 500\n");
	/* only derived pages (a labels plot with no observed count must not crash gnuplot) */
	assert_int_equal(plot(t, 3), 4);
	assert_png(t->plots, "session-3-pages.png");
	/* a session with neither maps nor an io run: no figure */
	assert_int_equal(plot(t, 5), 0);
	snprintf(name, sizeof(name), "%s/session-5-pages.dat", t->plots);
	assert_int_equal(access(name, F_OK), -1);
}

static void refuses_without_gnuplot(void **state)
{
	struct plot_test *t = *state;
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	assert_int_equal(setenv("PATH", t->dir, 1), 0); /* a folder without gnuplot */
	unsetenv("IOMMUTRACE_GNUPLOT");
	assert_int_equal(plot(t, 2), -1);
	assert_string_equal(t->logged, "iommutrace: error: --plot needs gnuplot, which is not"
				       " installed (not in PATH): apt-get install gnuplot-nox\n");
	assert_int_equal(setenv("IOMMUTRACE_GNUPLOT", "/nonexistent/gnuplot", 1), 0);
	assert_int_equal(plot(t, 2), -1);
	assert_string_equal(t->logged,
			    "iommutrace: error: --plot: IOMMUTRACE_GNUPLOT=/nonexistent/"
			    "gnuplot is not an executable file: unset it to use gnuplot from PATH, or"
			    " install gnuplot: apt-get install gnuplot-nox\n");
	unsetenv("IOMMUTRACE_GNUPLOT");
	if (path)
		assert_int_equal(setenv("PATH", path, 1), 0);
	free(path);
	/* nothing was written, not even the folder */
	assert_int_equal(access(t->plots, F_OK), -1);
}

static void reports_a_failing_gnuplot(void **state)
{
	struct plot_test *t = *state;
	char fake[128], expected[512];
	FILE *f;

	snprintf(fake, sizeof(fake), "%s/gnuplot", t->dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	/* run with -d (no start-up files) before the script */
	fputs("#!/bin/sh\n[ \"$1\" = -d ] || exit 9\necho \"$2: no such terminal\" >&2\nexit 3\n",
	      f);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);
	assert_int_equal(setenv("IOMMUTRACE_GNUPLOT", fake, 1), 0);
	assert_int_equal(plot(t, 2), -1);
	unsetenv("IOMMUTRACE_GNUPLOT");
	snprintf(expected, sizeof(expected),
		 "session-2-pages.gp: no such terminal\n"
		 "iommutrace: error: gnuplot (%s) failed on %s/session-2-pages.gp with exit status 3;"
		 " its messages are above\n",
		 fake, t->plots);
	assert_string_equal(t->logged, expected);
}

static bool has_gnuplot(struct plot_test *t, int rc)
{
	if (rc < 0 && strstr(t->logged, "--plot needs gnuplot, which is not installed")) {
		printf("SKIP: no gnuplot here (apt-get install gnuplot-nox): %s", t->logged);
		return false;
	}
	return true;
}

static void exec_sql(struct plot_test *t, const char *sql)
{
	assert_int_equal(sqlite3_exec(t->db.db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* Device, buffer and engine names that gnuplot would run as commands (backquotes, system())
 * or that would end a string, and terminal escapes: every figure is made, nothing is run, and
 * neither the scripts nor the data files carry a control character. */
static void database_strings_are_not_code(void **state)
{
	struct plot_test *t = *state;
	static const char *const what[] = { "pages", "footprint", "throughput", "latency" };
	char sql[1024], name[128], *s;
	size_t len;
	int rc;

	snprintf(sql, sizeof(sql),
		 "UPDATE attaches SET device = '0000:00:04.0\" . system(\"touch %s/pwned1\") . \"'"
		 "  || char(10) || char(27) || '[31m' || char(155) || '`touch %s/pwned2`'"
		 "  WHERE session_id = 2;"
		 "UPDATE io_runs SET buffer = 'hugetlb2m`touch %s/pwned3`'' . system(\"touch x\")'"
		 "  WHERE session_id = 2;"
		 "UPDATE io_runs SET engine = '`touch ../pw4`' WHERE session_id = 3;",
		 t->dir, t->dir, t->dir);
	exec_sql(t, sql);
	unsetenv("IOMMUTRACE_GNUPLOT");
	rc = plot(t, 2);
	if (!has_gnuplot(t, rc))
		skip();
	assert_int_equal(rc, 4);
	assert_null(strstr(t->logged, "error"));
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "session-2-%s.png", what[i]);
		assert_png(t->plots, name);
	}
	for (int i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "%s/pwned%d", t->dir, i);
		assert_int_equal(access(name, F_OK), -1);
	}
	snprintf(name, sizeof(name), "%s/pw4", t->plots);
	assert_int_equal(access(name, F_OK), -1);
	snprintf(name, sizeof(name), "%s/pw4", t->dir);
	assert_int_equal(access(name, F_OK), -1);
	for (int i = 0; i < 4; i++) {
		for (int gp = 0; gp < 2; gp++) {
			snprintf(name, sizeof(name), "session-2-%s.%s", what[i], gp ? "gp" : "dat");
			s = read_file(t->plots, name, &len);
			for (size_t j = 0; j < len; j++) {
				if ((unsigned char)s[j] < 0x20 && s[j] != '\n')
					fail_msg("%s holds control character %#x", name, s[j]);
				if ((unsigned char)s[j] == 0xc2 && (unsigned char)s[j + 1] < 0xa0)
					fail_msg("%s holds a C1 control character", name);
			}
			if (gp)
				assert_null(strchr(s, '`'));
			free(s);
		}
	}
	/* the line break, ESC and U+009B (CSI to some terminals) as '?', one per byte */
	s = read_file(t->plots, "session-2-footprint.dat", &len);
	snprintf(sql, sizeof(sql),
		 "\n# domain 0xffff888101234000 (0000:00:04.0\" . system(\"touch"
		 " %s/pwned1\") . \"??[31m??`touch %s/pwned2`)\n",
		 t->dir, t->dir);
	assert_non_null(strstr(s, sql));
	free(s);
}

/* DIR a link to a folder; a link, a FIFO or a folder at a figure's name in DIR: refused in one
 * line, nothing written through the link, the FIFO never opened. */
static void writes_only_its_own_files(void **state)
{
	struct plot_test *t = *state;
	char victim[128], link[160], expected[512];
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", t->dir);
	assert_int_equal(mkdir(victim, 0755), 0);
	assert_int_equal(symlink(victim, t->plots), 0);
	unsetenv("IOMMUTRACE_GNUPLOT");
	if (!has_gnuplot(t, plot(t, 2)))
		skip();
	snprintf(expected, sizeof(expected),
		 "iommutrace: error: --plot %s: is a symbolic link,"
		 " which iommutrace does not write through: give a folder (made when absent)\n",
		 t->plots);
	assert_string_equal(t->logged, expected);
	assert_int_equal(rmdir(victim), 0); /* empty */

	assert_int_equal(unlink(t->plots), 0);
	assert_int_equal(mkdir(t->plots, 0755), 0);
	snprintf(link, sizeof(link), "%s/session-2-pages.png", t->plots);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(plot(t, 2), -1);
	snprintf(expected, sizeof(expected),
		 "iommutrace: error: --plot: %s is a symbolic link:"
		 " iommutrace does not write through links; give the path of a file, or remove the"
		 " link\n",
		 link);
	assert_string_equal(t->logged, expected);
	assert_int_equal(lstat(victim, &st), -1); /* not made through the link */
	assert_int_equal(unlink(link), 0);

	assert_int_equal(mkfifo(link, 0644), 0);
	assert_int_equal(plot(t, 2), -1);
	snprintf(expected, sizeof(expected),
		 "iommutrace: error: --plot: %s is a FIFO, not a file:"
		 " give the path of a file\n",
		 link);
	assert_string_equal(t->logged, expected);
	assert_int_equal(unlink(link), 0);
	/* and with the names free, the figures are made; no work folder is left */
	assert_int_equal(plot(t, 2), 4);
	assert_int_equal(system("test $(ls -A /tmp/iommutrace-plot-*/plots | grep -c '^\\.') = 0"),
			 0);
}

/* gnuplot reads no start-up file (a ~/.gnuplot that runs a command, as HOME could name under
 * sudo -E), and is never taken from a relative or empty PATH entry (the working folder). */
static void trusts_no_startup_file_or_relative_path(void **state)
{
	struct plot_test *t = *state;
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char rc_file[128], ran[128], cwd[256], fake[128];
	FILE *f;
	int rc;

	snprintf(rc_file, sizeof(rc_file), "%s/.gnuplot", t->dir);
	snprintf(ran, sizeof(ran), "%s/rc-ran", t->dir);
	f = fopen(rc_file, "w");
	assert_non_null(f);
	fprintf(f, "system(\"touch %s\")\n", ran);
	fclose(f);
	assert_int_equal(setenv("HOME", t->dir, 1), 0);
	unsetenv("IOMMUTRACE_GNUPLOT");
	rc = plot(t, 2);
	if (home)
		setenv("HOME", home, 1);
	free(home);
	if (!has_gnuplot(t, rc))
		skip();
	assert_int_equal(rc, 4);
	assert_int_equal(access(ran, F_OK), -1);

	/* a gnuplot in the working folder, found only through "." or an empty entry */
	snprintf(fake, sizeof(fake), "%s/gnuplot", t->dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\ntouch %s\n", ran);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(t->dir), 0);
	assert_int_equal(setenv("PATH", ".::/nonexistent", 1), 0);
	rc = plot(t, 2);
	assert_int_equal(chdir(cwd), 0);
	if (path)
		setenv("PATH", path, 1);
	free(path);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(t->logged, "--plot needs gnuplot, which is not installed"));
	assert_int_equal(access(ran, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(makes_the_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_without_gnuplot, setup, teardown),
		cmocka_unit_test_setup_teardown(reports_a_failing_gnuplot, setup, teardown),
		cmocka_unit_test_setup_teardown(database_strings_are_not_code, setup, teardown),
		cmocka_unit_test_setup_teardown(writes_only_its_own_files, setup, teardown),
		cmocka_unit_test_setup_teardown(trusts_no_startup_file_or_relative_path, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("report --plot", tests, NULL, NULL);
}
