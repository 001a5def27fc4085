/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A fake GDRCopy library (libgdrapi.so.2) over the fake CUDA library: GPU
 * memory there is host memory, so a "mapping" is the same address. Checks
 * what the real one requires (GPU-page-aligned pins inside a live
 * allocation, maps of pinned handles, unmaps of what was mapped) and
 * counts live pins and maps.
 */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "fake_cuda.h"
#include "fake_gdrapi.h"

#define EXPORT __attribute__((visibility("default")))
#define GPU_PAGE ((uintptr_t)64 * 1024)
#define MAX_PINS 1024

struct gdr {
	int magic;
};
typedef struct gdr *gdr_t;
typedef struct {
	unsigned long h;
} gdr_mh_t;

struct pin {
	uintptr_t addr;
	size_t size;
	void *va;       /* non-NULL while mapped */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdr the_gdr = { 0x6764 };
static struct pin pins[MAX_PINS];   /* handle h is index + 1 */
static unsigned int live_pins, live_maps;

static struct pin *
pin_of(gdr_mh_t mh)
{
	if (mh.h == 0 || mh.h > MAX_PINS || pins[mh.h - 1].addr == 0)
		return NULL;
	return &pins[mh.h - 1];
}

EXPORT gdr_t
gdr_open(void)
{
	return &the_gdr;
}

EXPORT int
gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t token,
		uint32_t va_space, gdr_mh_t *mh)
{
	unsigned int i;
	int ret = -1;

	if (g != &the_gdr || token != 0 || va_space != 0 || mh == NULL ||
			addr % GPU_PAGE != 0 || size == 0 || size % GPU_PAGE != 0 ||
			!fake_cuda_is_device_range((void *)addr, size))
		return -1;
	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_PINS; i++) {
		if (pins[i].addr == 0) {
			pins[i] = (struct pin){ .addr = addr, .size = size };
			mh->h = i + 1;
			live_pins++;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT int
gdr_unpin_buffer(gdr_t g, gdr_mh_t mh)
{
	struct pin *p;
	int ret = -1;

	pthread_mutex_lock(&lock);
	p = pin_of(mh);
	if (g == &the_gdr && p != NULL && p->va == NULL) {
		p->addr = 0;
		live_pins--;
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT int
gdr_map(gdr_t g, gdr_mh_t mh, void **va, size_t size)
{
	struct pin *p;
	int ret = -1;

	pthread_mutex_lock(&lock);
	p = pin_of(mh);
	if (g == &the_gdr && p != NULL && p->va == NULL && va != NULL &&
			size == p->size) {
		p->va = (void *)p->addr;
		*va = p->va;
		live_maps++;
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT int
gdr_unmap(gdr_t g, gdr_mh_t mh, void *va, size_t size)
{
	struct pin *p;
	int ret = -1;

	pthread_mutex_lock(&lock);
	p = pin_of(mh);
	if (g == &the_gdr && p != NULL && p->va != NULL && p->va == va &&
			size == p->size) {
		p->va = NULL;
		live_maps--;
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT int
gdr_close(gdr_t g)
{
	return g == &the_gdr ? 0 : -1;
}

EXPORT unsigned int
fake_gdr_live_pins(void)
{
	unsigned int n;

	pthread_mutex_lock(&lock);
	n = live_pins;
	pthread_mutex_unlock(&lock);
	return n;
}

EXPORT unsigned int
fake_gdr_live_maps(void)
{
	unsigned int n;

	pthread_mutex_lock(&lock);
	n = live_maps;
	pthread_mutex_unlock(&lock);
	return n;
}
