/* Logging to stderr. */
#include <stdio.h>
#include "log.h"

int log_verbose;

static void emit(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "iommutrace: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

void log_vdebug(const char *fmt, va_list ap)
{
	if (log_verbose)
		emit("debug: ", fmt, ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vdebug(fmt, ap);
	va_end(ap);
}
