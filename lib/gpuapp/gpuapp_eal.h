/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUAPP_EAL_H
#define GPUAPP_EAL_H

#include <stddef.h>

/*
 * EAL start-up for the project's programs. They link librte_gpu_cuda.so
 * (so they never need EAL's -d for it, wherever the build tree lies);
 * other plugins still come through -d, and EAL refuses those whose path
 * anyone may write.
 */

/*
 * rte_eal_init(), and when it fails because a plugin path given with -d
 * is refused, a message on stderr saying which path, why, and what to do.
 * Returns what rte_eal_init() returns; rte_errno is kept.
 */
int gpuapp_eal_init(int argc, char **argv);

/*
 * Why EAL would refuse to load the plugin at path (a file or directory),
 * written into why: 1, a path others may write (EAL 22.11 loads a plugin
 * only when neither the file nor any directory above it is writable by
 * others, /tmp included); -1, a path that does not resolve. 0 where EAL's
 * checks pass.
 */
int gpuapp_plugin_path_refused(const char *path, char *why, size_t len);

/*
 * Where the program's own options are in argv, before EAL has parsed it:
 * returns the index after the first "--" (EAL's end), or 1 when there is
 * none (dpdk-gpu-rx --version), and sets *end to the index of the next
 * "--" (after which only operands, such as filter words, follow) or argc.
 */
int gpuapp_prog_args(int argc, char **argv, int *end);

/* What a program answers before EAL starts, needing none. */
enum gpuapp_early {
	GPUAPP_EARLY_NONE,
	GPUAPP_EARLY_HELP,	/* -h or --help */
	GPUAPP_EARLY_VERSION,	/* --version */
};

/*
 * Looks for --help, -h or --version among the program's options
 * (gpuapp_prog_args()). Called before gpuapp_eal_init(), so that they
 * work where EAL cannot start (no hugepages, no permissions).
 */
enum gpuapp_early gpuapp_early_option(int argc, char **argv);

/* "PROG VERSION (DPDK x.y.z, librte_gpu_cuda a.b.c)" on stdout. */
void gpuapp_print_version(const char *prog);

/*
 * gpuapp_early_option() answered: -1 when there is nothing to answer
 * (start EAL); else the exit status, after help(ctx) printed the usage
 * (its return is the status) or the version was printed.
 */
int gpuapp_early_answer(int argc, char **argv, const char *prog,
		int (*help)(void *ctx), void *ctx);

/* The CUDA gpudev driver this program is linked with, for start-up lines. */
const char *gpuapp_gpu_driver(void);

#endif /* GPUAPP_EAL_H */
