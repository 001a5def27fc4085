/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUAPP_OPTS_H
#define GPUAPP_OPTS_H

/*
 * One table-driven option parser for the programs and benchmarks. A
 * program keeps its own table of entries (name, letter, kind, where the
 * value goes, help); this builds getopt_long's arrays from it, parses
 * every value strictly (the whole string, in range, finite), writes
 * --help from the same table, and says what is wrong with an option
 * through rte_log on the program's logtype, so --log-level reaches those
 * messages too.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum gpuapp_opt_kind {
	GPUAPP_OPT_FLAG,	/* no value: the int at dst becomes 1 */
	GPUAPP_OPT_STRING,	/* dst: const char *, the argv string itself */
	GPUAPP_OPT_UINT,	/* dst: unsigned integer of dst_size bytes, in
				 * [min, max]; decimal digits only */
	GPUAPP_OPT_SIZE,	/* as UINT, and a k, M or G suffix (x 1024^n) */
	GPUAPP_OPT_DOUBLE,	/* dst: double, finite, in [dmin, dmax];
				 * plain decimal (no hex, inf, nan) */
	GPUAPP_OPT_CHOICE,	/* dst: int (or enum), min + the index of the
				 * value among choices */
	GPUAPP_OPT_CALLBACK,	/* cb(entry, value, logtype); a value unless
				 * arg_name is NULL */
	GPUAPP_OPT_HELP,	/* --help: the usage on stdout, parse returns 1 */
};

/* STRING: the empty string is a value (else refused). */
#define GPUAPP_OPT_F_EMPTY_OK 0x1u
/* DOUBLE: dmin itself is refused, (dmin, dmax]. */
#define GPUAPP_OPT_F_MIN_OPEN 0x2u

struct gpuapp_opt;

/*
 * A callback entry's handler: 0, or a negative errno after saying why
 * through rte_log on logtype. arg is NULL for an entry without a value.
 */
typedef int (*gpuapp_opt_cb)(const struct gpuapp_opt *opt, const char *arg,
		int logtype);

struct gpuapp_opt {
	const char *name;	/* long name, without "--" */
	int letter;		/* short option, or 0 */
	enum gpuapp_opt_kind kind;
	unsigned int flags;	/* GPUAPP_OPT_F_* */
	void *dst;		/* where the value goes; a callback's context */
	size_t dst_size;	/* UINT, SIZE: 1, 2, 4 or 8 */
	uint64_t min, max;	/* UINT, SIZE; a callback's, if it wants */
	double dmin, dmax;	/* DOUBLE; a callback's, if it wants */
	const char *const *choices;	/* CHOICE: names, NULL-terminated */
	gpuapp_opt_cb cb;
	const char *arg_name;	/* the value in --help ("N", "FILE") */
	const char *help;	/* lines split by '\n' */
};

/* Table entries. H is the help text, A the value's name in it. */
#define GPUAPP_OPT_FLAG_ENTRY(N, P, H) \
	{ .name = (N), .kind = GPUAPP_OPT_FLAG, .dst = (P), .help = (H) }
#define GPUAPP_OPT_STRING_ENTRY(N, P, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_STRING, .dst = (P), \
	  .arg_name = (A), .help = (H) }
#define GPUAPP_OPT_UINT_ENTRY(N, P, LO, HI, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_UINT, .dst = (P), \
	  .dst_size = sizeof(*(P)), .min = (LO), .max = (HI), \
	  .arg_name = (A), .help = (H) }
#define GPUAPP_OPT_SIZE_ENTRY(N, P, LO, HI, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_SIZE, .dst = (P), \
	  .dst_size = sizeof(*(P)), .min = (LO), .max = (HI), \
	  .arg_name = (A), .help = (H) }
#define GPUAPP_OPT_DOUBLE_ENTRY(N, P, LO, HI, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_DOUBLE, .dst = (P), \
	  .dmin = (LO), .dmax = (HI), .arg_name = (A), .help = (H) }
#define GPUAPP_OPT_CHOICE_ENTRY(N, P, FIRST, C, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_CHOICE, .dst = (P), \
	  .dst_size = sizeof(*(P)), .min = (FIRST), .choices = (C), \
	  .arg_name = (A), .help = (H) }
#define GPUAPP_OPT_CALLBACK_ENTRY(N, CB, CTX, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_CALLBACK, .cb = (CB), \
	  .dst = (CTX), .arg_name = (A), .help = (H) }
#define GPUAPP_OPT_HELP_ENTRY(L) \
	{ .name = "help", .letter = (L), .kind = GPUAPP_OPT_HELP, \
	  .help = "this text" }

/*
 * Parses argv[1..argc-1] (the program's part, after EAL's) by the n
 * entries of table. usage is --help's first line, a printf format with
 * one %s, the program's name (argv[0]). Values are stored as they are
 * met; a program sets its defaults before. Returns 0; 1 when --help was
 * asked for (the usage is on stdout); or a negative errno after saying
 * what and why on logtype at ERR, the usage then on stderr for an
 * unknown option, a missing value or a stray argument: -EINVAL for those
 * and for a value that is no value of its kind, -ERANGE for one out of
 * range, -ENOMEM, or what a callback returned.
 */
int gpuapp_opts_parse(const struct gpuapp_opt *table, size_t n,
		const char *usage, int logtype, int argc, char **argv);

/*
 * As gpuapp_opts_parse(), for programs that take operands after their
 * options (tcpdump's filter expression): arguments that are no option
 * are moved to the end of argv (getopt's order), and *first_operand is
 * set to the index of the first of them (argc when there is none).
 */
int gpuapp_opts_parse_operands(const struct gpuapp_opt *table, size_t n,
		const char *usage, int logtype, int argc, char **argv,
		int *first_operand);

/* The usage text written from the table, as --help prints it. */
void gpuapp_opts_usage(const struct gpuapp_opt *table, size_t n,
		const char *usage, const char *prog, FILE *f);

/*
 * For callbacks: arg as opt's number, with opt's range and its message
 * on a bad value (the same as a UINT or DOUBLE entry's). 0, or a negative
 * errno.
 */
int gpuapp_opt_uint(const struct gpuapp_opt *opt, const char *arg,
		int logtype, uint64_t *v);
int gpuapp_opt_double(const struct gpuapp_opt *opt, const char *arg,
		int logtype, double *v);

#endif /* GPUAPP_OPTS_H */
