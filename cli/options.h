/* Option parsing shared by the subcommands: getopt_long with one-line errors that name the
 * subcommand and point at its --help. */
#ifndef IOMMUTRACE_CLI_OPTIONS_H
#define IOMMUTRACE_CLI_OPTIONS_H

#include <getopt.h>
#include "tracer/bpf_capture.h"

/* Like getopt_long, with opterr off: returns the option, -1 after the last, or '?' once it has
 * logged why an option is bad (unknown, missing or unexpected argument); the caller then exits
 * with IT_EXIT_USAGE. optstring is getopt's, without a leading ':' (one is implied). */
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts,
	       const char *command);

/* "per-event", "aggregate" or "threshold" into *mode; 0, or -1 (logged, naming the three). */
int cli_parse_capture_mode(const char *arg, enum capture_mode *mode);

#endif
