/* The analyzer commands' shared options (see analysis_options.h). */
#include <getopt.h>
#include "common/log.h"
#include "common/parse.h"
#include "cli/analysis_options.h"

void analysis_opts_init(struct analysis_opts *o)
{
	*o = (struct analysis_opts){ .session = -1, .format = RENDER_TEXT };
}

int analysis_option(struct analysis_opts *o, int opt, const char *arg, const char *command)
{
	uint64_t n;

	switch (opt) {
	case 'S':
		if (parse_u64(arg, &n) || n > INT64_MAX) {
			log_error("bad --session '%s': give a session number; see 'iommutrace %s "
				  "--help'",
				  arg, command);
			return -1;
		}
		o->session = (int64_t)n;
		return 0;
	case 'J':
		o->format = RENDER_JSON;
		return 0;
	case 'C':
		o->format = RENDER_CSV;
		return 0;
	case 'F':
		if (render_format_parse(arg, &o->format)) {
			log_error("bad --format '%s': give text, json or csv", arg);
			return -1;
		}
		return 0;
	default:
		return 1;
	}
}

int analysis_db_argument(struct analysis_opts *o, int argc, char **argv, const char *command)
{
	if (optind >= argc) {
		log_error("%s needs a database: iommutrace %s DB; see 'iommutrace %s --help'",
			  command, command, command);
		return -1;
	}
	if (optind + 1 < argc) {
		log_error("unexpected argument '%s'; see 'iommutrace %s --help'", argv[optind + 1],
			  command);
		return -1;
	}
	o->db_path = argv[optind];
	return 0;
}
