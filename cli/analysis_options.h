/* The options every analyzer command (report, audit align, audit bar) takes, beside its own:
 * the database, --session N, and the output format (--json, --csv, --format text|json|csv). */
#ifndef IOMMUTRACE_CLI_ANALYSIS_OPTIONS_H
#define IOMMUTRACE_CLI_ANALYSIS_OPTIONS_H

#include <getopt.h>
#include <stdint.h>
#include "analyzer/render.h"

struct analysis_opts {
	const char *db_path;
	int64_t session; /* -1: every session */
	enum render_format format;
};

/* The long options to put in a command's table (ANALYSIS_LONG_OPTIONS, then its own), their
 * short letters in ANALYSIS_SHORT_OPTIONS. */
#define ANALYSIS_LONG_OPTIONS \
	{ "session", required_argument, NULL, 'S' }, { "json", no_argument, NULL, 'J' }, \
		{ "csv", no_argument, NULL, 'C' }, \
	{ \
		"format", required_argument, NULL, 'F' \
	}
#define ANALYSIS_SHORT_OPTIONS "S:JCF:"
/* The usage lines of those options, for --help. */
/* the --help text, laid out as printed */
/* clang-format off */
#define ANALYSIS_OPTIONS_HELP \
"  -S, --session N       only session N (default: every session in the database)\n" \
"  -J, --json            JSON: one document, a section per table (rows as objects)\n" \
"  -C, --csv             CSV: per table a '# NAME: TITLE' line, a header and the rows\n" \
"  -F, --format FORMAT   text (default), json or csv\n"
/* clang-format on */

void analysis_opts_init(struct analysis_opts *o);
/**
 * analysis_option() - Take @opt when it is one of the shared options.
 * @opt: as cli_getopt returned it
 * @command: the subcommand, named in the error
 *
 * Return: 0 taken, 1 not one of them, -1 a bad value (logged, one line).
 */
int analysis_option(struct analysis_opts *o, int opt, const char *arg, const char *command);
/**
 * analysis_db_argument() - After the options, take the one DB argument at argv[optind].
 *
 * Return: 0, or -1 (logged: none, or more than one).
 */
int analysis_db_argument(struct analysis_opts *o, int argc, char **argv, const char *command);

#endif
