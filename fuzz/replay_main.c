/* Runs a fuzz target over files instead of under libFuzzer (see fuzz.h): each FILE argument, or
 * with none every file of tests/fuzz/corpus/FUZZ_TARGET and tests/fuzz/regressions/FUZZ_TARGET
 * (paths relative to the repository root, where make runs). Prints one line: how many inputs ran.
 * Exits 1 when an input cannot be read or no input was found, 0 otherwise; a crash is a crash. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "fuzz/fuzz.h"

static int run_file(const char *path)
{
	uint8_t *data = NULL;
	long size;
	FILE *f = fopen(path, "rb");
	int ret = -1;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != (size_t)size)
		goto out;
	LLVMFuzzerTestOneInput(data, size);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "replay_%s: cannot read %s: %s\n", FUZZ_TARGET, path,
			strerror(errno));
	free(data);
	if (f)
		fclose(f);
	return ret;
}

/* Every regular file of dir, in name order; a missing dir has none. Returns the count or -1. */
static int run_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), ran = 0;

	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && ran >= 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			ran = run_file(path) ? -1 : ran + 1;
		}
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	int ran = 0, n;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			if (run_file(argv[i]))
				return 1;
		ran = argc - 1;
	} else {
		n = run_dir("tests/fuzz/corpus/" FUZZ_TARGET);
		ran = n < 0 ? -1 : ran + n;
		n = ran < 0 ? -1 : run_dir("tests/fuzz/regressions/" FUZZ_TARGET);
		ran = n < 0 ? -1 : ran + n;
	}
	if (ran <= 0) {
		fprintf(stderr,
			"replay_%s: no inputs ran (tests/fuzz/corpus/%s missing or unreadable)\n",
			FUZZ_TARGET, FUZZ_TARGET);
		return 1;
	}
	printf("replay_%s: %d inputs, no crash\n", FUZZ_TARGET, ran);
	return 0;
}
