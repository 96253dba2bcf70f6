/* Fuzz target: `iommutrace import` of a trace-cmd trace.dat (tracer/import_tracedat.c, through
 * libtracecmd) into a database through the event writer. The input is written to a file first, as
 * libtracecmd reads files; the seed corpus holds real trace.dat files, so mutations reach the
 * header, the event formats and the records. */
#include <stdio.h>
#include <unistd.h>
#include "tracer/import_tracedat.h"
#include "fuzz/fuzz.h"
#include "fuzz/fuzz_sink.h"

static int write_input(const uint8_t *data, size_t size, char path[64])
{
	FILE *f;

	snprintf(path, 64, "/tmp/iommutrace-fuzz-%d.dat", (int)getpid());
	f = fopen(path, "we");
	if (!f)
		return -1;
	if (fwrite(data, 1, size, f) != size) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct itdb_session_end end = { .end_reason = "end-of-input" };
	struct tracedat_info info = { 0 };
	struct ftrace_stats st = { 0 };
	struct event_writer *w;
	sqlite3 *db = fuzz_database();
	char path[64], err[512];
	int64_t sid;

	if (write_input(data, size, path) ||
	    itdb_session_begin(db,
			       &(struct itdb_session_info){ .kind = "import",
							    .imported = 1,
							    .capture = "trace.dat",
							    .derive_pgsize_bitmap =
								    EVENT_WRITER_DEFAULT_PGSIZES },
			       &sid))
		return 0;
	w = event_writer_new(db, sid, NULL);
	if (w &&
	    !import_tracedat(path, &(struct ftrace_sink){ fuzz_sink_event, fuzz_sink_loss, w }, &st,
			     &info, err, sizeof(err)) &&
	    !event_writer_finish(w))
		fuzz_session_end(db, sid, &end);
	event_writer_free(w);
	unlink(path);
	return 0;
}
