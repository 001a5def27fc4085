/* SPDX-License-Identifier: BSD-3-Clause */
/* Placeholder until the GPU path lands. */
#include <stdio.h>

#include "app.h"
#include "gpu_path.h"

int gpurx_gpu_init(struct gpurx_app *a) { (void)a; fprintf(stderr, "error: GPU modes not built yet; use --cpu\n"); return -1; }
int gpurx_gpu_create_pool(struct gpurx_app *a) { (void)a; return -1; }
int gpurx_gpu_setup(struct gpurx_app *a) { (void)a; return -1; }
int gpurx_rx_gpu_lcore(void *arg) { (void)arg; return -1; }
int gpurx_gpu_stop(struct gpurx_app *a) { (void)a; return 0; }
void gpurx_gpu_teardown(struct gpurx_app *a) { (void)a; }
