/* The pattern the testbed writes on its NVMe disk (tests/vm/lib/disk.sh), which --verify checks
 * the data read against and the write workloads write: every 512-byte sector n holds n as a 64-bit little-endian integer, the
 * ASCII magic "IOMMUTRC", then bytes 16..511 with the value (offset & 0xff). */
#ifndef IOMMUTRACE_PATTERN_H
#define IOMMUTRACE_PATTERN_H

#include <stdint.h>

#define PATTERN_SECTOR 512u

/**
 * pattern_mismatch() - Check @len bytes read from byte offset @sector * 512 of the disk.
 * @len: a multiple of 512
 *
 * Return: -1 when they match, or the offset of the first byte that does not.
 */
int64_t pattern_mismatch(const void *data, uint64_t sector, uint64_t len);
/**
 * pattern_fill() - Write into @data the pattern of the @len bytes at byte offset @sector * 512 of
 * the disk: what the write workloads put on a namespace.
 * @len: a multiple of 512
 */
void pattern_fill(void *data, uint64_t sector, uint64_t len);

#endif
