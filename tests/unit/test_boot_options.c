/* IOMMU options of the kernel command line: which words are kept, how they split, the flag
 * helpers, and reading /proc/cmdline under a fixture root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/boot_options.h"
#include "tests/unit/sysfs_fixture.h"

struct parsed {
	struct boot_option *opts;
	size_t n;
};

static struct parsed parse(const char *cmdline)
{
	struct parsed p = { NULL, 0 };

	assert_int_equal(boot_options_parse(cmdline, &p.opts, &p.n), 0);
	return p;
}

static void expect_option(const struct parsed *p, size_t i, const char *name, const char *value)
{
	assert_true(i < p->n);
	assert_string_equal(p->opts[i].name, name);
	if (value)
		assert_string_equal(p->opts[i].value, value);
	else
		assert_null(p->opts[i].value);
}

static void keeps_iommu_options_in_order(void **state)
{
	struct parsed p = parse("BOOT_IMAGE=/vmlinuz-6.1.0-18-amd64 root=/dev/vda1 ro "
				"intel_iommu=on,sp_off iommu.strict=0 quiet iommu=pt "
				"console=ttyS0\n");

	assert_int_equal(p.n, 3);
	expect_option(&p, 0, "intel_iommu", "on,sp_off");
	expect_option(&p, 1, "iommu.strict", "0");
	expect_option(&p, 2, "iommu", "pt");
	boot_options_free(p.opts, p.n);
}

static void keeps_every_iommu_family(void **state)
{
	struct parsed p =
		parse("amd_iommu=off amd_iommu_dump amd_iommu_intr=legacy "
		      "intel_iommu_foo=1 iommu.passthrough=1 iommu.forcedac swiotlb=65536,force");

	assert_int_equal(p.n, 7);
	expect_option(&p, 0, "amd_iommu", "off");
	expect_option(&p, 1, "amd_iommu_dump", NULL);
	expect_option(&p, 2, "amd_iommu_intr", "legacy");
	expect_option(&p, 3, "intel_iommu_foo", "1");
	expect_option(&p, 4, "iommu.passthrough", "1");
	expect_option(&p, 5, "iommu.forcedac", NULL);
	expect_option(&p, 6, "swiotlb", "65536,force");
	boot_options_free(p.opts, p.n);
}

static void ignores_unrelated_and_lookalike_words(void **state)
{
	struct parsed p = parse("iommux=1 xiommu=1 iommu_foo=1 intel_iommux=on myintel_iommu=on "
				"swiotlbx=1 amd_iommux=1 iommu.strict.=2 IOMMU=pt intel_iommu2=on");

	/* iommu.strict. still starts with "iommu." */
	assert_int_equal(p.n, 1);
	expect_option(&p, 0, "iommu.strict.", "2");
	boot_options_free(p.opts, p.n);
}

/* the kernel compares '-' and '_' alike; the name is kept as written */
static void dashes_match_underscores(void **state)
{
	struct parsed p = parse("intel-iommu=on amd-iommu-dump");

	assert_int_equal(p.n, 2);
	expect_option(&p, 0, "intel-iommu", "on");
	expect_option(&p, 1, "amd-iommu-dump", NULL);
	assert_true(boot_options_have_flag(p.opts, p.n, "intel_iommu", "on"));
	boot_options_free(p.opts, p.n);
}

static void quotes_group_words_and_are_removed(void **state)
{
	struct parsed p = parse("dyndbg=\"file iommu.c +p\" iommu.passthrough=\"1\" "
				"\"swiotlb=force\" iommu=\"pt nopt\" \"intel_iommu\"");

	assert_int_equal(p.n, 4);
	expect_option(&p, 0, "iommu.passthrough", "1");
	expect_option(&p, 1, "swiotlb", "force");
	expect_option(&p, 2, "iommu", "pt nopt");
	expect_option(&p, 3, "intel_iommu", NULL);
	boot_options_free(p.opts, p.n);
}

static void unterminated_quote_runs_to_the_end(void **state)
{
	struct parsed p = parse("iommu=\"pt intel_iommu=on");

	assert_int_equal(p.n, 1);
	expect_option(&p, 0, "iommu", "pt intel_iommu=on");
	boot_options_free(p.opts, p.n);
}

static void words_after_double_dash_go_to_init(void **state)
{
	struct parsed p = parse("iommu=pt -- iommu=off intel_iommu=on");

	assert_int_equal(p.n, 1);
	expect_option(&p, 0, "iommu", "pt");
	boot_options_free(p.opts, p.n);
}

static void empty_value_and_whitespace(void **state)
{
	struct parsed p = parse("  \t iommu=\t\tintel_iommu=on\n\n  --x iommu.strict=1  ");

	assert_int_equal(p.n, 3);
	expect_option(&p, 0, "iommu", "");
	expect_option(&p, 1, "intel_iommu", "on");
	expect_option(&p, 2, "iommu.strict", "1");
	boot_options_free(p.opts, p.n);
}

static void nothing_to_keep(void **state)
{
	struct parsed p = parse("");

	assert_int_equal(p.n, 0);
	assert_null(p.opts);
	p = parse("   \n");
	assert_int_equal(p.n, 0);
	p = parse("\"\" = \"=\" quiet");
	assert_int_equal(p.n, 0);
}

static void parse_appends(void **state)
{
	struct parsed p = parse("iommu=pt");

	assert_int_equal(boot_options_parse("intel_iommu=on", &p.opts, &p.n), 0);
	assert_int_equal(p.n, 2);
	expect_option(&p, 0, "iommu", "pt");
	expect_option(&p, 1, "intel_iommu", "on");
	boot_options_free(p.opts, p.n);
}

static void value_flags(void **state)
{
	assert_true(boot_option_value_has_flag("on,sp_off", "sp_off"));
	assert_true(boot_option_value_has_flag("sp_off", "sp_off"));
	assert_true(boot_option_value_has_flag("on,sp_off,igfx_off", "sp_off"));
	assert_true(boot_option_value_has_flag(",sp_off,", "sp_off"));
	assert_true(boot_option_value_has_flag("on,sp_off", "on"));
	assert_false(boot_option_value_has_flag("on,sp_offx", "sp_off"));
	assert_false(boot_option_value_has_flag("on,xsp_off", "sp_off"));
	assert_false(boot_option_value_has_flag("on,sp_o", "sp_off"));
	assert_false(boot_option_value_has_flag("", "sp_off"));
	assert_false(boot_option_value_has_flag(",,", "sp_off"));
	assert_false(boot_option_value_has_flag(NULL, "sp_off"));
	assert_false(boot_option_value_has_flag("on", ""));
}

/* the kernel applies each occurrence: both flags below are in effect */
static void flags_across_occurrences(void **state)
{
	struct parsed p = parse("intel_iommu=on iommu=pt intel_iommu=sp_off intel_iommu");

	assert_true(boot_options_have_flag(p.opts, p.n, "intel_iommu", "on"));
	assert_true(boot_options_have_flag(p.opts, p.n, "intel_iommu", "sp_off"));
	assert_false(boot_options_have_flag(p.opts, p.n, "intel_iommu", "igfx_off"));
	assert_false(boot_options_have_flag(p.opts, p.n, "iommu", "sp_off"));
	assert_true(boot_options_have_flag(p.opts, p.n, "iommu", "pt"));
	assert_false(boot_options_have_flag(p.opts, p.n, "amd_iommu", "on"));
	assert_false(boot_options_have_flag(NULL, 0, "intel_iommu", "on"));
	boot_options_free(p.opts, p.n);
}

static void reads_proc_cmdline_under_root(void **state)
{
	char root[PATH_MAX];
	struct boot_option *opts = NULL;
	size_t n = 0;

	fixture_create(root);
	assert_int_equal(boot_options_read(root, &opts, &n), 0);
	assert_int_equal(n, 0);
	fixture_write(root, "proc/cmdline", "quiet intel_iommu=on,sp_off iommu.strict=0\n");
	assert_int_equal(boot_options_read(root, &opts, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(opts[0].name, "intel_iommu");
	assert_string_equal(opts[0].value, "on,sp_off");
	assert_string_equal(opts[1].name, "iommu.strict");
	assert_string_equal(opts[1].value, "0");
	boot_options_free(opts, n);
	fixture_destroy(root);
}

/* a NUL byte makes /proc/cmdline malformed: nothing is kept rather than half of it */
static void cmdline_with_nul_is_refused(void **state)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct boot_option *opts = NULL;
	size_t n = 0;
	FILE *f;

	fixture_create(root);
	fixture_write(root, "proc/cmdline", "");
	fixture_path(path, "%s/proc/cmdline", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite("iommu=pt\0intel_iommu=on\n", 1, 24, f);
	fclose(f);
	assert_int_equal(boot_options_read(root, &opts, &n), 0);
	assert_int_equal(n, 0);
	fixture_destroy(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeps_iommu_options_in_order),
		cmocka_unit_test(keeps_every_iommu_family),
		cmocka_unit_test(ignores_unrelated_and_lookalike_words),
		cmocka_unit_test(dashes_match_underscores),
		cmocka_unit_test(quotes_group_words_and_are_removed),
		cmocka_unit_test(unterminated_quote_runs_to_the_end),
		cmocka_unit_test(words_after_double_dash_go_to_init),
		cmocka_unit_test(empty_value_and_whitespace),
		cmocka_unit_test(nothing_to_keep),
		cmocka_unit_test(parse_appends),
		cmocka_unit_test(value_flags),
		cmocka_unit_test(flags_across_occurrences),
		cmocka_unit_test(reads_proc_cmdline_under_root),
		cmocka_unit_test(cmdline_with_nul_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
