/* The analyzer's part of the schema (struct itdb_schema_part, common/db.h): map_pieces and
 * map_pieces_state (lifetimes.h), the summary tables (summary.h), live_mappings_view,
 * live_bytes_view and the views of views.h. Documented in docs/schema.md. */
#ifndef IOMMUTRACE_ANALYZER_SCHEMA_H
#define IOMMUTRACE_ANALYZER_SCHEMA_H

#include "common/db.h"

/* The index of map_pieces, which the lifetimes sweep drops for its bulk and makes again
 * (analyzer/piece_writer.c). */
#define ANALYZER_MAP_PIECES_INDEX_SQL \
	"CREATE INDEX IF NOT EXISTS map_pieces_by_session ON" \
	" map_pieces(session_id, domain_ptr, mapped_ns)"

extern const struct itdb_schema_part analyzer_schema;

#endif
