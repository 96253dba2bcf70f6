/* Subcommands of the iommutrace binary. Each takes argv as after the subcommand name
 * (argv[0] is the subcommand), parses its options from its own table (cli_parse, options.h),
 * prints its own --help, and returns an enum it_exit code. */
#ifndef IOMMUTRACE_COMMANDS_H
#define IOMMUTRACE_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_io(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);

#endif
