/* The schema the commands use (cli/db_schema.c), for tests of the analyzer, which may not link
 * the cli: every part below the analyzer, then the analyzer's. */
#ifndef IOMMUTRACE_TESTS_FULL_SCHEMA_H
#define IOMMUTRACE_TESTS_FULL_SCHEMA_H

#include "analyzer/analyzer_schema.h"
#include "common/schema.h"

static const struct itdb_schema test_full_schema = {
	.parts =
		(const struct itdb_schema_part *const[]){
			&it_host_schema,
			&it_capture_schema,
			&it_map_runs_schema,
			&it_io_runs_schema,
			&analyzer_schema,
		},
	.nparts = 5,
};

#endif
