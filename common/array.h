/* Growing arrays of records one element at a time, with the size arithmetic checked. */
#ifndef IOMMUTRACE_ARRAY_H
#define IOMMUTRACE_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

/**
 * array_grow() - Reallocate @items (@n elements of @elem bytes) to hold @n + 1.
 *
 * Return: the new array, or NULL when out of memory or the size would overflow (@items is then
 * unchanged and still owned by the caller).
 */
static inline void *array_grow(void *items, size_t n, size_t elem)
{
	if (n >= SIZE_MAX / elem - 1)
		return NULL;
	return realloc(items, (n + 1) * elem);
}

#endif
