/* Streaming JSON output with RFC 8259 string escaping. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/json_writer.h"
#include "common/untrusted_text.h"

void json_init(struct json_writer *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

void json_write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		size_t len;

		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*s < 0x20) {
				fprintf(f, "\\u%04x", *s);
			} else if (*s < 0x80) {
				fputc(*s, f);
			} else if ((len = utf8_sequence(s))) {
				fwrite(s, 1, len, f);
				s += len;
				continue;
			} else {
				fputs("\\ufffd", f);
			}
			break;
		}
		s++;
	}
	fputc('"', f);
}

/* Comma, newline and indent before a value, and its key; checks that a key is given exactly
 * inside objects. */
static void begin_value(struct json_writer *w, const char *key)
{
	bool in_object = w->depth && w->kind[w->depth] == '{';

	if ((key != NULL) != in_object || (!w->depth && w->has_members[0]))
		w->bad_nesting = true;
	if (w->depth) {
		if (w->has_members[w->depth])
			fputc(',', w->f);
		fprintf(w->f, "\n%*s", (int)(2 * w->depth), "");
	}
	w->has_members[w->depth] = true;
	if (key) {
		json_write_string(w->f, key);
		fputs(": ", w->f);
	}
}

static void open_container(struct json_writer *w, const char *key, char kind)
{
	if (w->depth == JSON_MAX_DEPTH) {
		w->bad_nesting = true;
		return;
	}
	begin_value(w, key);
	fputc(kind, w->f);
	w->depth++;
	w->kind[w->depth] = kind;
	w->has_members[w->depth] = false;
}

static void close_container(struct json_writer *w, char kind)
{
	if (!w->depth || w->kind[w->depth] != kind) {
		w->bad_nesting = true;
		return;
	}
	if (w->has_members[w->depth])
		fprintf(w->f, "\n%*s", (int)(2 * (w->depth - 1)), "");
	fputc(kind == '{' ? '}' : ']', w->f);
	w->depth--;
}

void json_begin_object(struct json_writer *w, const char *key)
{
	open_container(w, key, '{');
}

void json_end_object(struct json_writer *w)
{
	close_container(w, '{');
}

void json_begin_array(struct json_writer *w, const char *key)
{
	open_container(w, key, '[');
}

void json_end_array(struct json_writer *w)
{
	close_container(w, '[');
}

void json_string(struct json_writer *w, const char *key, const char *s)
{
	begin_value(w, key);
	if (s)
		json_write_string(w->f, s);
	else
		fputs("null", w->f);
}

void json_int(struct json_writer *w, const char *key, int64_t v)
{
	begin_value(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void json_double(struct json_writer *w, const char *key, double v)
{
	char s[32];

	begin_value(w, key);
	/* the shortest of 15 to 17 digits that reads back as v: 0.04096, not 0.040960000000000003 */
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(s, sizeof(s), "%.*g", digits, v);
		if (strtod(s, NULL) == v)
			break;
	}
	if (isfinite(v))
		fputs(s, w->f);
	else
		fputs("null", w->f); /* JSON has no NaN or infinity */
}

void json_bool(struct json_writer *w, const char *key, bool v)
{
	begin_value(w, key);
	fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	fputs("null", w->f);
}

void json_hex(struct json_writer *w, const char *key, uint64_t v)
{
	begin_value(w, key);
	fprintf(w->f, "\"0x%" PRIx64 "\"", v);
}

int json_finish(struct json_writer *w)
{
	fputc('\n', w->f);
	if (fflush(w->f) || ferror(w->f) || w->depth || w->bad_nesting)
		return -1;
	return 0;
}
