/* CUDA dma-buf exports, against whatever this machine has: sizes refused before the driver is
 * loaded; without libcuda.so.1 one line naming it; with it, a device index past the last one
 * refused with the count, and on a GPU that exports dma-bufs a real 2 MiB export of each kind. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/parse.h"
#include "probes/cuda_export.h"

#define MIB (1ull << 20)

static char logged[1024];

/* cuda_export_create with stderr captured into logged. */
static int create_logged(struct cuda_export *c, int ordinal, bool vmm, uint64_t size)
{
	FILE *tmp = tmpfile();
	int saved, rc;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	rc = cuda_export_create(c, ordinal, vmm, size);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(logged, 1, sizeof(logged) - 1, tmp);
	logged[n] = '\0';
	fclose(tmp);
	return rc;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A failed create leaves nothing behind, and destroy after it, twice, changes nothing. */
static void assert_undone(struct cuda_export *c)
{
	assert_int_equal(c->fd, -1);
	assert_null(c->priv);
	assert_int_equal(c->dptr, 0);
	cuda_export_destroy(c);
	cuda_export_destroy(c);
	assert_int_equal(c->fd, -1);
	assert_null(c->priv);
}

/* Runs first: afterwards libcuda.so.1 must still not be in the process. */
static void refuses_sizes_before_loading_anything(void **state)
{
	static const uint64_t bad[] = { 0, 4095, 4097, 2 * MIB + 512 };
	struct cuda_export c = CUDA_EXPORT_INIT;
	char expected[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(create_logged(&c, 0, i % 2, bad[i]), -1);
		snprintf(expected, sizeof(expected),
			 "iommutrace: error: a gpu buffer's size must "
			 "be a nonzero multiple of 4 KiB, not %llu bytes\n",
			 (unsigned long long)bad[i]);
		assert_string_equal(logged, expected);
		assert_undone(&c);
	}
	assert_null(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD));
}

/* No driver: the loader's reason. A driver: cuInit's failure, or a device past the last one. */
static void refuses_what_this_machine_lacks(void **state)
{
	struct cuda_export c = CUDA_EXPORT_INIT;
	/* RTLD_NODELETE as cuda_export.c: CUDA must stay mapped once cuInit ran */
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	char expected[320];
	int (*init)(unsigned int), (*get_count)(int *);
	int count = 0, rc;

	if (!lib) {
		snprintf(expected, sizeof(expected),
			 "iommutrace: error: gpu buffers need the "
			 "NVIDIA driver's libcuda.so.1, which did not load (%s): install the "
			 "NVIDIA driver\n",
			 dlerror());
		assert_int_equal(create_logged(&c, 0, false, 2 * MIB), -1);
		assert_string_equal(logged, expected);
		assert_undone(&c);
		return;
	}
	*(void **)&init = dlsym(lib, "cuInit");
	*(void **)&get_count = dlsym(lib, "cuDeviceGetCount");
	assert_non_null(init);
	assert_non_null(get_count);
	rc = init(0);
	if (!rc)
		assert_int_equal(get_count(&count), 0);
	dlclose(lib);
	assert_int_equal(create_logged(&c, 4096, true, 2 * MIB), -1);
	print_message("libcuda.so.1 loads here; logged: %s", logged);
	assert_int_equal(lines(logged), 1);
	if (rc) {
		assert_non_null(strstr(logged, "iommutrace: error: cuInit: CUDA_ERROR_"));
	} else {
		snprintf(expected, sizeof(expected),
			 "iommutrace: error: CUDA device 4096 does not "
			 "exist: this machine has %d (0 to %d)\n",
			 count, count - 1);
		assert_string_equal(logged, expected);
	}
	assert_undone(&c);
}

/* Exports 2 MiB from device 0 and checks what came back; skips where the machine cannot. */
static void export_on_device_0(bool vmm)
{
	struct cuda_export c = CUDA_EXPORT_INIT;
	char bdf[13];

	if (create_logged(&c, 0, vmm, 2 * MIB)) {
		if (strstr(logged, "libcuda.so.1, which did not load") ||
		    strstr(logged, "cuInit: ") || strstr(logged, "does not export dma-bufs")) {
			printf("SKIP: no CUDA device 0 that exports dma-bufs here: %s", logged);
			skip();
		}
		fail_msg("exporting 2 MiB from CUDA device 0 failed: %s", logged);
	}
	print_message("CUDA device 0: %s at %s, %s export, fd %d, dptr %#llx, granularity %llu, "
		      "pcie_mapping %d\n",
		      c.name, c.bdf, vmm ? "vmm" : "cuMemAlloc", c.fd, (unsigned long long)c.dptr,
		      (unsigned long long)c.granularity, c.pcie_mapping);
	assert_string_equal(logged, "");
	assert_true(c.fd >= 0);
	/* a dma-buf's size is where SEEK_END lands */
	assert_int_equal(lseek(c.fd, 0, SEEK_END), 2 * MIB);
	assert_int_equal(c.size, 2 * MIB);
	assert_int_not_equal(c.dptr, 0);
	assert_int_equal(parse_bdf(c.bdf, bdf), 0);
	assert_string_equal(c.bdf, bdf);
	assert_true(c.name[0] != '\0');
	if (vmm) {
		assert_true(c.granularity > 0);
		assert_int_equal(c.alloc_size % c.granularity, 0);
		assert_true(c.alloc_size >= c.size);
	} else {
		assert_int_equal(c.granularity, 0);
		assert_int_equal(c.alloc_size, c.size);
	}
	cuda_export_destroy(&c);
	assert_undone(&c);
}

static void exports_cumemalloc(void **state)
{
	export_on_device_0(false);
}

static void exports_vmm(void **state)
{
	export_on_device_0(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refuses_sizes_before_loading_anything),
		cmocka_unit_test(refuses_what_this_machine_lacks),
		cmocka_unit_test(exports_cumemalloc),
		cmocka_unit_test(exports_vmm),
	};

	return cmocka_run_group_tests_name("CUDA dma-buf export", tests, NULL, NULL);
}
