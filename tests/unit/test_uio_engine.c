/* The uio engine without a device, on a sysfs fixture: which IOMMU domains it refuses (physical
 * addresses reach memory only with the IOMMU off or in passthrough), and its open going through
 * the target's sysfs root: the device found there, already on uio_pci_generic, gets bus mastering
 * in the tree's config file and its resource0 mapped, until the buffer (of no size here) fails.
 * Devices are in a domain no machine has, so that a root ignored can never reach a real one. Reads
 * and writes on the real NVMe run in the testbed (tests/vm/guest). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/engine.h"
/* The engine's own file, for its static parts; its ops under a name of their own, since the test
 * links the library's io_engine_uio too (engine.h, included first, declares that one). */
#define io_engine_uio uio_engine_under_test
#include "io/uio_engine.c"
#undef io_engine_uio
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "tests/unit/sysfs_fixture.h"

#define PASSTHROUGH "7e57:00:04.0" /* identity domain */
#define TRANSLATED "7e57:00:05.0" /* DMA-FQ domain */
#define NO_GROUP "7e57:00:06.0" /* IOMMU off */
#define NO_TYPE "7e57:00:07.0" /* a group that does not say */
#define CONFIG_BYTES 64
#define COMMAND_BEFORE 0x0400 /* INTx disabled, which bus mastering must keep */

static volatile sig_atomic_t no_stop;
static char root[PATH_MAX];

static void device(const char *bdf, int group)
{
	char target[PATH_MAX];

	fixture_pci_device(root, bdf, "0x1b36\n", "0x0010\n", "0x010802\n", "-1\n", RES_EMPTY);
	if (group < 0)
		return;
	fixture_path(target, "../../../kernel/iommu_groups/%d", group);
	fixture_pci_link(root, bdf, "iommu_group", target);
}

/* A file of size bytes, zero but for the command register. */
static void sized_file(const char *bdf, const char *name, size_t size)
{
	uint16_t command = COMMAND_BEFORE;
	char path[PATH_MAX];
	int fd;

	fixture_path(path, "%s/sys/devices/pci0000:00/%s/%s", root, bdf, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	assert_int_equal(pwrite(fd, &command, sizeof(command), PCI_COMMAND), sizeof(command));
	close(fd);
}

static uint16_t command_register(const char *bdf)
{
	char path[PATH_MAX];
	uint16_t command = 0;
	int fd;

	fixture_path(path, "%s/sys/devices/pci0000:00/%s/config", root, bdf);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &command, sizeof(command), PCI_COMMAND), sizeof(command));
	close(fd);
	return command;
}

static int make_machine(void **state)
{
	char run[PATH_MAX];

	fixture_create(root);
	device(PASSTHROUGH, 2);
	device(TRANSLATED, 3);
	device(NO_GROUP, -1);
	device(NO_TYPE, 10);
	fixture_group(root, 2, "identity\n");
	fixture_group(root, 3, "DMA-FQ\n");
	fixture_mkdir(root, "sys/kernel/iommu_groups/10");
	fixture_pci_link(root, PASSTHROUGH, "driver", "../../../bus/pci/drivers/uio_pci_generic");
	sized_file(PASSTHROUGH, "config", CONFIG_BYTES);
	sized_file(PASSTHROUGH, "resource0", BAR0_MAP_BYTES);
	/* uio_pci_generic loaded: only the domain check keeps TRANSLATED from being bound */
	fixture_write(root, "sys/bus/pci/drivers/uio_pci_generic/unbind", "");
	fixture_write(root, "sys/bus/pci/drivers_probe", "");
	fixture_write(root, "sys/devices/pci0000:00/" TRANSLATED "/driver_override", "(null)\n");
	fixture_path(run, "%s/run", root);
	return setenv("IOMMUTRACE_RUN_DIR", run, 1);
}

static int remove_machine(void **state)
{
	fixture_destroy(root);
	return unsetenv("IOMMUTRACE_RUN_DIR");
}

static void refuses_a_translated_domain(void **state)
{
	assert_int_equal(check_untranslated(root, PASSTHROUGH), 0);
	assert_int_equal(check_untranslated(root, NO_GROUP), 0);
	assert_int_equal(check_untranslated(root, TRANSLATED), -1);
	assert_int_equal(check_untranslated(root, NO_TYPE), -1);
}

static void sets_bus_mastering_and_keeps_the_rest(void **state)
{
	assert_int_equal(set_bus_master(root, PASSTHROUGH), 0);
	assert_int_equal(command_register(PASSTHROUGH),
			 COMMAND_BEFORE | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	assert_int_equal(set_bus_master(root, TRANSLATED), -1); /* no config file */
}

static void opens_through_the_targets_root(void **state)
{
	struct io_engine e = { .ops = &uio_engine_under_test };
	struct io_target t = { .bdf = PASSTHROUGH,
			       .nsid = 1,
			       .buffer_size = 0,
			       .max_qd = 4,
			       .max_bs = 4096,
			       .stop = &no_stop,
			       .sysfs_root = root };
	struct uio_engine *u;
	char text[64];

	assert_int_equal(buffer_parse("hugetlb2m", &t.buffer), 0);
	assert_int_equal(e.ops->open(&e, &t), -1);
	u = e.priv;
	assert_non_null(u);
	assert_false(u->dev.bound); /* already on uio_pci_generic */
	assert_ptr_equal(u->dev.sysfs_root, root);
	assert_ptr_equal(u->io.sysfs_root, root);
	assert_non_null(u->bar0);
	assert_int_equal(command_register(PASSTHROUGH),
			 COMMAND_BEFORE | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	assert_int_equal(e.ops->close(&e), 0);
	assert_null(e.priv);

	t.bdf = TRANSLATED;
	assert_int_equal(e.ops->open(&e, &t), -1);
	assert_false(((struct uio_engine *)e.priv)->dev.bound);
	assert_null(((struct uio_engine *)e.priv)->bar0);
	assert_int_equal(e.ops->close(&e), 0);
	fixture_read(root, "sys/devices/pci0000:00/" TRANSLATED "/driver_override", text,
		     sizeof(text));
	assert_string_equal(text, "(null)\n");
	fixture_read(root, "sys/bus/pci/drivers_probe", text, sizeof(text));
	assert_string_equal(text, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(refuses_a_translated_domain, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(sets_bus_mastering_and_keeps_the_rest, make_machine,
						remove_machine),
		cmocka_unit_test_setup_teardown(opens_through_the_targets_root, make_machine,
						remove_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
