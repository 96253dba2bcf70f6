/* Option parsing shared by the subcommands: each declares its options as a table (struct
 * cli_command), as xdp-tools' params.h does, and cli_parse walks the command line with it:
 * getopt_long with one-line errors that name the subcommand and point at its --help, and the
 * options every subcommand has (-v, -h) handled once. */
#ifndef IOMMUTRACE_CLI_OPTIONS_H
#define IOMMUTRACE_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include "tracer/bpf_capture.h"

/* What may follow a subcommand's options. */
enum cli_operands {
	CLI_NO_OPERANDS, /* nothing: an operand is refused as unexpected */
	CLI_OPERANDS, /* the subcommand reads them, from argv[optind] on */
};

/**
 * struct cli_command - A subcommand's options.
 * @name: as typed ("record"), for messages
 * @short_opts: getopt's letters of its own options ("+" first: stop at the first operand);
 *	without v and h, which every subcommand has
 * @long_opts: its own long options, each with the letter @on_option sees; ends with {}
 * @usage: prints its --help
 * @on_option: takes one of its options with the argument (NULL when the option has none);
 *	returns 0, or -1 when the value is bad, having said so in one line
 * @operands: what may follow the options
 */
struct cli_command {
	const char *name;
	const char *short_opts;
	const struct option *long_opts;
	void (*usage)(FILE *f);
	int (*on_option)(void *ctx, int opt, const char *arg);
	enum cli_operands operands;
};

/**
 * cli_parse() - Walk a subcommand's command line with its option table.
 * @c: the table
 * @argc: as main's, from the subcommand's name on
 * @argv: as main's
 * @ctx: passed to @c->on_option
 * @status: the exit status to end with when it returns false
 *
 * -v and --verbose raise the log level; -h and --help print the usage. A bad option (unknown,
 * a missing or unexpected argument, a value @c->on_option refuses) or operand is said in one
 * line.
 *
 * Return: true to go on, optind at the first operand; false to end with *@status: IT_EXIT_OK
 * after --help, IT_EXIT_USAGE after a bad option or operand.
 */
bool cli_parse(const struct cli_command *c, int argc, char **argv, void *ctx, int *status);

/**
 * cli_getopt() - getopt_long with one-line errors.
 * @optstring: getopt's, without a leading ':' (one is implied)
 * @command: the subcommand, named in the errors
 *
 * Return: the option, -1 after the last, or '?' once it has logged why an option is bad
 * (unknown, a missing or unexpected argument); the caller then exits with IT_EXIT_USAGE.
 */
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts,
	       const char *command);

/**
 * cli_parse_capture_mode() - Parse "per-event", "aggregate" or "threshold" into *@mode.
 *
 * Return: 0, or -1 (logged, naming the three).
 */
int cli_parse_capture_mode(const char *arg, enum capture_mode *mode);

#endif
