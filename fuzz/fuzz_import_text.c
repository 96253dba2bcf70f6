/* Fuzz target: `iommutrace import` of ftrace text (tracer/import_text.c) into a database through
 * the event writer, as the command does: parsing every line form, then the writer's joins, leaf
 * rule and live-mapping bookkeeping on whatever events the text describes (huge sizes, IOVAs at
 * the top of the address space, unmaps of what was never mapped). One in-memory database for the
 * whole run, one session per input. */
#include <stdio.h>
#include "tracer/import_text.h"
#include "fuzz/fuzz.h"
#include "fuzz/fuzz_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct itdb_session_end end = { .end_reason = "end-of-input" };
	struct ftrace_stats st = { 0 };
	struct event_writer *w = NULL;
	sqlite3 *db = fuzz_database();
	FILE *f = NULL;
	int64_t sid;

	if (!size ||
	    itdb_session_begin(db,
			       &(struct itdb_session_info){ .kind = "import",
							    .imported = 1,
							    .capture = "ftrace-text",
							    .derive_pgsize_bitmap =
								    EVENT_WRITER_DEFAULT_PGSIZES },
			       &sid))
		return 0;
	w = event_writer_new(db, sid, NULL);
	f = fmemopen((void *)data, size, "r");
	if (!w || !f)
		goto out;
	if (!import_text_stream(f, "fuzz",
				&(struct ftrace_sink){ fuzz_sink_event, fuzz_sink_loss, w }, &st) &&
	    !event_writer_finish(w))
		fuzz_session_end(db, sid, &end);
out:
	if (f)
		fclose(f);
	event_writer_free(w);
	return 0;
}
