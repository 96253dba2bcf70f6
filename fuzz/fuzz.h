/* The fuzz targets' contract: each fuzz/fuzz_NAME.c defines
 *     int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 * which must never crash, leak or trip a sanitizer, whatever the bytes, and returns 0. Built two
 * ways: with clang's libFuzzer (`make fuzz`: build-fuzz/fuzz/fuzz_NAME, ASan and UBSan), and with
 * fuzz/replay_main.c into $(BUILD)/fuzz/replay_NAME, which `make unit-test` runs over the seed
 * corpus tests/fuzz/corpus/NAME and the inputs that once crashed, tests/fuzz/regressions/NAME. */
#ifndef IOMMUTRACE_FUZZ_H
#define IOMMUTRACE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (a NUL inside ends it early, as for a C reader); NULL when
 * out of memory. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
