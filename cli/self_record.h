/* map -o and io -o: the recorder runs this same command line again and records around it. The
 * copy knows it is the recorded one by the report file it inherits (common/child_report.h): it
 * does the work and writes its report there instead of recording; the recorder then stores that
 * report with the session. */
#ifndef IOMMUTRACE_SELF_RECORD_H
#define IOMMUTRACE_SELF_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>
#include "tracer/bpf_capture.h"

struct self_record {
	const char *db_path;
	bool replace; /* replace an existing database */
	bool append; /* add the session to an existing database */
	/* what becomes a row (tracer/bpf_capture.h). Zero, per-event, is what map -o and io -o
	 * use: their checks (map_pages_check_view, maps at the buffer's IOVA) need a row per
	 * call. threshold_bytes 0: 2 MiB */
	enum capture_mode mode;
	uint64_t threshold_bytes;
	/* stores the report (at the start of report_fd) with the session; 0 or -1 */
	int (*store)(sqlite3 *db, int64_t session_id, int report_fd);
};

/**
 * self_record_check_options() - Check the -o options of map and io: --replace and --append need
 * -o, and exclude each other.
 *
 * Return: 0, or -1 (logged: the caller exits with IT_EXIT_USAGE).
 */
int self_record_check_options(const char *db_path, bool replace, bool append);
/**
 * self_record_run() - Run the command under the recorder.
 * @argv: as the subcommand got it, argv[0] its name
 *
 * Return: the command's exit status when the recording went well, else the recorder's (enum
 * it_exit).
 */
int self_record_run(int argc, char **argv, const struct self_record *r);

#endif
