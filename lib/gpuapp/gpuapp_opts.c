/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "gpuapp_opts.h"

/*
 * The messages go through rte_log on the caller's logtype. Most programs
 * parse after rte_eal_init(), but rte_log also works before it (to
 * stderr, at the logtype's registered level, --log-level not yet read),
 * and DPDK 22.11 adds no prefix: the text is what fprintf wrote before.
 */
#define OPT_LOG(logtype, level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)(logtype), __VA_ARGS__)

/* getopt_long's value of the long-only entry i: past every char. */
#define OPT_VAL_BASE 256

/* Width of the "  --name VALUE" column of --help, and the most it grows. */
#define HELP_COL_MAX 21

static uint64_t
uint_max_of(size_t size)
{
	return size >= 8 ? UINT64_MAX : (UINT64_C(1) << (size * 8)) - 1;
}

static int
digits_start(const char *s)
{
	/* strtoull() would take spaces, a sign, and negate a '-'. */
	return s[0] >= '0' && s[0] <= '9';
}

/*
 * A plain decimal number, as a user writes one: digits, a point, an
 * exponent, a leading '-'. strtod() also takes spaces, "inf", "nan" and
 * hex ("0x1p4"), none of which anyone means on a command line.
 */
static int
plain_decimal(const char *s)
{
	if (s[0] == '-')
		s++;
	if (!digits_start(s) && s[0] != '.')
		return 0;
	return s[strspn(s, "0123456789.eE+-")] == '\0';
}

/* arg as a number of the entry's kind, without the range check. */
static int
to_uint(const struct gpuapp_opt *opt, const char *arg, uint64_t *v)
{
	unsigned long long x;
	unsigned int shift = 0;
	char *end;

	if (!digits_start(arg))
		return -EINVAL;
	errno = 0;
	/* Decimal only: base 0 read 010 as eight and 0x40 as 64. */
	x = strtoull(arg, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno != 0 || end == arg)
		return -EINVAL;
	if (opt->kind == GPUAPP_OPT_SIZE && *end != '\0' && end[1] == '\0') {
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -EINVAL;
		}
		end++;
	}
	if (*end != '\0')
		return -EINVAL;
	if (shift != 0 && x > (UINT64_MAX >> shift))
		return -ERANGE;
	*v = (uint64_t)x << shift;
	return 0;
}

int
gpuapp_opt_uint(const struct gpuapp_opt *opt, const char *arg, int logtype,
		uint64_t *v)
{
	uint64_t x = 0;
	int ret = to_uint(opt, arg, &x);

	if (ret == 0 && (x < opt->min || x > opt->max))
		ret = -ERANGE;
	if (ret != 0) {
		OPT_LOG(logtype, ERR, "--%s: '%s' is not a %s in [%llu, %llu]%s\n",
			opt->name, arg,
			opt->kind == GPUAPP_OPT_SIZE ? "size" : "number",
			(unsigned long long)opt->min,
			(unsigned long long)opt->max,
			opt->kind == GPUAPP_OPT_SIZE ?
				" (suffix k, M or G: x 1024^n)" : "");
		return ret;
	}
	*v = x;
	return 0;
}

int
gpuapp_opt_double(const struct gpuapp_opt *opt, const char *arg,
		int logtype, double *v)
{
	int open_min = (opt->flags & GPUAPP_OPT_F_MIN_OPEN) != 0;
	int ret = 0;
	char *end;
	double x;

	errno = 0;
	x = plain_decimal(arg) ? strtod(arg, &end) : 0;
	if (!plain_decimal(arg) || end == arg || *end != '\0' || !isfinite(x))
		ret = -EINVAL;
	else if (errno == ERANGE || x < opt->dmin || x > opt->dmax ||
			(open_min && x == opt->dmin))
		ret = -ERANGE;
	if (ret == 0) {
		*v = x;
		return 0;
	}
	if (opt->dmax >= DBL_MAX)
		OPT_LOG(logtype, ERR, "--%s: '%s' is not a number %s %g\n",
			opt->name, arg, open_min ? ">" : ">=", opt->dmin);
	else
		OPT_LOG(logtype, ERR, "--%s: '%s' is not a number in %c%g, %g]\n",
			opt->name, arg, open_min ? '(' : '[', opt->dmin,
			opt->dmax);
	return ret;
}

static void
store_uint(void *dst, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)dst = (uint8_t)v; break;
	case 2: *(uint16_t *)dst = (uint16_t)v; break;
	case 4: *(uint32_t *)dst = (uint32_t)v; break;
	default: *(uint64_t *)dst = v; break;
	}
}

/* A table the parser cannot honour is the program's bug: said, refused. */
static int
check_table(const struct gpuapp_opt *table, size_t n, int logtype)
{
	for (size_t i = 0; i < n; i++) {
		const struct gpuapp_opt *o = &table[i];
		const char *why = NULL;

		if (o->name == NULL || o->name[0] == '\0')
			why = "no name";
		else if (o->letter < 0 || o->letter > 127 || o->letter == ':' ||
				o->letter == '?')
			why = "a letter getopt cannot take";
		else if ((o->kind == GPUAPP_OPT_UINT ||
				o->kind == GPUAPP_OPT_SIZE) &&
				(o->dst_size != 1 && o->dst_size != 2 &&
				 o->dst_size != 4 && o->dst_size != 8))
			why = "an integer size that is not 1, 2, 4 or 8";
		else if ((o->kind == GPUAPP_OPT_UINT ||
				o->kind == GPUAPP_OPT_SIZE) &&
				(o->min > o->max ||
				 o->max > uint_max_of(o->dst_size)))
			why = "a range its integer cannot hold";
		else if (o->kind == GPUAPP_OPT_DOUBLE && !(o->dmin <= o->dmax))
			why = "an empty range";
		else if (o->kind == GPUAPP_OPT_CHOICE &&
				(o->choices == NULL || o->choices[0] == NULL ||
				 o->dst_size != sizeof(int)))
			why = "no choices, or not an int to store one in";
		else if (o->kind == GPUAPP_OPT_CALLBACK && o->cb == NULL)
			why = "no callback";
		else if (o->kind != GPUAPP_OPT_CALLBACK &&
				o->kind != GPUAPP_OPT_HELP && o->dst == NULL)
			why = "nowhere to store its value";
		for (size_t j = 0; why == NULL && j < i; j++) {
			if (strcmp(table[j].name, o->name) == 0)
				why = "a name given twice";
			else if (o->letter != 0 && table[j].letter == o->letter)
				why = "a letter given twice";
		}
		if (why != NULL) {
			OPT_LOG(logtype, ERR, "option table entry %zu (--%s): %s\n",
				i, o->name != NULL ? o->name : "", why);
			return -EINVAL;
		}
	}
	return 0;
}

static int
takes_value(const struct gpuapp_opt *o)
{
	if (o->kind == GPUAPP_OPT_FLAG || o->kind == GPUAPP_OPT_HELP)
		return 0;
	return o->kind != GPUAPP_OPT_CALLBACK || o->arg_name != NULL;
}

void
gpuapp_opts_usage(const struct gpuapp_opt *table, size_t n,
		const char *usage, const char *prog, FILE *f)
{
	int col = 0;

	fprintf(f, usage, prog);
	fputc('\n', f);
	/* The help column starts after the widest name that is not too wide. */
	for (size_t i = 0; i < n; i++) {
		const struct gpuapp_opt *o = &table[i];
		int w = 4 + (int)strlen(o->name) + (o->letter != 0 ? 4 : 0) +
			(takes_value(o) && o->arg_name != NULL ?
				1 + (int)strlen(o->arg_name) : 0);

		if (w <= HELP_COL_MAX && w > col)
			col = w;
	}
	for (size_t i = 0; i < n; i++) {
		const struct gpuapp_opt *o = &table[i];
		const char *h = o->help != NULL ? o->help : "";
		int w;

		if (o->letter != 0)
			w = fprintf(f, "  -%c, --%s", o->letter, o->name);
		else
			w = fprintf(f, "  --%s", o->name);
		if (takes_value(o) && o->arg_name != NULL)
			w += fprintf(f, " %s", o->arg_name);
		/* Wider than the column: the help follows after two spaces. */
		fprintf(f, "%*s", w <= col ? col + 2 - w : 2, "");
		for (;;) {
			const char *nl = strchr(h, '\n');

			if (nl == NULL) {
				fprintf(f, "%s\n", h);
				break;
			}
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, col + 2, "");
			h = nl + 1;
		}
	}
}

static int
take_choice(const struct gpuapp_opt *o, const char *arg, int logtype)
{
	char list[256];
	size_t len = 0, k;

	for (k = 0; o->choices[k] != NULL; k++) {
		if (strcmp(arg, o->choices[k]) == 0) {
			*(int *)o->dst = (int)(o->min + k);
			return 0;
		}
	}
	/* "a, b or c", as the programs have always said it. */
	list[0] = '\0';
	for (size_t i = 0; i < k && len < sizeof(list); i++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s%s",
			i == 0 ? "" : i + 1 == k ? " or " : ", ", o->choices[i]);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	OPT_LOG(logtype, ERR, "--%s: '%s' is not %s\n", o->name, arg, list);
	return -EINVAL;
}

static int
take_value(const struct gpuapp_opt *o, const char *arg, int logtype)
{
	uint64_t v;
	double d;
	int ret;

	switch (o->kind) {
	case GPUAPP_OPT_FLAG:
		*(int *)o->dst = 1;
		return 0;
	case GPUAPP_OPT_STRING:
		if (arg[0] == '\0' && !(o->flags & GPUAPP_OPT_F_EMPTY_OK)) {
			OPT_LOG(logtype, ERR, "--%s: empty value\n", o->name);
			return -EINVAL;
		}
		*(const char **)o->dst = arg;
		return 0;
	case GPUAPP_OPT_UINT:
	case GPUAPP_OPT_SIZE:
		ret = gpuapp_opt_uint(o, arg, logtype, &v);
		if (ret == 0)
			store_uint(o->dst, o->dst_size, v);
		return ret;
	case GPUAPP_OPT_DOUBLE:
		ret = gpuapp_opt_double(o, arg, logtype, &d);
		if (ret == 0)
			*(double *)o->dst = d;
		return ret;
	case GPUAPP_OPT_CHOICE:
		return take_choice(o, arg, logtype);
	case GPUAPP_OPT_CALLBACK:
		return o->cb(o, arg, logtype);
	default:
		return -EINVAL;
	}
}

/* first_operand NULL: an argument left after the options is an error. */
static int
parse(const struct gpuapp_opt *table, size_t n, const char *usage,
		int logtype, int argc, char **argv, int *first_operand)
{
	const char *prog = argc > 0 ? argv[0] : "?";
	struct option *lo = NULL;
	char *letters = NULL;
	size_t nl = 0;
	int ret, c;

	ret = check_table(table, n, logtype);
	if (ret != 0)
		return ret;
	lo = calloc(n + 1, sizeof(*lo));
	/* ':' first: a missing value is told apart from an unknown option. */
	letters = calloc(2 * n + 2, 1);
	if (lo == NULL || letters == NULL) {
		OPT_LOG(logtype, ERR, "options: out of memory\n");
		ret = -ENOMEM;
		goto out;
	}
	letters[nl++] = ':';
	for (size_t i = 0; i < n; i++) {
		lo[i].name = table[i].name;
		lo[i].has_arg = takes_value(&table[i]) ? required_argument :
			no_argument;
		lo[i].val = table[i].letter != 0 ? table[i].letter :
			OPT_VAL_BASE + (int)i;
		if (table[i].letter != 0) {
			letters[nl++] = (char)table[i].letter;
			if (takes_value(&table[i]))
				letters[nl++] = ':';
		}
	}

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, letters, lo, NULL)) != -1) {
		const struct gpuapp_opt *o = NULL;

		if (c == '?' || c == ':') {
			const char *what = argv[optind - 1];

			if (c == ':')
				OPT_LOG(logtype, ERR, "%s: missing value\n", what);
			else if (optopt != 0 && optopt < OPT_VAL_BASE &&
					strncmp(what, "--", 2) != 0)
				OPT_LOG(logtype, ERR, "unknown option '-%c'\n",
					optopt);
			else
				OPT_LOG(logtype, ERR, "unknown option '%s'\n",
					what);
			ret = -EINVAL;
			break;
		}
		for (size_t i = 0; i < n && o == NULL; i++)
			if (lo[i].val == c)
				o = &table[i];
		if (o == NULL) {
			ret = -EINVAL;
			break;
		}
		if (o->kind == GPUAPP_OPT_HELP) {
			gpuapp_opts_usage(table, n, usage, prog, stdout);
			ret = 1;
			goto out;
		}
		ret = take_value(o, optarg, logtype);
		if (ret != 0)
			goto out;
	}
	if (ret == 0 && optind < argc && first_operand == NULL) {
		OPT_LOG(logtype, ERR, "unexpected argument '%s'\n", argv[optind]);
		ret = -EINVAL;
	}
	if (ret == 0 && first_operand != NULL)
		*first_operand = optind;
	if (ret != 0)
		gpuapp_opts_usage(table, n, usage, prog, stderr);
out:
	free(letters);
	free(lo);
	return ret;
}

int
gpuapp_opts_parse(const struct gpuapp_opt *table, size_t n,
		const char *usage, int logtype, int argc, char **argv)
{
	return parse(table, n, usage, logtype, argc, argv, NULL);
}

int
gpuapp_opts_parse_operands(const struct gpuapp_opt *table, size_t n,
		const char *usage, int logtype, int argc, char **argv,
		int *first_operand)
{
	if (first_operand == NULL) {
		OPT_LOG(logtype, ERR, "options: no place for the operands\n");
		return -EINVAL;
	}
	return parse(table, n, usage, logtype, argc, argv, first_operand);
}
