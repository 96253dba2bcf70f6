/* The list of schema parts (see db_schema.h). */
#include "analyzer/analyzer_schema.h"
#include "cli/db_schema.h"
#include "common/schema.h"

const struct itdb_schema iommutrace_schema =
	ITDB_SCHEMA(IT_RECORDED_SCHEMA_PARTS, &analyzer_schema);
