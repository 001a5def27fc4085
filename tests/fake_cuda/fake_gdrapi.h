/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef FAKE_GDRAPI_H
#define FAKE_GDRAPI_H

/* Control interface of the fake GDRCopy library (fake_gdrapi.c). */

unsigned int fake_gdr_live_pins(void);
unsigned int fake_gdr_live_maps(void);

#endif /* FAKE_GDRAPI_H */
