/* The uring engine's refusals, which need no NVMe: a BAR window (O_DIRECT cannot pin it) and a
 * device that is not on the nvme driver, each before anything is opened, and close() after a
 * failed open. Reads through it run in the testbed (tests/vm/guest/io-uring). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "io/engine.h"

static volatile sig_atomic_t no_stop;

static void found_by_name(void **state)
{
	assert_ptr_equal(io_engine_find("uring"), &io_engine_uring);
	assert_string_equal(io_engine_uring.name, "uring");
	assert_ptr_equal(io_engine_find("vfio"), &io_engine_vfio);
	assert_ptr_equal(io_engine_find("uio"), &io_engine_uio);
	assert_null(io_engine_find("spdk"));
}

static void refuses_a_bar_buffer(void **state)
{
	struct io_engine e = { .ops = &io_engine_uring };
	struct io_target t = { .bdf = "0000:00:04.0", .nsid = 1, .buffer_size = 2 << 20,
			       .max_qd = 4, .stop = &no_stop };

	assert_int_equal(buffer_parse("bar:0000:00:05.0/2", &t.buffer), 0);
	assert_int_equal(e.ops->open(&e, &t), -1);
	assert_null(e.buffer);
	assert_int_equal(e.ops->close(&e), 0);
	assert_null(e.priv);
}

static void refuses_a_device_off_the_nvme_driver(void **state)
{
	struct io_engine e = { .ops = &io_engine_uring };
	/* a bus number no machine has: no driver link at all */
	struct io_target t = { .bdf = "0000:ff:1f.7", .nsid = 1, .buffer_size = 2 << 20,
			       .max_qd = 4, .stop = &no_stop };

	assert_int_equal(e.ops->open(&e, &t), -1);
	assert_int_equal(e.block_size, 0);
	assert_null(e.buffer);
	assert_int_equal(e.ops->close(&e), 0);
	assert_int_equal(e.ops->close(&e), 0);	/* twice: nothing left to free */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_by_name),
		cmocka_unit_test(refuses_a_bar_buffer),
		cmocka_unit_test(refuses_a_device_off_the_nvme_driver),
	};

	return cmocka_run_group_tests_name("uring engine", tests, NULL, NULL);
}
