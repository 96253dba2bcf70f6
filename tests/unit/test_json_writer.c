/* The JSON writer: exact layout, RFC 8259 escaping, invalid UTF-8 replaced, misuse detected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "common/json_writer.h"

struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static void capture_open(struct capture *c)
{
	c->text = NULL;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
}

static const char *capture_close(struct capture *c)
{
	fclose(c->f);
	return c->text;
}

static const char *escaped(const char *s)
{
	static char out[256];
	struct capture c;

	capture_open(&c);
	json_write_string(c.f, s);
	snprintf(out, sizeof(out), "%s", capture_close(&c));
	free(c.text);
	return out;
}

static void escapes_per_rfc8259(void **state)
{
	assert_string_equal(escaped(""), "\"\"");
	assert_string_equal(escaped("DMA-FQ"), "\"DMA-FQ\"");
	assert_string_equal(escaped("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	assert_string_equal(escaped("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
	assert_string_equal(escaped("\x01\x1f\x7f"), "\"\\u0001\\u001f\x7f\"");
}

static void valid_utf8_passes_through(void **state)
{
	/* é (2 bytes), € (3), U+10FFFF and 𝄞 (4) */
	assert_string_equal(escaped("\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9d\x84\x9e"),
			    "\"\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9d\x84\x9e\"");
}

static void invalid_utf8_becomes_replacement(void **state)
{
	assert_string_equal(escaped("a\xff"
				    "b"),
			    "\"a\\ufffdb\"");
	/* overlong '/', a surrogate, above U+10FFFF, a lone continuation byte */
	assert_string_equal(escaped("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	assert_string_equal(escaped("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	assert_string_equal(escaped("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	assert_string_equal(escaped("\x80"), "\"\\ufffd\"");
	/* truncated sequences, at the end and before ASCII */
	assert_string_equal(escaped("\xe2\x82"), "\"\\ufffd\\ufffd\"");
	assert_string_equal(escaped("\xe2\x82z"), "\"\\ufffd\\ufffdz\"");
	assert_string_equal(escaped("\xf0\x9d\x84"), "\"\\ufffd\\ufffd\\ufffd\"");
}

static void document_layout(void **state)
{
	struct json_writer w;
	struct capture c;

	capture_open(&c);
	json_init(&w, c.f);
	json_begin_object(&w, NULL);
	json_string(&w, "name", "dmar0");
	json_null(&w, "version");
	json_string(&w, "driver", NULL);
	json_int(&w, "group", -1);
	json_int(&w, "size_bytes", 2147483648);
	json_bool(&w, "prefetchable", true);
	json_hex(&w, "cap", 0xd2008c22260286ull);
	json_begin_array(&w, "empty");
	json_end_array(&w);
	json_begin_array(&w, "bars");
	json_begin_object(&w, NULL);
	json_int(&w, "bar_index", 2);
	json_end_object(&w);
	json_int(&w, NULL, 7);
	json_end_array(&w);
	json_begin_object(&w, "empty_object");
	json_end_object(&w);
	json_end_object(&w);
	assert_int_equal(json_finish(&w), 0);
	assert_string_equal(capture_close(&c), "{\n"
					       "  \"name\": \"dmar0\",\n"
					       "  \"version\": null,\n"
					       "  \"driver\": null,\n"
					       "  \"group\": -1,\n"
					       "  \"size_bytes\": 2147483648,\n"
					       "  \"prefetchable\": true,\n"
					       "  \"cap\": \"0xd2008c22260286\",\n"
					       "  \"empty\": [],\n"
					       "  \"bars\": [\n"
					       "    {\n"
					       "      \"bar_index\": 2\n"
					       "    },\n"
					       "    7\n"
					       "  ],\n"
					       "  \"empty_object\": {}\n"
					       "}\n");
	free(c.text);
}

static void misuse_is_reported(void **state)
{
	struct json_writer w;
	struct capture c;

	/* unclosed */
	capture_open(&c);
	json_init(&w, c.f);
	json_begin_object(&w, NULL);
	assert_int_equal(json_finish(&w), -1);
	capture_close(&c);
	free(c.text);

	/* a member without a key, a key in an array, a wrong closer, two top-level values */
	capture_open(&c);
	json_init(&w, c.f);
	json_begin_object(&w, NULL);
	json_int(&w, NULL, 1);
	json_end_object(&w);
	assert_int_equal(json_finish(&w), -1);
	capture_close(&c);
	free(c.text);

	capture_open(&c);
	json_init(&w, c.f);
	json_begin_array(&w, NULL);
	json_int(&w, "key", 1);
	json_end_array(&w);
	assert_int_equal(json_finish(&w), -1);
	capture_close(&c);
	free(c.text);

	capture_open(&c);
	json_init(&w, c.f);
	json_begin_array(&w, NULL);
	json_end_object(&w);
	json_end_array(&w);
	assert_int_equal(json_finish(&w), -1);
	capture_close(&c);
	free(c.text);

	capture_open(&c);
	json_init(&w, c.f);
	json_int(&w, NULL, 1);
	json_int(&w, NULL, 2);
	assert_int_equal(json_finish(&w), -1);
	capture_close(&c);
	free(c.text);
}

static void nesting_is_bounded(void **state)
{
	struct json_writer w;
	struct capture c;

	capture_open(&c);
	json_init(&w, c.f);
	for (int i = 0; i < JSON_MAX_DEPTH + 4; i++)
		json_begin_array(&w, NULL);
	for (int i = 0; i < JSON_MAX_DEPTH + 4; i++)
		json_end_array(&w);
	assert_int_equal(json_finish(&w), -1);
	capture_close(&c);
	free(c.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_per_rfc8259),
		cmocka_unit_test(valid_utf8_passes_through),
		cmocka_unit_test(invalid_utf8_becomes_replacement),
		cmocka_unit_test(document_layout),
		cmocka_unit_test(misuse_is_reported),
		cmocka_unit_test(nesting_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
