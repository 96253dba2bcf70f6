/* Rendering the analyzer's results: each section is the rows of one SQL query (mostly a view of
 * the database), written as aligned text for people, or as JSON or CSV for programs. A column is
 * formatted by its name, which carries its unit as the schema's names do:
 *   *_bytes            text: binary units ("2 MiB", "1.5 GiB"); JSON, CSV: the integer
 *   *_bytes_per_s      text: binary units per second ("170.3 MiB/s"); JSON, CSV: the number
 *   *_pct              text: one decimal and "%"; JSON, CSV: the number
 *   iova, paddr, *_addr, domain_ptr, *_ptr, *_bitmap
 *                      text, JSON, CSV: "0x..." (addresses exceed the integers JSON readers hold)
 *   anything else      as SQLite gives it: integer, real (text: 3 significant digits below
 *                      1000, whole numbers from there), text (text: control characters as '?')
 * NULL is "-" in text, null in JSON, an empty field in CSV.
 * JSON is one document: {"command", "database", "sections": [{"name", "title", "rows": [{...}],
 * "notes": [...]}]}. CSV: per section a line "# NAME: TITLE", the header, the rows, notes as
 * "# note: " lines; an empty line between sections. Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_RENDER_H
#define IOMMUTRACE_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "common/json_writer.h"

enum render_format { RENDER_TEXT, RENDER_JSON, RENDER_CSV };

struct render {
	enum render_format format;
	FILE *f;
	struct json_writer json;
	bool in_section; /* JSON: a section object is open */
	bool notes_open; /* JSON: its notes array is open */
	bool failed;
	int sections; /* rendered so far */
};

/**
 * render_format_parse() - Parse "text", "json" or "csv".
 *
 * Return: 0, or -1 for anything else (the caller says why).
 */
int render_format_parse(const char *s, enum render_format *out);
/**
 * render_begin() - Start the output.
 * @command: names what is rendered ("report", "audit align")
 */
void render_begin(struct render *r, enum render_format format, FILE *f, const char *command,
		  const char *db_path);
/**
 * render_statement() - Render every row of @st as one section.
 * @st: prepared and bound; stepped here, reset after
 * @name: a word, for JSON and CSV
 * @title: the title people read
 *
 * Return: the rows, or -1.
 */
long render_statement(struct render *r, sqlite3_stmt *st, const char *name, const char *title);
/**
 * render_query() - Prepare @sql, bind ?1 to @session_id when it is >= 0, and render it as
 * render_statement() does.
 *
 * Return: as render_statement().
 */
long render_query(struct render *r, sqlite3 *db, const char *name, const char *title,
		  const char *sql, int64_t session_id);
/**
 * render_note() - A line of explanation for the section rendered last: text indents it under the
 * table.
 */
void render_note(struct render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/**
 * render_end() - End the output and flush.
 *
 * Return: 0, or -1 when something failed to be written.
 */
int render_end(struct render *r);

#endif
