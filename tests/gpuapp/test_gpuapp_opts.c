/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table-driven option parser (lib/gpuapp/gpuapp_opts.h): every kind,
 * ranges, junk, unknown options, missing values, the generated --help.
 * No EAL: rte_log works before rte_eal_init(), which is also what lets
 * the programs parse before it; the messages are captured from its stream
 * and must carry no prefix (the e2e scripts grep them from the start).
 */

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "gpuapp_eal.h"
#include "gpuapp_opts.h"
#include "check.h"

static int logtype;
static char *logbuf;
static size_t loglen;
static FILE *logf;

struct vals {
	int flag;
	const char *str;
	const char *maybe_empty;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	uint64_t size;
	double d;
	double pos;
	int choice;
	unsigned int calls;
	const char *last;
};

static struct vals v;

static int
count_cb(const struct gpuapp_opt *opt, const char *arg, int lt)
{
	struct vals *x = opt->dst;
	uint64_t n;

	if (gpuapp_opt_uint(opt, arg, lt, &n) != 0)
		return -ERANGE;
	if (n % 2 != 0) {
		rte_log(RTE_LOG_ERR, (uint32_t)lt, "--%s: %s is odd\n",
			opt->name, arg);
		return -EDOM;
	}
	x->calls++;
	x->last = arg;
	return 0;
}

static const char *const colours[] = { "red", "green", "blue", NULL };

static const struct gpuapp_opt table[] = {
	GPUAPP_OPT_FLAG_ENTRY("flag", &v.flag, "a flag"),
	GPUAPP_OPT_STRING_ENTRY("str", &v.str, "TEXT", "a string"),
	{ .name = "maybe", .kind = GPUAPP_OPT_STRING,
	  .flags = GPUAPP_OPT_F_EMPTY_OK, .dst = &v.maybe_empty,
	  .arg_name = "TEXT", .help = "a string, empty allowed" },
	GPUAPP_OPT_UINT_ENTRY("u8", &v.u8, 1, 200, "N", "uint8"),
	GPUAPP_OPT_UINT_ENTRY("u16", &v.u16, 0, UINT16_MAX, "N", "uint16"),
	{ .name = "u32", .letter = 'n', .kind = GPUAPP_OPT_UINT,
	  .dst = &v.u32, .dst_size = sizeof(v.u32), .min = 2,
	  .max = UINT32_MAX, .arg_name = "N",
	  .help = "uint32, also -n,\nwith a second line" },
	GPUAPP_OPT_UINT_ENTRY("u64", &v.u64, 0, UINT64_MAX, "N", "uint64"),
	GPUAPP_OPT_SIZE_ENTRY("size", &v.size, 1, UINT64_C(1) << 40, "BYTES",
		"a size"),
	GPUAPP_OPT_DOUBLE_ENTRY("d", &v.d, -1.5, 86400, "S", "a double"),
	{ .name = "pos", .kind = GPUAPP_OPT_DOUBLE,
	  .flags = GPUAPP_OPT_F_MIN_OPEN, .dst = &v.pos, .dmin = 0,
	  .dmax = DBL_MAX, .arg_name = "S", .help = "above 0" },
	GPUAPP_OPT_CHOICE_ENTRY("colour", &v.choice, 1, colours, "C",
		"red, green or blue"),
	{ .name = "even", .kind = GPUAPP_OPT_CALLBACK, .cb = count_cb,
	  .dst = &v, .min = 0, .max = 100, .arg_name = "N",
	  .help = "an even number, repeatable" },
	GPUAPP_OPT_HELP_ENTRY('h'),
};

/* A new, empty stream for rte_log: what one parse said. */
static int
log_fresh(void)
{
	rte_openlog_stream(NULL);
	if (logf != NULL)
		fclose(logf);
	free(logbuf);
	logbuf = NULL;
	logf = open_memstream(&logbuf, &loglen);
	if (logf == NULL || rte_openlog_stream(logf) != 0)
		return -1;
	fflush(logf);
	return 0;
}

/* Parses the arguments after a program name with the log captured. */
static int
parse(const char *first, ...)
{
	char *argv[32];
	int argc = 0, ret;
	va_list ap;

	argv[argc++] = (char *)"prog";
	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 31;
			a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	memset(&v, 0, sizeof(v));
	if (log_fresh() != 0)
		return -999;
	ret = gpuapp_opts_parse(table, RTE_DIM(table), "Usage: %s [opts]",
		logtype, argc, argv);
	fflush(logf);
	return ret;
}

/* The captured log starts with want. */
static int
said(const char *want)
{
	return strncmp(logbuf, want, strlen(want)) == 0;
}

static void
test_kinds(void)
{
	int ret = parse("--flag", "--str", "x", "--maybe", "", "--u8", "200",
		"--u16", "16", "-n", "7", "--u64", "18446744073709551615",
		"--size", "3k", "--d", "-1.5", "--pos", "1e-9",
		"--colour", "blue", "--even", "4", "--even", "0", NULL);

	CHECK(ret == 0, "parse: %d, log '%s'", ret, logbuf);
	CHECK(v.flag == 1, "flag %d", v.flag);
	CHECK(v.str != NULL && strcmp(v.str, "x") == 0, "str");
	CHECK(v.maybe_empty != NULL && v.maybe_empty[0] == '\0', "empty ok");
	CHECK(v.u8 == 200 && v.u16 == 16 && v.u32 == 7, "u8 %u u16 %u u32 %u",
		v.u8, v.u16, v.u32);
	CHECK(v.u64 == UINT64_MAX, "u64");
	CHECK(v.size == 3072, "size %llu", (unsigned long long)v.size);
	CHECK(v.d == -1.5 && v.pos == 1e-9, "doubles %g %g", v.d, v.pos);
	CHECK(v.choice == 3, "choice %d (first is 1)", v.choice);
	CHECK(v.calls == 2 && strcmp(v.last, "0") == 0, "callback %u",
		v.calls);
	CHECK(logbuf[0] == '\0', "log '%s'", logbuf);

	ret = parse("--size", "2M", "--str=y", NULL);
	CHECK(ret == 0 && v.size == 2u << 20, "2M: %d %llu", ret,
		(unsigned long long)v.size);
	CHECK(v.str != NULL && strcmp(v.str, "y") == 0, "--str=y");
	ret = parse("--size", "1G", NULL);
	CHECK(ret == 0 && v.size == 1u << 30, "1G");
	/* Long options may be abbreviated, as getopt_long always let them. */
	ret = parse("--col", "red", NULL);
	CHECK(ret == 0 && v.choice == 1, "abbreviated: %d", ret);
}

static void
test_ranges(void)
{
	CHECK(parse("--u8", "201", NULL) == -ERANGE, "u8 201");
	CHECK(said("--u8: '201' is not a number in [1, 200]\n"), "'%s'",
		logbuf);
	CHECK(parse("--u8", "0", NULL) == -ERANGE, "u8 0");
	CHECK(parse("--u16", "65536", NULL) == -ERANGE, "u16 65536");
	CHECK(parse("-n", "1", NULL) == -ERANGE, "-n 1");
	CHECK(said("--u32: '1' is not a number in [2, 4294967295]"), "'%s'",
		logbuf);
	CHECK(parse("--u64", "18446744073709551616", NULL) == -ERANGE,
		"u64 overflow");
	CHECK(parse("--size", "1025G", NULL) == -ERANGE, "size over");
	CHECK(said("--size: '1025G' is not a size in [1, 1099511627776]"),
		"'%s'", logbuf);
	CHECK(parse("--size", "0", NULL) == -ERANGE, "size 0");
	CHECK(parse("--d", "86400.5", NULL) == -ERANGE, "d over");
	CHECK(said("--d: '86400.5' is not a number in [-1.5, 86400]\n"),
		"'%s'", logbuf);
	CHECK(parse("--d", "-2", NULL) == -ERANGE, "d under");
	CHECK(parse("--d", "1e999", NULL) == -EINVAL, "d overflow is inf");
	CHECK(parse("--pos", "0", NULL) == -ERANGE, "pos 0");
	CHECK(said("--pos: '0' is not a number > 0\n"), "'%s'", logbuf);
	CHECK(parse("--even", "102", NULL) == -ERANGE, "callback range");
	CHECK(said("--even: '102' is not a number in [0, 100]"), "'%s'",
		logbuf);
	CHECK(parse("--even", "3", NULL) == -EDOM, "callback error");
	CHECK(said("--even: 3 is odd"), "'%s'", logbuf);
}

static void
test_junk(void)
{
	static const char *const bad_uint[] = {
		"", "-1", "+1", " 1", "1x", "x", "1.5", "0x", "1k", "0x10",
	};
	static const char *const bad_size[] = { "1kk", "1T", "k", "-1k", "1 k" };
	static const char *const bad_double[] = {
		"", " 1", "1s", "inf", "-inf", "nan", "infinity", "1,5",
		"0x10", "0x1p4", "-", "--1",
	};

	for (size_t i = 0; i < RTE_DIM(bad_uint); i++) {
		CHECK(parse("--u16", bad_uint[i], NULL) == -EINVAL, "u16 '%s'",
			bad_uint[i]);
		CHECK(said("--u16: '"), "u16 '%s': '%s'", bad_uint[i], logbuf);
	}
	for (size_t i = 0; i < RTE_DIM(bad_size); i++)
		CHECK(parse("--size", bad_size[i], NULL) == -EINVAL,
			"size '%s'", bad_size[i]);
	for (size_t i = 0; i < RTE_DIM(bad_double); i++) {
		CHECK(parse("--d", bad_double[i], NULL) == -EINVAL, "d '%s'",
			bad_double[i]);
		CHECK(said("--d: '"), "d '%s': '%s'", bad_double[i], logbuf);
	}
	CHECK(parse("--str", "", NULL) == -EINVAL, "empty string");
	CHECK(said("--str: empty value\n"), "'%s'", logbuf);
	CHECK(parse("--colour", "pink", NULL) == -EINVAL, "choice");
	CHECK(said("--colour: 'pink' is not red, green or blue\n"), "'%s'",
		logbuf);
	/* Nothing stored from a refused value. */
	CHECK(parse("--u8", "7", "--u8", "999", NULL) < 0 && v.u8 == 7,
		"u8 %u", v.u8);
}

static void
test_usage_errors(void)
{
	CHECK(parse("--nope", NULL) == -EINVAL, "unknown");
	CHECK(said("unknown option '--nope'\n"), "'%s'", logbuf);
	CHECK(parse("-x", NULL) == -EINVAL, "unknown letter");
	CHECK(said("unknown option '-x'\n"), "'%s'", logbuf);
	CHECK(parse("--u8", NULL) == -EINVAL, "missing value");
	CHECK(said("--u8: missing value\n"), "'%s'", logbuf);
	CHECK(parse("-n", NULL) == -EINVAL, "missing value of -n");
	CHECK(said("-n: missing value\n"), "'%s'", logbuf);
	CHECK(parse("--flag=1", NULL) == -EINVAL, "value of a flag");
	CHECK(parse("stray", NULL) == -EINVAL, "stray argument");
	CHECK(said("unexpected argument 'stray'\n"), "'%s'", logbuf);
	/* After "--" everything is an argument, and none is wanted. */
	CHECK(parse("--", "--flag", NULL) == -EINVAL, "after --");
}

static void
test_help(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL, "open_memstream");
	if (f == NULL)
		return;
	gpuapp_opts_usage(table, RTE_DIM(table), "Usage: %s [opts]", "prog",
		f);
	fclose(f);
	CHECK(strncmp(buf, "Usage: prog [opts]\n", 19) == 0, "'%s'", buf);
	/* The help column two after the widest "  --name VALUE". */
	CHECK(strstr(buf, "\n  --flag        a flag\n") != NULL, "'%s'", buf);
	CHECK(strstr(buf, "\n  --size BYTES  a size\n") != NULL, "'%s'", buf);
	CHECK(strstr(buf, "\n  -n, --u32 N   uint32, also -n,\n"
		"                with a second line\n") != NULL, "'%s'", buf);
	CHECK(strstr(buf, "\n  -h, --help    this text\n") != NULL, "'%s'",
		buf);
	CHECK(strstr(buf, "--colour C") != NULL, "'%s'", buf);
	free(buf);

	/* --help: 1, usage on stdout, nothing logged, nothing after it. */
	CHECK(parse("--flag", "-h", "--u8", "0", NULL) == 1, "help");
	CHECK(v.flag == 1 && v.u8 == 0, "stops at --help");
	CHECK(logbuf[0] == '\0', "'%s'", logbuf);
}

static void
test_bad_table(void)
{
	uint8_t small;
	const struct gpuapp_opt too_wide[] = {
		GPUAPP_OPT_UINT_ENTRY("w", &small, 0, 256, "N", ""),
	};
	const struct gpuapp_opt twice[] = {
		GPUAPP_OPT_FLAG_ENTRY("a", &v.flag, ""),
		GPUAPP_OPT_FLAG_ENTRY("a", &v.flag, ""),
	};
	char *argv[] = { (char *)"prog", NULL };

	CHECK(log_fresh() == 0, "log");
	CHECK(gpuapp_opts_parse(too_wide, 1, "%s", logtype, 1, argv) ==
		-EINVAL, "range wider than the integer");
	CHECK(gpuapp_opts_parse(twice, 2, "%s", logtype, 1, argv) == -EINVAL,
		"name twice");
}

/* The program's options before EAL: after EAL's "--", up to the next. */
static void
test_prog_args(void)
{
	char *eal[] = { (char *)"p", (char *)"-l", (char *)"0", (char *)"--",
		(char *)"-w", (char *)"-", (char *)"--", (char *)"--help", NULL };
	char *none[] = { (char *)"p", (char *)"--version", NULL };
	char *empty[] = { (char *)"p", (char *)"--", NULL };
	int end;

	CHECK(gpuapp_prog_args(8, eal, &end) == 4 && end == 6, "after --, to --");
	CHECK(gpuapp_early_option(8, eal) == GPUAPP_EARLY_NONE,
		"--help after the second -- is an operand");
	CHECK(gpuapp_prog_args(2, none, &end) == 1 && end == 2, "no --: all");
	CHECK(gpuapp_early_option(2, none) == GPUAPP_EARLY_VERSION, "--version");
	CHECK(gpuapp_prog_args(2, empty, &end) == 2 && end == 2, "nothing after --");
}

int
main(void)
{
	logtype = rte_log_register_type_and_pick_level("test.gpuapp_opts",
		RTE_LOG_INFO);
	if (logtype < 0) {
		printf("rte_log_register_type_and_pick_level failed\n");
		return 1;
	}
	if (log_fresh() != 0) {
		printf("cannot capture the log\n");
		return 1;
	}

	CHECK_CASE(test_kinds);
	CHECK_CASE(test_ranges);
	CHECK_CASE(test_junk);
	CHECK_CASE(test_usage_errors);
	CHECK_CASE(test_help);
	CHECK_CASE(test_bad_table);
	CHECK_CASE(test_prog_args);

	rte_openlog_stream(NULL);
	fclose(logf);
	free(logbuf);
	return check_finish("gpuapp_opts");
}
