/* Text from outside made inert (common/untrusted_text.h): for a terminal (C0 and C1 controls, DEL
 * and bytes that are not UTF-8 as '?', one per byte; valid UTF-8 kept), its width in columns, as
 * a gnuplot single-quoted string (only plain characters), and as a shell word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/untrusted_text.h"

static void terminal(void **state)
{
	char s[64];

	snprintf(s, sizeof(s),
		 "a\x1b[2Jb\x07\n\t\x7f\xc2\x9b"
		 "c\xc2\x85\xc2\xa0\xc3\xa9\xe2\x82\xac");
	assert_string_equal(text_for_terminal(s), "a?[2Jb??????c??\xc2\xa0\xc3\xa9\xe2\x82\xac");
	/* not UTF-8: a lone continuation byte, an overlong form, a surrogate, a cut sequence */
	snprintf(s, sizeof(s), "\x80x\xc0\xafy\xed\xa0\x80z\xe2\x82");
	assert_string_equal(text_for_terminal(s), "?x??y???z??");
	snprintf(s, sizeof(s), "plain 0000:00:04.0");
	assert_string_equal(text_for_terminal(s), "plain 0000:00:04.0");
}

static void columns(void **state)
{
	assert_int_equal(text_columns(""), 0);
	assert_int_equal(text_columns("abc"), 3);
	assert_int_equal(text_columns("\xc3\xa9t\xc3\xa9 \xe2\x82\xac"), 5);
}

static char *gnuplot(const char *s)
{
	static char out[256];
	FILE *f = fmemopen(out, sizeof(out), "w");

	gnuplot_string(f, s);
	fclose(f);
	return out;
}

static void gnuplot_strings(void **state)
{
	assert_string_equal(gnuplot("vfio, IOMMU on (translated), session 2"),
			    "'vfio, IOMMU on (translated), session 2'");
	assert_string_equal(gnuplot("a`id`b\"c'd\\e@f$g\nh"), "'a?id?b?c?d?e?f?g?h'");
	assert_string_equal(gnuplot("\xc3\xa9"), "'?"
						 "?'");
}

static void shell_words(void **state)
{
	char w[32];

	assert_string_equal(shell_word(w, sizeof(w), "/tmp/a-b_c.db"), "/tmp/a-b_c.db");
	assert_string_equal(shell_word(w, sizeof(w), "my db; rm x"), "'my db; rm x'");
	assert_string_equal(shell_word(w, sizeof(w), "it's"), "'it'\\''s'");
	assert_string_equal(shell_word(w, sizeof(w), ""), "''");
	/* cut to fit, still one quoted word */
	assert_string_equal(shell_word(w, 8, "a b c d e f"), "'a b c'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(terminal),
		cmocka_unit_test(columns),
		cmocka_unit_test(gnuplot_strings),
		cmocka_unit_test(shell_words),
	};

	return cmocka_run_group_tests_name("untrusted text", tests, NULL, NULL);
}
