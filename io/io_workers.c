/* A thread per device for one point (see io_workers.h). */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "common/log.h"
#include "io/io_workers.h"

/* Holds the threads until all exist, so that the devices' points overlap; or sends them home
 * when one could not be made. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t opened;
	enum { GATE_WAIT, GATE_GO, GATE_ABORT } state;
};

struct thread_arg {
	struct io_worker *w;
	struct gate *gate;
};

static void *worker_main(void *p)
{
	struct thread_arg *a = p;
	struct io_worker *w = a->w;
	bool go;

	if (w->cpu >= 0) {
		cpu_set_t set;
		int err;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (err)
			log_warn("%s: cannot pin its worker to CPU %d (%s); it runs unpinned",
				 w->bdf, w->cpu, strerror(err));
	}
	pthread_mutex_lock(&a->gate->lock);
	while (a->gate->state == GATE_WAIT)
		pthread_cond_wait(&a->gate->opened, &a->gate->lock);
	go = a->gate->state == GATE_GO;
	pthread_mutex_unlock(&a->gate->lock);
	if (!go)
		return NULL;
	w->row.start_mono_ns = clock_ns(CLOCK_MONOTONIC);
	w->rc = w->engine.ops->run(&w->engine, &w->point, &w->row.result);
	w->row.end_mono_ns = clock_ns(CLOCK_MONOTONIC);
	return NULL;
}

static void open_gate(struct gate *g, int state)
{
	pthread_mutex_lock(&g->lock);
	g->state = state;
	pthread_cond_broadcast(&g->opened);
	pthread_mutex_unlock(&g->lock);
}

/* Joins a thread, ticking every second until it ends. */
static void join_ticking(pthread_t t, uint64_t start, io_workers_tick tick, void *ctx)
{
	for (;;) {
		struct timespec deadline;

		if (!tick) {
			pthread_join(t, NULL);
			return;
		}
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec++;
		if (pthread_timedjoin_np(t, NULL, &deadline) == 0)
			return;
		tick(ctx, clock_ns(CLOCK_MONOTONIC) - start);
	}
}

int io_workers_run(struct io_worker *w, size_t n, io_workers_tick tick, void *ctx)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, GATE_WAIT };
	struct thread_arg args[IO_MAX_DEVICES];
	pthread_t threads[IO_MAX_DEVICES];
	size_t started = 0;
	int ret = 0;

	if (n > IO_MAX_DEVICES) {
		log_error("%zu devices: io drives at most %d at once", n, IO_MAX_DEVICES);
		return -1;
	}
	for (; started < n; started++) {
		int err;

		args[started] = (struct thread_arg){ &w[started], &gate };
		w[started].rc = -1;
		memset(&w[started].row.result, 0, sizeof(w[started].row.result));
		err = pthread_create(&threads[started], NULL, worker_main, &args[started]);
		if (err) {
			log_error("cannot start the worker thread of %s: %s", w[started].bdf,
				  strerror(err));
			ret = -1;
			break;
		}
	}
	open_gate(&gate, ret ? GATE_ABORT : GATE_GO);
	for (size_t i = 0; i < started; i++) {
		join_ticking(threads[i], start, ret ? NULL : tick, ctx);
		if (w[i].rc)
			ret = -1;
	}
	return ret;
}
