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

/* The CUDA gpudev driver this program is linked with, for start-up lines. */
const char *gpuapp_gpu_driver(void);

#endif /* GPUAPP_EAL_H */
