/* Recording a command's own run (see self_record.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyzer/analysis.h"
#include "common/child_report.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "tracer/recorder.h"
#include "cli/db_schema.h"
#include "cli/self_record.h"

struct store_ctx {
	const struct self_record *r;
	int fd;
};

static int store(sqlite3 *db, int64_t session_id, void *ctx)
{
	struct store_ctx *s = ctx;

	return s->r->store(db, session_id, s->fd);
}

int self_record_check_options(const char *db_path, bool replace, bool append)
{
	if ((replace || append) && !db_path) {
		log_error("--%s names what to do with the -o database; give -o FILE",
			  replace ? "replace" : "append");
		return -1;
	}
	if (replace && append) {
		log_error("--replace replaces the -o database and --append adds to it: give one");
		return -1;
	}
	return 0;
}

int self_record_run(int argc, char **argv, const struct self_record *r)
{
	char exe[PATH_MAX];
	char **command = calloc((size_t)argc + 3, sizeof(*command));
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct store_ctx ctx = { .r = r, .fd = -1 };
	int status = -1, ret = IT_EXIT_FAILURE, k = 0;
	struct recorder_opts o = { .db_path = r->db_path,
				   .force = r->replace,
				   .append = r->append,
				   .force_option = "--replace",
				   .sysfs_root = "/",
				   .mode = r->mode,
				   .threshold_bytes = r->threshold_bytes,
				   .command = command,
				   .command_status = &status,
				   .store_extra = store,
				   .store_extra_ctx = &ctx,
				   .schema = &iommutrace_schema,
				   .finish = analysis_session_finish };

	if (!command || n < 0) {
		log_error("%s", !command ? "out of memory" :
					   "cannot find this program's path in /proc/self/exe");
		goto cleanup;
	}
	exe[n] = '\0';
	command[k++] = exe;
	if (log_verbose)
		command[k++] = "-v";
	for (int i = 0; i < argc; i++)
		command[k++] = argv[i];
	ctx.fd = child_report_create();
	if (ctx.fd < 0)
		goto cleanup;
	ret = recorder_run(&o);
	/* the recording is complete either way; the command's own failure is the exit status */
	if (ret == IT_EXIT_OK && status > 0)
		ret = status < 128 ? status : IT_EXIT_FAILURE;
cleanup:
	child_report_close(ctx.fd);
	free(command);
	return ret;
}
