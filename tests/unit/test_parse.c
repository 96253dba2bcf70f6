/* The parsers of user input (common/parse.c): what each accepts, with its value, and what it
 * refuses, with errno and *out untouched. Inputs the fuzzer found are here too. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "common/parse.h"

#define UNTOUCHED 0x5a5a5a5a5a5a5a5aull

typedef int (*parse_fn)(const char *s, uint64_t *out);

static void accepts(parse_fn fn, const char *s, uint64_t want)
{
	uint64_t v = UNTOUCHED;

	if (fn(s, &v))
		fail_msg("'%s' refused: %s", s, strerror(errno));
	if (v != want)
		fail_msg("'%s' gave %llu, expected %llu", s, (unsigned long long)v,
			 (unsigned long long)want);
}

static void refuses(parse_fn fn, const char *s, int want_errno)
{
	uint64_t v = UNTOUCHED;

	errno = 0;
	if (!fn(s, &v))
		fail_msg("'%s' accepted as %llu", s, (unsigned long long)v);
	assert_int_equal(errno, want_errno);
	assert_true(v == UNTOUCHED);
}

static void sizes(void **state)
{
	accepts(parse_size, "4096", 4096);
	accepts(parse_size, "0x1000", 4096);
	accepts(parse_size, "4K", 4096);
	accepts(parse_size, "3KiB", 3072);
	accepts(parse_size, "2M", 2ull << 20);
	accepts(parse_size, "1G", 1ull << 30);
	accepts(parse_size, "1T", 1ull << 40);
	accepts(parse_size, "0", 0);
	/* a leading zero is decimal, not octal */
	accepts(parse_size, "010", 10);
	accepts(parse_size, "08K", 8 << 10);
	accepts(parse_size, "18446744073709551615", UINT64_MAX);
	refuses(parse_size, "18446744073709551616", ERANGE);
	refuses(parse_size, "16777216T", ERANGE);
	refuses(parse_size, "", EINVAL);
	refuses(parse_size, "-1", EINVAL);
	refuses(parse_size, "+1", EINVAL);
	refuses(parse_size, " 1", EINVAL);
	refuses(parse_size, "1 ", EINVAL);
	refuses(parse_size, "1X", EINVAL);
	accepts(parse_size, "0x1000B", 0x1000b);
	refuses(parse_size, "0x1000K", EINVAL);
	refuses(parse_size, "K", EINVAL);
	refuses(parse_size, NULL, EINVAL);
}

static void numbers(void **state)
{
	accepts(parse_u64, "0", 0);
	accepts(parse_u64, "42", 42);
	accepts(parse_u64, "0x2a", 42);
	accepts(parse_u64, "042", 42);
	accepts(parse_u64, "18446744073709551615", UINT64_MAX);
	refuses(parse_u64, "18446744073709551616", ERANGE);
	refuses(parse_u64, "4K", EINVAL);
	refuses(parse_u64, "-0", EINVAL);
	refuses(parse_u64, "0x", EINVAL);
	refuses(parse_u64, "", EINVAL);
}

static void durations(void **state)
{
	accepts(parse_duration_ns, "1", 1000000000);
	accepts(parse_duration_ns, "0.5", 500000000);
	accepts(parse_duration_ns, ".25s", 250000000);
	accepts(parse_duration_ns, "250ms", 250000000);
	accepts(parse_duration_ns, "10us", 10000);
	accepts(parse_duration_ns, "3m", 180000000000ull);
	accepts(parse_duration_ns, "1h", 3600000000000ull);
	refuses(parse_duration_ns, "0", EINVAL);
	refuses(parse_duration_ns, "0.0001us", EINVAL);
	refuses(parse_duration_ns, "-1", EINVAL);
	refuses(parse_duration_ns, "inf", EINVAL);
	refuses(parse_duration_ns, "nan", EINVAL);
	/* strtod reads hex floats: not a duration */
	refuses(parse_duration_ns, "0x1p3", EINVAL);
	refuses(parse_duration_ns, "1d", EINVAL);
	refuses(parse_duration_ns, "6000000h", ERANGE);
	refuses(parse_duration_ns, "1e400", ERANGE);
	refuses(parse_duration_ns, "", EINVAL);
}

static void bdf_accepts(const char *s, const char *want)
{
	char out[13] = "";

	if (parse_bdf(s, out))
		fail_msg("'%s' refused", s);
	assert_string_equal(out, want);
}

static void bdf_refuses(const char *s)
{
	char out[13] = "untouched";

	errno = 0;
	if (!parse_bdf(s, out))
		fail_msg("'%s' accepted as %s", s, out);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(out, "untouched");
}

static void bdfs(void **state)
{
	bdf_accepts("0000:01:00.0", "0000:01:00.0");
	bdf_accepts("01:00.0", "0000:01:00.0");
	bdf_accepts("FFFF:Ab:1F.7", "ffff:ab:1f.7");
	bdf_refuses("0000:01:20.0");
	bdf_refuses("0000:01:00.8");
	bdf_refuses("0000:01:00");
	bdf_refuses("0000:01:00.0 ");
	bdf_refuses(" 01:00.0");
	bdf_refuses("1:00.0");
	bdf_refuses("00000:01:00.0");
	bdf_refuses("0000-01:00.0");
	bdf_refuses("");
	bdf_refuses(NULL);
	/* found by fuzz/fuzz_parse: sscanf's %2x took the sign, and the bus became ffffffff */
	bdf_refuses("0000:-1:00.0");
	bdf_refuses("0000:+1:00.0");
	bdf_refuses("0000: 1:00.0");
	bdf_refuses("-1:00.0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(numbers),
		cmocka_unit_test(durations),
		cmocka_unit_test(bdfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
