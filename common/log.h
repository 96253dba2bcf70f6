/* Logging: one line per message on stderr, prefixed "iommutrace: ". Errors say what failed and
 * what to do. Debug lines appear only with -v (log_verbose set). */
#ifndef IOMMUTRACE_LOG_H
#define IOMMUTRACE_LOG_H

#include <stdarg.h>

extern int log_verbose;

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_vdebug(const char *fmt, va_list ap);

#endif
