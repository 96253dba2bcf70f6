/* Running the traced COMMAND (see traced_command.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/log.h"
#include "tracer/traced_command.h"

int traced_command_fork(struct traced_command *cmd, char *const argv[])
{
	int go[2], exec_err[2];
	char byte;
	int err;

	memset(cmd, 0, sizeof(*cmd));
	if (pipe2(go, O_CLOEXEC))
		goto fail;
	if (pipe2(exec_err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	cmd->pid = fork();
	if (cmd->pid < 0) {
		close(go[0]);
		close(go[1]);
		close(exec_err[0]);
		close(exec_err[1]);
		goto fail;
	}
	if (cmd->pid == 0) {
		close(go[1]);
		close(exec_err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		/* EOF without a byte: the recorder gave up before starting us */
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		err = errno;
		if (write(exec_err[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(exec_err[1]);
	cmd->go_fd = go[1];
	cmd->exec_err_fd = exec_err[0];
	return 0;
fail:
	log_error("cannot start the command: %s", strerror(errno));
	return -1;
}

int traced_command_start(struct traced_command *cmd, const char *name)
{
	int err = 0;
	ssize_t n;

	/* EPIPE (SIGPIPE is ignored): the child died waiting, e.g. of the user's Ctrl-C */
	n = write(cmd->go_fd, "g", 1);
	close(cmd->go_fd);
	cmd->go_fd = -1;
	if (n == 1) {
		do
			n = read(cmd->exec_err_fd, &err, sizeof(err));
		while (n < 0 && errno == EINTR);
	}
	close(cmd->exec_err_fd);
	cmd->exec_err_fd = -1;
	if (n == 0)
		return 0;
	if (waitpid(cmd->pid, &cmd->status, 0) == cmd->pid)
		cmd->exited = true;
	log_error("cannot run '%s': %s", name, n == sizeof(err) ? strerror(err) : "start failed");
	return -1;
}

bool traced_command_poll(struct traced_command *cmd)
{
	if (!cmd->exited && cmd->pid > 0 && waitpid(cmd->pid, &cmd->status, WNOHANG) == cmd->pid)
		cmd->exited = true;
	return cmd->exited;
}

void traced_command_stop(struct traced_command *cmd, int grace_ms)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (cmd->pid <= 0 || traced_command_poll(cmd))
		return;
	kill(cmd->pid, SIGTERM);
	for (int waited = 0; waited < grace_ms; waited += 10) {
		if (traced_command_poll(cmd))
			return;
		nanosleep(&tick, NULL);
	}
	kill(cmd->pid, SIGKILL);
	if (waitpid(cmd->pid, &cmd->status, 0) == cmd->pid)
		cmd->exited = true;
}

int traced_command_exit_code(const struct traced_command *cmd)
{
	if (WIFEXITED(cmd->status))
		return WEXITSTATUS(cmd->status);
	if (WIFSIGNALED(cmd->status))
		return 128 + WTERMSIG(cmd->status);
	return -1;
}
