/* SPDX-License-Identifier: BSD-3-Clause */

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "child_attach.h"

#define TG_ATTACH_SYMBOL "rte_pmd_gpu_cuda_child_attach"

/* Signature of rte_pmd_gpu_cuda_child_attach in rte_pmd_gpu_cuda.h. */
typedef int (tg_attach_fn)(int16_t child_dev_id);

struct plugin_search {
	void *handle;
	tg_attach_fn *fn;
};

static int
try_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct plugin_search *s = arg;
	void *h;

	(void)size;
	if (info->dlpi_name == NULL || strstr(info->dlpi_name, "librte_gpu_cuda") == NULL)
		return 0;
	/* NOLOAD: a handle on the copy EAL loaded, never a second copy. */
	h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return 0;
	s->fn = (tg_attach_fn *)dlsym(h, TG_ATTACH_SYMBOL);
	if (s->fn == NULL) {
		dlclose(h);
		return 0;
	}
	s->handle = h;
	return 1;
}

int
tg_child_attach(int16_t child_dev_id)
{
	struct plugin_search s = { NULL, NULL };
	int ret;

	/* Linked in or global: the plain lookup finds it. */
	s.fn = (tg_attach_fn *)dlsym(RTLD_DEFAULT, TG_ATTACH_SYMBOL);
	if (s.fn == NULL && dl_iterate_phdr(try_object, &s) == 0)
		return -ENOENT;
	ret = s.fn(child_dev_id);
	if (s.handle != NULL)
		dlclose(s.handle);
	return ret;
}
