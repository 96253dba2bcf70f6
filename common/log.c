/* Logging to stderr. */
#include <stdio.h>
#include "common/log.h"
#include "common/untrusted_text.h"

int log_verbose;

/* A message may quote what the tool read (a trace line, a device's model, a mount point, an
 * SQLite error naming a crafted table): one line, without escape sequences. */
static void emit(const char *level, const char *fmt, va_list ap)
{
	char line[4096];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "iommutrace: %s%s\n", level, text_for_terminal(line));
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
