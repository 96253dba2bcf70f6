/* One-line option errors for every subcommand (see options.h). */
#include <stdio.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "tracer/aggregates.h"
#include "cli/options.h"

int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts,
	       const char *command)
{
	/* getopt reports a missing argument as ':' when optstring starts with it (after a '+') */
	char spec[64];
	/* the argument getopt is about to read (optind 0 asks glibc for a fresh start at 1) */
	int next = optind ? optind : 1;
	const char *arg = next < argc ? argv[next] : "";
	int plus = optstring[0] == '+', opt;

	snprintf(spec, sizeof(spec), "%s:%s", plus ? "+" : "", optstring + plus);
	opterr = 0;
	opt = getopt_long(argc, argv, spec, longopts, NULL);
	if (opt == ':') {
		log_error("option '%s' needs an argument; see 'iommutrace %s --help'", arg,
			  command);
		return '?';
	}
	if (opt != '?')
		return opt;
	if (strncmp(arg, "--", 2))
		log_error("unknown option '-%c'; see 'iommutrace %s --help'", optopt, command);
	else if (optopt)
		log_error("option '%.*s' takes no argument; see 'iommutrace %s --help'",
			  (int)strcspn(arg, "="), arg, command);
	else
		log_error("unknown option '%s'; see 'iommutrace %s --help'", arg, command);
	return '?';
}

bool cli_parse(const struct cli_command *c, int argc, char **argv, void *ctx, int *status)
{
	struct option longs[64];
	char shorts[64];
	size_t n = 0;
	int opt;

	for (const struct option *o = c->long_opts; o && o->name && n < 61; o++)
		longs[n++] = *o;
	longs[n++] = (struct option){ "verbose", no_argument, NULL, 'v' };
	longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[n] = (struct option){ 0 };
	snprintf(shorts, sizeof(shorts), "%svh", c->short_opts);
	*status = IT_EXIT_USAGE;
	while ((opt = cli_getopt(argc, argv, shorts, longs, c->name)) != -1) {
		if (opt == 'v') {
			log_verbose++;
		} else if (opt == 'h') {
			c->usage(stdout);
			*status = IT_EXIT_OK;
			return false;
		} else if (opt == '?' || c->on_option(ctx, opt, optarg)) {
			return false;
		}
	}
	if (c->operands == CLI_NO_OPERANDS && optind < argc) {
		log_error("unexpected argument '%s'; see 'iommutrace %s --help'", argv[optind],
			  c->name);
		return false;
	}
	return true;
}

int cli_parse_capture_mode(const char *arg, enum capture_mode *mode)
{
	static const enum capture_mode modes[] = { CAPTURE_PER_EVENT, CAPTURE_AGGREGATE,
						   CAPTURE_THRESHOLD };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(arg, capture_mode_name(modes[i]))) {
			*mode = modes[i];
			return 0;
		}
	log_error("bad mode '%s': give per-event, aggregate or threshold", arg);
	return -1;
}
