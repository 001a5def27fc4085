/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The programs' and benchmarks' JSON output, one emitter for all of them:
 * a document is built member by member (jansson does the encoding and the
 * escaping) and then written whole to its target, "-" being stdout.
 *
 * Building never fails half-way for the caller: the first failure (no
 * memory, a member in the wrong place, a value JSON cannot hold) is kept,
 * later calls do nothing, and gpuapp_json_write() reports it and writes
 * nothing. So a writer adds its members without checking each one, and
 * checks the write.
 */
#ifndef GPUAPP_JSON_H
#define GPUAPP_JSON_H

#include <stdbool.h>
#include <stdint.h>

struct gpuapp_json;

/* An empty document; its first member is the root object or array (key
 * NULL). NULL with rte_errno ENOMEM. */
struct gpuapp_json *gpuapp_json_create(void);
void gpuapp_json_free(struct gpuapp_json *j);

/*
 * Members. key names an object's member; it is NULL for an array's
 * elements and the root. A key given twice in one object is an error
 * (-EEXIST), not a silent replacement.
 */
void gpuapp_json_obj_begin(struct gpuapp_json *j, const char *key);
void gpuapp_json_obj_end(struct gpuapp_json *j);
void gpuapp_json_arr_begin(struct gpuapp_json *j, const char *key);
void gpuapp_json_arr_end(struct gpuapp_json *j);
/* val NULL writes null. Bytes that are not UTF-8 (a file name in another
 * encoding) become U+FFFD: JSON text is UTF-8. */
void gpuapp_json_str(struct gpuapp_json *j, const char *key, const char *val);
void gpuapp_json_bool(struct gpuapp_json *j, const char *key, bool val);
void gpuapp_json_i64(struct gpuapp_json *j, const char *key, int64_t val);
/* Exact up to INT64_MAX (a JSON integer here is a long long); above,
 * -ERANGE: no counter reaches it, so one that does is a wrapped value. */
void gpuapp_json_u64(struct gpuapp_json *j, const char *key, uint64_t val);
/* A float, to 15 significant digits. NaN and infinities, which JSON has
 * no numbers for, are written as null. */
void gpuapp_json_num(struct gpuapp_json *j, const char *key, double val);
/* A float rounded to `decimals` places, as printf's "%.*f" would give it:
 * for figures whose resolution the document states. */
void gpuapp_json_fixed(struct gpuapp_json *j, const char *key, double val,
		unsigned int decimals);

/* 0, or the first failure while building (a negative errno). */
int gpuapp_json_error(const struct gpuapp_json *j);

/*
 * Layout: containers at nesting levels below `expand` (the root is level
 * 0) are written one member per line, indented by two spaces a level;
 * an array of objects or arrays at level `expand` gets one element per
 * line (a list of records); everything deeper stays on its member's
 * line. 0 puts the whole document on one line, GPUAPP_JSON_EXPAND_ALL
 * every member on its own.
 */
#define GPUAPP_JSON_EXPAND_ALL 64u

/*
 * Write the document, with a final newline, to target: "-" is stdout,
 * anything else a file, replaced whole (a temporary file renamed over
 * it, so a reader never sees half a document; a device, FIFO or symbolic
 * link is written in place). 0, or a negative errno after a message
 * (rte_log on lib.gpuapp) that names the target and the reason; a file
 * is then left as it was.
 */
int gpuapp_json_write(const struct gpuapp_json *j, const char *target,
		unsigned int expand);

/*
 * For a program's start: whether gpuapp_json_write() could write target
 * (a file created in its directory and removed, a device or FIFO
 * opened), so that a typo costs no run. 0, or a negative errno after a
 * message naming the target and the reason. A full filesystem is found
 * only at the write, which then leaves the old file as it was.
 */
int gpuapp_json_check_target(const char *target);

#endif /* GPUAPP_JSON_H */
