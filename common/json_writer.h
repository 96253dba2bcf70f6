/* A small streaming JSON writer for --json output: objects, arrays, strings, integers,
 * booleans and null, indented two spaces, commas placed by the writer. Strings are escaped
 * per RFC 8259; bytes that are not valid UTF-8 become U+FFFD, so the document is always valid
 * whatever the input. Keys are given by the caller (NULL for array elements and the top
 * level). Write errors and unbalanced nesting are reported by json_finish(). */
#ifndef IOMMUTRACE_JSON_WRITER_H
#define IOMMUTRACE_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *f;
	unsigned depth; /* open containers */
	char kind[JSON_MAX_DEPTH + 1]; /* '{' or '[' of the container at each depth */
	bool has_members[JSON_MAX_DEPTH + 1]; /* something was written at this depth */
	bool bad_nesting;
};

void json_init(struct json_writer *w, FILE *f);
void json_begin_object(struct json_writer *w, const char *key);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w, const char *key);
void json_end_array(struct json_writer *w);
/**
 * json_string() - Write the string @s; a NULL @s writes null.
 */
void json_string(struct json_writer *w, const char *key, const char *s);
void json_int(struct json_writer *w, const char *key, int64_t v);
/**
 * json_double() - Write the number @v; a non-finite @v writes null.
 */
void json_double(struct json_writer *w, const char *key, double v);
void json_bool(struct json_writer *w, const char *key, bool v);
void json_null(struct json_writer *w, const char *key);
/**
 * json_hex() - Write @v as a string of "0x" and lowercase hex digits.
 *
 * For registers and addresses, which exceed the integers JSON readers hold exactly (2^53).
 */
void json_hex(struct json_writer *w, const char *key, uint64_t v);

/**
 * json_finish() - End the document with a newline and flush.
 *
 * Return: 0, or -1 when nesting was unbalanced or a write failed.
 */
int json_finish(struct json_writer *w);

/**
 * json_write_string() - Write @s to @f as a quoted, escaped JSON string.
 */
void json_write_string(FILE *f, const char *s);

#endif
