/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_version.h>

#include "rte_pmd_gpu_cuda.h"
#include "gpuapp_eal.h"
#include "gpuapp_log.h"

const char *
gpuapp_gpu_driver(void)
{
	/*
	 * Also what keeps librte_gpu_cuda.so among the program's needed
	 * libraries: DPDK's pkg-config flags link with --as-needed, which
	 * drops a library no object refers to.
	 */
	return rte_pmd_gpu_cuda_version();
}

int
gpuapp_plugin_path_refused(const char *path, char *why, size_t len)
{
	char *real = realpath(path, NULL);
	char *p, *top = NULL;
	struct stat st;
	mode_t top_mode = 0;

	if (real == NULL) {
		/* EAL then tries the bare name in the loader's directories. */
		if (errno == ENOENT && strchr(path, '/') == NULL)
			return 0;
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	/*
	 * EAL checks the real path's directories from / down and stops at
	 * the first one others may write: name that one, as EAL does.
	 */
	for (p = real + strlen(real); ; ) {
		char saved = *p;

		*p = '\0';
		if (stat(p == real ? "/" : real, &st) == 0 &&
				(st.st_mode & S_IWOTH)) {
			free(top);
			top = strdup(p == real ? "/" : real);
			top_mode = st.st_mode;
		}
		*p = saved;
		if (p == real)
			break;
		while (--p > real && *p != '/')
			;
	}
	if (top == NULL) {
		free(real);
		return 0;
	}
	snprintf(why, len, "%s is writable by every user (mode %04o), and EAL "
		"loads plugins only from paths no other user can write, so it "
		"refuses %s", top, (unsigned int)(top_mode & 07777), real);
	free(top);
	free(real);
	return 1;
}

static void
explain_refused_plugins(int argc, char **argv)
{
	char why[PATH_MAX * 2 + 200];

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *path = NULL;
		int refused;

		if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strncmp(argv[i], "-d", 2) == 0 && argv[i][2] != '\0')
			path = argv[i] + 2;
		if (path == NULL)
			continue;
		refused = gpuapp_plugin_path_refused(path, why, sizeof(why));
		if (refused == 0)
			continue;
		GPUAPP_LOG(ERR, "error: EAL option -d %s: %s.\n", path, why);
		if (refused < 0)
			continue;
		if (strstr(path, "librte_gpu_cuda") != NULL)
			GPUAPP_LOG(ERR, "  This program is linked with "
				"librte_gpu_cuda.so and loads it without -d: "
				"leave that -d out.\n");
		else
			GPUAPP_LOG(ERR, "  Keep plugins in a directory only "
				"you can write (not below /tmp), or install "
				"them into DPDK's plugin directory.\n");
	}
}

int
gpuapp_eal_init(int argc, char **argv)
{
	char **saved = malloc(sizeof(*saved) * (size_t)(argc + 1));
	int ret, err;

	/* EAL's getopt reorders argv: keep the order the user wrote. */
	if (saved != NULL)
		memcpy(saved, argv, sizeof(*saved) * (size_t)(argc + 1));
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		err = rte_errno;
		if (saved != NULL)
			explain_refused_plugins(argc, saved);
		rte_errno = err;
	}
	free(saved);
	return ret;
}

int
gpuapp_prog_args(int argc, char **argv, int *end)
{
	int first = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			first = i + 1;
			break;
		}
	}
	*end = first;
	while (*end < argc && strcmp(argv[*end], "--") != 0)
		(*end)++;
	return first;
}

enum gpuapp_early
gpuapp_early_option(int argc, char **argv)
{
	int end;

	for (int i = gpuapp_prog_args(argc, argv, &end); i < end; i++) {
		/* A value of the program's, such as a filter word, is no
		 * option: only these exact words count. */
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return GPUAPP_EARLY_HELP;
		if (strcmp(argv[i], "--version") == 0)
			return GPUAPP_EARLY_VERSION;
	}
	return GPUAPP_EARLY_NONE;
}

void
gpuapp_print_version(const char *prog)
{
	printf("%s %s (%s, %s)\n", prog, GPUAPP_VERSION, rte_version(),
		gpuapp_gpu_driver());
}

int
gpuapp_early_answer(int argc, char **argv, const char *prog,
		int (*help)(void *ctx), void *ctx)
{
	switch (gpuapp_early_option(argc, argv)) {
	case GPUAPP_EARLY_HELP:
		return help(ctx);
	case GPUAPP_EARLY_VERSION:
		gpuapp_print_version(prog);
		return 0;
	default:
		return -1;
	}
}
