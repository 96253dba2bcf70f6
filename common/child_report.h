/* A report from a command that a recorder runs (map -o, io -o) back to that recorder: an
 * anonymous file (memfd) the child inherits, whose number travels in an environment variable.
 * Both ends are this same binary, so what goes in is the writer's and reader's business; this
 * module only passes the file and moves bytes. Functions log one line on failure. */
#ifndef IOMMUTRACE_CHILD_REPORT_H
#define IOMMUTRACE_CHILD_REPORT_H

#include <stddef.h>
#include <sys/types.h>

/**
 * child_report_create() - Parent: a new report file, announced to children in the environment.
 *
 * Call child_report_close() when the child has ended and the report was read.
 *
 * Return: the fd, or -1.
 */
int child_report_create(void);
void child_report_close(int fd);
/**
 * child_report_take() - Child: the fd the parent announced, taken out of the environment.
 *
 * Return: the fd, or -1 when none.
 */
int child_report_take(void);

/**
 * child_report_write() - Write @len bytes at @off.
 *
 * Return: 0, or -1.
 */
int child_report_write(int fd, const void *buf, size_t len, off_t off);
/**
 * child_report_read() - Read @len bytes at @off.
 *
 * Return: 0; 1 when the file ends first; -1 on error.
 */
int child_report_read(int fd, void *buf, size_t len, off_t off);

#endif
