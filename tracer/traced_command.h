/* The COMMAND of `record -- COMMAND`: forked before tracing starts, held until the probes are
 * attached (so its first mapping is seen), then exec'd. */
#ifndef IOMMUTRACE_TRACED_COMMAND_H
#define IOMMUTRACE_TRACED_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct traced_command {
	pid_t pid;
	int go_fd; /* write end: a byte releases the child */
	int exec_err_fd; /* read end: errno if exec failed, EOF once it succeeded */
	bool exited;
	int status; /* wait status once exited */
};

/**
 * traced_command_fork() - Fork the child, which waits.
 *
 * Return: 0 or -1 (logged).
 */
int traced_command_fork(struct traced_command *cmd, char *const argv[]);
/**
 * traced_command_start() - Release the child and wait until it has exec'd.
 *
 * Return: 0, or -1 when exec failed (the reason is logged and the child reaped).
 */
int traced_command_start(struct traced_command *cmd, const char *name);
/**
 * traced_command_poll() - Whether the child has exited (status filled). Non-blocking.
 */
bool traced_command_poll(struct traced_command *cmd);
/**
 * traced_command_stop() - Ask a running child to stop (SIGTERM), wait up to @grace_ms, then
 * SIGKILL.
 */
void traced_command_stop(struct traced_command *cmd, int grace_ms);
/**
 * traced_command_exit_code() - The exit code as a shell reports it: the exit status, or 128 +
 * signal.
 */
int traced_command_exit_code(const struct traced_command *cmd);

#endif
