/* The list of schema parts (see db_schema.h). */
#include "analyzer/analyzer_schema.h"
#include "cli/db_schema.h"
#include "common/schema.h"

const struct itdb_schema iommutrace_schema = {
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
