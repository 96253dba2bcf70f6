/* SIGINT, SIGTERM and SIGHUP as a request to stop, for every command that runs until asked: the
 * handler only records the signal, and the recorder's loop and the commands that bind devices
 * check it between steps, so every exit path ends the session and puts devices back. */
#ifndef IOMMUTRACE_STOP_SIGNAL_H
#define IOMMUTRACE_STOP_SIGNAL_H

#include <signal.h>

/* The signal that asked to stop, or 0. */
extern volatile sig_atomic_t stop_signal;

/**
 * stop_on_signals() - Install the handler, without SA_RESTART: blocking calls return EINTR.
 */
void stop_on_signals(void);
/**
 * wait_for_stop_signal() - Sleep until one of the three arrives (return at once if one already
 * did).
 */
void wait_for_stop_signal(void);

#endif
