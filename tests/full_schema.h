/* The schema the commands use (cli/db_schema.c), for tests of the analyzer, which may not link
 * the cli: every part below the analyzer, then the analyzer's. */
#ifndef IOMMUTRACE_TESTS_FULL_SCHEMA_H
#define IOMMUTRACE_TESTS_FULL_SCHEMA_H

#include "analyzer/analyzer_schema.h"
#include "common/schema.h"

static const struct itdb_schema test_full_schema =
	ITDB_SCHEMA(IT_RECORDED_SCHEMA_PARTS, &analyzer_schema);

#endif
