/* The schema the commands open databases with: every layer's part, in the order they are
 * created (the storage layer adds its own, meta and sessions, first). */
#ifndef IOMMUTRACE_CLI_DB_SCHEMA_H
#define IOMMUTRACE_CLI_DB_SCHEMA_H

#include "common/db.h"

extern const struct itdb_schema iommutrace_schema;

#endif
