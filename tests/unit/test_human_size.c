/* Byte counts in binary units. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/human_size.h"

static void exact_and_fractional_sizes(void **state)
{
	char buf[HUMAN_SIZE_LEN];

	assert_string_equal(human_size(0, buf), "0 B");
	assert_string_equal(human_size(256, buf), "256 B");
	assert_string_equal(human_size(1023, buf), "1023 B");
	assert_string_equal(human_size(1024, buf), "1 KiB");
	assert_string_equal(human_size(1536, buf), "1.5 KiB");
	assert_string_equal(human_size(16384, buf), "16 KiB");
	assert_string_equal(human_size(2ull << 20, buf), "2 MiB");
	assert_string_equal(human_size(246ull << 20, buf), "246 MiB");
	assert_string_equal(human_size(2ull << 30, buf), "2 GiB");
	assert_string_equal(human_size((1ull << 30) + (2ull << 20), buf), "1.001 GiB");
	assert_string_equal(human_size(512ull << 30, buf), "512 GiB");
	assert_string_equal(human_size(1ull << 40, buf), "1 TiB");
	assert_string_equal(human_size(1ull << 51, buf), "2 PiB");
	assert_string_equal(human_size(1ull << 63, buf), "8 EiB");
	assert_string_equal(human_size(UINT64_MAX, buf), "15.999 EiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_and_fractional_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
