/* Sections of query rows as text, JSON or CSV (see render.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/human_size.h"
#include "common/log.h"
#include "common/untrusted_text.h"
#include "analyzer/render.h"

enum column_kind { COL_PLAIN, COL_BYTES, COL_RATE, COL_PCT, COL_HEX };

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static enum column_kind kind_of(const char *name)
{
	if (ends_with(name, "_bytes_per_s"))
		return COL_RATE;
	if (ends_with(name, "_bytes"))
		return COL_BYTES;
	if (ends_with(name, "_pct"))
		return COL_PCT;
	if (!strcmp(name, "iova") || !strcmp(name, "paddr") || ends_with(name, "_addr") ||
	    ends_with(name, "_ptr") || ends_with(name, "_bitmap") || !strcmp(name, "domain"))
		return COL_HEX;
	return COL_PLAIN;
}

int render_format_parse(const char *s, enum render_format *out)
{
	static const char *const names[] = { "text", "json", "csv" };

	for (int i = 0; i < 3; i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum render_format)i;
			return 0;
		}
	}
	return -1;
}

void render_begin(struct render *r, enum render_format format, FILE *f, const char *command,
		  const char *db_path)
{
	memset(r, 0, sizeof(*r));
	r->format = format;
	r->f = f;
	if (format != RENDER_JSON)
		return;
	json_init(&r->json, f);
	json_begin_object(&r->json, NULL);
	json_string(&r->json, "command", command);
	json_string(&r->json, "database", db_path);
	json_begin_array(&r->json, "sections");
}

static void close_section(struct render *r)
{
	if (r->format != RENDER_JSON || !r->in_section)
		return;
	if (r->notes_open)
		json_end_array(&r->json);
	json_end_object(&r->json);
	r->in_section = r->notes_open = false;
}

/* The cell as text people read; buf has room for 64 bytes. */
static const char *text_cell(sqlite3_stmt *st, int i, enum column_kind kind, char *buf)
{
	int type = sqlite3_column_type(st, i);

	if (type == SQLITE_NULL)
		return "-";
	if (type == SQLITE_INTEGER && kind == COL_BYTES && sqlite3_column_int64(st, i) >= 0)
		return human_size((uint64_t)sqlite3_column_int64(st, i), buf);
	if (type == SQLITE_INTEGER && kind == COL_HEX) {
		snprintf(buf, 64, "0x%llx", (unsigned long long)sqlite3_column_int64(st, i));
		return buf;
	}
	if ((type == SQLITE_INTEGER || type == SQLITE_FLOAT) && kind == COL_RATE &&
	    sqlite3_column_double(st, i) >= 0) {
		char size[HUMAN_SIZE_LEN];

		snprintf(buf, 64, "%s/s", human_size((uint64_t)sqlite3_column_double(st, i), size));
		return buf;
	}
	if ((type == SQLITE_INTEGER || type == SQLITE_FLOAT) && kind == COL_PCT) {
		snprintf(buf, 64, "%.1f%%", sqlite3_column_double(st, i));
		return buf;
	}
	if (type == SQLITE_FLOAT) {
		double v = sqlite3_column_double(st, i);

		/* three significant digits, never an exponent people must decode */
		snprintf(buf, 64, v >= 1000 || v <= -1000 ? "%.0f" : "%.3g", v);
		return buf;
	}
	return (const char *)sqlite3_column_text(st, i);
}

struct text_table {
	int ncols;
	char **cells; /* row-major; the header first */
	size_t nrows, cap; /* rows, header included */
	bool *numeric; /* per column: right-aligned */
};

static int table_add(struct text_table *t, int col, const char *s)
{
	size_t at = t->nrows * (size_t)t->ncols + (size_t)col;

	if (at >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **more = realloc(t->cells, cap * sizeof(*more));

		if (!more)
			return -1;
		t->cells = more;
		t->cap = cap;
	}
	t->cells[at] = strdup(s ? s : "");
	if (!t->cells[at])
		return -1;
	text_for_terminal(t->cells[at]); /* no escape sequence, no line break to tear it */
	return 0;
}

static void table_print(const struct text_table *t, FILE *f)
{
	size_t *width = calloc((size_t)t->ncols, sizeof(*width));

	if (!width)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			size_t n = text_columns(t->cells[r * (size_t)t->ncols + (size_t)c]);

			width[c] = n > width[c] ? n : width[c];
		}
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("  ", f);
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
			bool last = c == t->ncols - 1;
			int pad = (int)(width[c] - text_columns(s));

			if (t->numeric[c])
				fprintf(f, "%*s%s%s", pad, "", s, last ? "" : "  ");
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%s%*s  ", s, pad, "");
		}
		fputc('\n', f);
	}
	free(width);
}

static void table_free(struct text_table *t)
{
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->numeric);
}

static long render_text(struct render *r, sqlite3_stmt *st, const char *title)
{
	struct text_table t = { .ncols = sqlite3_column_count(st) };
	char buf[64];
	long rows = 0;
	int rc = SQLITE_DONE;

	t.numeric = calloc((size_t)t.ncols + 1, sizeof(*t.numeric));
	if (!t.numeric)
		goto oom;
	for (int c = 0; c < t.ncols; c++)
		if (table_add(&t, c, sqlite3_column_name(st, c)))
			goto oom;
	t.nrows = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < t.ncols; c++) {
			int type = sqlite3_column_type(st, c);

			if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
				t.numeric[c] = true;
			if (table_add(&t, c,
				      text_cell(st, c, kind_of(sqlite3_column_name(st, c)), buf)))
				goto oom;
		}
		t.nrows++;
		rows++;
	}
	fprintf(r->f, "\n%s\n", title);
	if (rc == SQLITE_DONE) {
		if (rows)
			table_print(&t, r->f);
		else
			fputs("  (none)\n", r->f);
	}
	table_free(&t);
	return rc == SQLITE_DONE ? rows : -1;
oom:
	table_free(&t);
	log_error("out of memory rendering '%s'", title);
	return -1;
}

static void json_cell(struct json_writer *w, sqlite3_stmt *st, int i)
{
	const char *name = sqlite3_column_name(st, i);

	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		json_null(w, name);
		break;
	case SQLITE_INTEGER:
		if (kind_of(name) == COL_HEX)
			json_hex(w, name, (uint64_t)sqlite3_column_int64(st, i));
		else
			json_int(w, name, sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		json_double(w, name, sqlite3_column_double(st, i));
		break;
	default:
		json_string(w, name, (const char *)sqlite3_column_text(st, i));
	}
}

static long render_json(struct render *r, sqlite3_stmt *st, const char *name, const char *title)
{
	long rows = 0;
	int rc;

	json_begin_object(&r->json, NULL);
	r->in_section = true;
	json_string(&r->json, "name", name);
	json_string(&r->json, "title", title);
	json_begin_array(&r->json, "rows");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_begin_object(&r->json, NULL);
		for (int c = 0; c < sqlite3_column_count(st); c++)
			json_cell(&r->json, st, c);
		json_end_object(&r->json);
		rows++;
	}
	json_end_array(&r->json);
	return rc == SQLITE_DONE ? rows : -1;
}

/* RFC 4180: quoted when it holds a comma, quote or line break. Text that a spreadsheet would take
 * for a formula (starting with = + - @, a tab or a carriage return) is quoted with a ' first. */
static void csv_field(FILE *f, const char *s, bool text)
{
	bool formula = text && *s && strchr("=+-@\t\r", *s);

	if (!formula && !strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static long render_csv(struct render *r, sqlite3_stmt *st, const char *name, const char *title)
{
	int ncols = sqlite3_column_count(st), rc;
	long rows = 0;
	char buf[64];

	fprintf(r->f, "# %s: %s\n", name, title);
	for (int c = 0; c < ncols; c++) {
		fputs(c ? "," : "", r->f);
		csv_field(r->f, sqlite3_column_name(st, c), false);
	}
	fputc('\n', r->f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < ncols; c++) {
			int type = sqlite3_column_type(st, c);

			fputs(c ? "," : "", r->f);
			if (type == SQLITE_INTEGER &&
			    kind_of(sqlite3_column_name(st, c)) == COL_HEX) {
				snprintf(buf, sizeof(buf), "0x%llx",
					 (unsigned long long)sqlite3_column_int64(st, c));
				fputs(buf, r->f);
			} else if (type == SQLITE_FLOAT) {
				fprintf(r->f, "%.17g", sqlite3_column_double(st, c));
			} else if (type != SQLITE_NULL) {
				csv_field(r->f, (const char *)sqlite3_column_text(st, c),
					  type == SQLITE_TEXT);
			}
		}
		fputc('\n', r->f);
		rows++;
	}
	return rc == SQLITE_DONE ? rows : -1;
}

long render_statement(struct render *r, sqlite3_stmt *st, const char *name, const char *title)
{
	long rows;

	if (r->format == RENDER_CSV && r->sections)
		fputc('\n', r->f);
	r->sections++;
	close_section(r);
	rows = r->format == RENDER_TEXT ? render_text(r, st, title) :
	       r->format == RENDER_JSON ? render_json(r, st, name, title) :
					  render_csv(r, st, name, title);
	r->in_section = true;
	if (rows < 0) {
		log_error("reading '%s': %s", title, sqlite3_errmsg(sqlite3_db_handle(st)));
		r->failed = true;
	}
	sqlite3_reset(st);
	return rows;
}

long render_query(struct render *r, sqlite3 *db, const char *name, const char *title,
		  const char *sql, int64_t session_id)
{
	sqlite3_stmt *st = NULL;
	long rows;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		log_error("preparing '%s': %s", title, sqlite3_errmsg(db));
		r->failed = true;
		return -1;
	}
	if (session_id >= 0)
		sqlite3_bind_int64(st, 1, session_id);
	rows = render_statement(r, st, name, title);
	sqlite3_finalize(st);
	return rows;
}

void render_note(struct render *r, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (r->format != RENDER_JSON) /* a note may quote the database */
		text_for_terminal(line);
	switch (r->format) {
	case RENDER_TEXT:
		fprintf(r->f, "  %s\n", line);
		break;
	case RENDER_CSV:
		fprintf(r->f, "# note: %s\n", line);
		break;
	case RENDER_JSON:
		if (!r->in_section)
			return;
		if (!r->notes_open)
			json_begin_array(&r->json, "notes");
		r->notes_open = true;
		json_string(&r->json, NULL, line);
		break;
	}
}

int render_end(struct render *r)
{
	int rc = 0;

	if (r->format == RENDER_JSON) {
		close_section(r);
		json_end_array(&r->json);
		json_end_object(&r->json);
		rc = json_finish(&r->json);
	} else if (fflush(r->f) || ferror(r->f)) {
		rc = -1;
	}
	if (rc)
		log_error("writing the output failed");
	return r->failed ? -1 : rc;
}
