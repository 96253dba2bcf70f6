/* Byte counts for people: binary units, exact when the count is a whole number of the unit
 * ("16 KiB", "2 GiB"), one decimal otherwise ("1.5 MiB"), or three, cut, where one would end in
 * ".0" ("1.001 GiB" for 1 GiB + 2 MiB), plain bytes below 1 KiB ("512 B"). */
#ifndef IOMMUTRACE_HUMAN_SIZE_H
#define IOMMUTRACE_HUMAN_SIZE_H

#include <stdint.h>

#define HUMAN_SIZE_LEN 24

/**
 * human_size() - Write @bytes into @buf, for people.
 *
 * Return: @buf.
 */
const char *human_size(uint64_t bytes, char buf[HUMAN_SIZE_LEN]);

#endif
