/* Exit codes of every subcommand, listed in `iommutrace --help` and the man page. */
#ifndef IOMMUTRACE_EXIT_CODES_H
#define IOMMUTRACE_EXIT_CODES_H

enum it_exit {
	IT_EXIT_OK = 0,
	IT_EXIT_FAILURE = 1, /* runtime failure: I/O, database, sysfs */
	IT_EXIT_USAGE = 2, /* bad option or argument */
	IT_EXIT_BPF = 3, /* BPF could not be loaded or attached, and no fallback worked */
	IT_EXIT_PRIVILEGE = 4, /* missing capability */
	IT_EXIT_SKIP = 77, /* tests: the feature is missing here (automake's skip code) */
};

#endif
