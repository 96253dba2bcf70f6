/* Fuzz target: reading an entry of the binding journal (probes/binding_journal.c), a file under
 * /run that `iommutrace restore` trusts to put devices back: whatever it holds, the read either
 * fails with EINVAL or yields an entry whose fields are well formed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probes/binding_journal.h"
#include "fuzz/fuzz.h"

#define BDF "0000:00:04.0"

static char dir[64], run_dir[64];

/* The folders go with the process: replays run in every make unit-test */
static void remove_dirs(void)
{
	rmdir(dir);
	rmdir(run_dir);
}

static const char *journal_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/iommutrace-fuzz-journal-%d", (int)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST)
			abort();
		setenv("IOMMUTRACE_RUN_DIR", dir, 1);
		snprintf(run_dir, sizeof(run_dir), "%s", dir);
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/bindings");
		if (mkdir(dir, 0700) && errno != EEXIST)
			abort();
		atexit(remove_dirs);
	}
	return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct binding_journal_entry e;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", journal_dir(), BDF);
	f = fopen(path, "we");
	if (!f)
		return 0;
	if (fwrite(data, 1, size, f) != size) {
		fclose(f);
		unlink(path);
		return 0;
	}
	if (fclose(f)) {
		unlink(path);
		return 0;
	}
	if (!binding_journal_read(BDF, &e) &&
	    (strcmp(e.bdf, BDF) || e.pid <= 0 || strlen(e.boot_id) != BINDING_JOURNAL_BOOT_ID_LEN ||
	     strchr(e.orig_driver, '\n') || strchr(e.orig_override, '\n') ||
	     strchr(e.bound_to, '\n')))
		abort();
	unlink(path);
	return 0;
}
