/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON emitter (lib/gpuapp/gpuapp_json.h) every program's and bench's
 * --json goes through: the text it writes (layout, escapes, numbers), its
 * targets (stdout, a file replaced whole, ones that cannot be written)
 * and the errors a writer's mistakes give. No EAL.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuapp_json.h"
#include "check.h"


static char dir[] = "/tmp/gpuapp-json-XXXXXX";

/* The file's text, NUL-terminated, in a static buffer ("" if none). */
static const char *
slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f == NULL)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
path_in_dir(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* A document with a bit of everything, as dpdk-gpu-rx's summary is
 * shaped: scalars, a small object, a list of records. */
static struct gpuapp_json *
sample(void)
{
	struct gpuapp_json *j = gpuapp_json_create();

	if (j == NULL)
		return NULL;
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_str(j, "mode", "cpu");
	gpuapp_json_fixed(j, "elapsed_s", 1.0 / 3.0, 6);
	gpuapp_json_obj_begin(j, "dropped");
	gpuapp_json_u64(j, "ring_full", 0);
	gpuapp_json_u64(j, "no_mbuf", 7);
	gpuapp_json_obj_end(j);
	gpuapp_json_arr_begin(j, "top_flows");
	for (int i = 0; i < 2; i++) {
		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_i64(j, "sport", 1000 + i);
		gpuapp_json_bool(j, "tcp", i == 0);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
	gpuapp_json_arr_begin(j, "empty");
	gpuapp_json_arr_end(j);
	gpuapp_json_obj_end(j);
	return j;
}

/* Members one per line at level 0, the records one per line, the rest
 * inline; the order is the order they were added in. */
static void
layout(void)
{
	static const char want1[] =
		"{\n"
		"  \"mode\": \"cpu\",\n"
		"  \"elapsed_s\": 0.333333,\n"
		"  \"dropped\": {\"ring_full\": 0, \"no_mbuf\": 7},\n"
		"  \"top_flows\": [\n"
		"    {\"sport\": 1000, \"tcp\": true},\n"
		"    {\"sport\": 1001, \"tcp\": false}\n"
		"  ],\n"
		"  \"empty\": []\n"
		"}\n";
	static const char want0[] =
		"{\"mode\": \"cpu\", \"elapsed_s\": 0.333333, \"dropped\": "
		"{\"ring_full\": 0, \"no_mbuf\": 7}, \"top_flows\": "
		"[{\"sport\": 1000, \"tcp\": true}, {\"sport\": 1001, "
		"\"tcp\": false}], \"empty\": []}\n";
	static const char want_all[] =
		"{\n"
		"  \"mode\": \"cpu\",\n"
		"  \"elapsed_s\": 0.333333,\n"
		"  \"dropped\": {\n"
		"    \"ring_full\": 0,\n"
		"    \"no_mbuf\": 7\n"
		"  },\n"
		"  \"top_flows\": [\n"
		"    {\n"
		"      \"sport\": 1000,\n"
		"      \"tcp\": true\n"
		"    },\n"
		"    {\n"
		"      \"sport\": 1001,\n"
		"      \"tcp\": false\n"
		"    }\n"
		"  ],\n"
		"  \"empty\": []\n"
		"}\n";
	struct gpuapp_json *j = sample();
	char p[512];

	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	path_in_dir(p, sizeof(p), "layout.json");
	CHECK(gpuapp_json_write(j, p, 1) == 0, "write");
	CHECK(strcmp(slurp(p), want1) == 0, "got:\n%s", slurp(p));
	CHECK(gpuapp_json_write(j, p, 0) == 0, "write");
	CHECK(strcmp(slurp(p), want0) == 0, "got:\n%s", slurp(p));
	CHECK(gpuapp_json_write(j, p, GPUAPP_JSON_EXPAND_ALL) == 0, "write");
	CHECK(strcmp(slurp(p), want_all) == 0, "got:\n%s", slurp(p));
	unlink(p);
	gpuapp_json_free(j);
}

/* "-": the document on stdout, after what the program printed there. */
static void
stdout_target(void)
{
	struct gpuapp_json *j = gpuapp_json_create();
	char p[512];
	int fd, saved, rc;

	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_u64(j, "packets", 3);
	gpuapp_json_obj_end(j);
	path_in_dir(p, sizeof(p), "stdout.txt");
	fflush(stdout);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	saved = dup(STDOUT_FILENO);
	CHECK(fd >= 0 && saved >= 0, "open %s: %s", p, strerror(errno));
	if (fd < 0 || saved < 0) {
		if (fd >= 0)
			close(fd);
		if (saved >= 0)
			close(saved);
		gpuapp_json_free(j);
		return;
	}
	dup2(fd, STDOUT_FILENO);
	printf("summary line\n");
	rc = gpuapp_json_write(j, "-", 0);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strcmp(slurp(p), "summary line\n{\"packets\": 3}\n") == 0,
		"got:\n%s", slurp(p));
	/* No file named "-" made on the way. */
	CHECK(access("-", F_OK) != 0, "a file named - exists");
	unlink(p);
	gpuapp_json_free(j);
}

/* A file is replaced whole: its mode kept, no temporary file left. */
static void
file_target(void)
{
	struct gpuapp_json *j = sample();
	char p[512], tmp[600];
	struct stat st;
	FILE *f;

	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	path_in_dir(p, sizeof(p), "replace.json");
	f = fopen(p, "w");
	CHECK(f != NULL, "fopen %s", p);
	if (f != NULL) {
		fputs("an older, much longer document than the new one ......"
			"..............................................\n"
			"......................................................"
			"..............................................\n", f);
		fclose(f);
	}
	CHECK(chmod(p, 0640) == 0, "chmod");
	CHECK(gpuapp_json_write(j, p, 1) == 0, "write");
	CHECK(strncmp(slurp(p), "{\n  \"mode\": \"cpu\",", 18) == 0 &&
		strstr(slurp(p), "older") == NULL, "got:\n%s", slurp(p));
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640,
		"mode %o", (unsigned int)(st.st_mode & 07777));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", p, (long)getpid());
	CHECK(access(tmp, F_OK) != 0, "%s left behind", tmp);
	unlink(p);
	/* A device is written in place, never replaced. */
	CHECK(gpuapp_json_write(j, "/dev/null", 1) == 0, "/dev/null");
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
		"/dev/null is no longer a device");
	gpuapp_json_free(j);
}

/* Targets that cannot be written: a negative errno, the old file as it
 * was. */
static void
unwritable_target(void)
{
	struct gpuapp_json *j = sample();
	char p[512];
	int rc;

	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	path_in_dir(p, sizeof(p), "no/such/dir/out.json");
	rc = gpuapp_json_write(j, p, 1);
	CHECK(rc == -ENOENT, "missing directory: rc %d", rc);
	/* A directory in the way. */
	path_in_dir(p, sizeof(p), "adir");
	CHECK(mkdir(p, 0755) == 0, "mkdir");
	rc = gpuapp_json_write(j, p, 1);
	CHECK(rc < 0, "a directory: rc %d", rc);
	rmdir(p);
	/* The disk full, as a device that refuses every write. */
	if (access("/dev/full", W_OK) == 0) {
		rc = gpuapp_json_write(j, "/dev/full", 1);
		CHECK(rc == -ENOSPC, "/dev/full: rc %d", rc);
	}
	rc = gpuapp_json_write(j, "", 1);
	CHECK(rc == -EINVAL, "empty name: rc %d", rc);
	gpuapp_json_free(j);
}

/* The start-time check: what the write would refuse, refused before the
 * run, and nothing left behind where it passes. */
static void
target_check(void)
{
	struct stat st;
	char p[512], q[600];
	FILE *f;
	DIR *d;
	struct dirent *e;
	int rc, left = 0;

	CHECK(gpuapp_json_check_target("-") == 0, "stdout");
	CHECK(gpuapp_json_check_target("/dev/null") == 0, "a device");
	path_in_dir(p, sizeof(p), "no/such/dir/out.json");
	rc = gpuapp_json_check_target(p);
	CHECK(rc == -ENOENT, "missing directory: rc %d", rc);
	path_in_dir(p, sizeof(p), "adir");
	CHECK(mkdir(p, 0755) == 0, "mkdir");
	rc = gpuapp_json_check_target(p);
	CHECK(rc == -EISDIR, "a directory: rc %d", rc);
	/* A file below a regular file: its "directory" is no directory. */
	path_in_dir(p, sizeof(p), "afile");
	f = fopen(p, "w");
	CHECK(f != NULL && fputs("old\n", f) >= 0 && fclose(f) == 0,
		"write afile");
	snprintf(q, sizeof(q), "%s/out.json", p);
	rc = gpuapp_json_check_target(q);
	CHECK(rc == -ENOTDIR, "under a file: rc %d", rc);
	/* Writable: 0, the existing file untouched, no temporary left. */
	rc = gpuapp_json_check_target(p);
	CHECK(rc == 0, "existing file: rc %d", rc);
	CHECK(stat(p, &st) == 0 && st.st_size == 4, "existing file kept");
	path_in_dir(q, sizeof(q), "new.json");
	rc = gpuapp_json_check_target(q);
	CHECK(rc == 0, "new file: rc %d", rc);
	CHECK(access(q, F_OK) != 0, "the check created %s", q);
	d = opendir(dir);
	CHECK(d != NULL, "opendir");
	while (d != NULL && (e = readdir(d)) != NULL)
		left += strstr(e->d_name, ".tmp.") != NULL;
	if (d != NULL)
		closedir(d);
	CHECK(left == 0, "%d temporary file(s) left", left);
	/* A FIFO is left alone: opening it would hang without a reader,
	 * or end a waiting reader's document. */
	path_in_dir(q, sizeof(q), "fifo");
	CHECK(mkfifo(q, 0600) == 0, "mkfifo");
	CHECK(gpuapp_json_check_target(q) == 0, "a FIFO");
	unlink(q);
	CHECK(gpuapp_json_check_target("") == -EINVAL, "empty name");
	CHECK(gpuapp_json_check_target(NULL) == -EINVAL, "no name");
	unlink(p);
	path_in_dir(p, sizeof(p), "adir");
	rmdir(p);
}

/* jansson escapes what JSON must; bytes that are not UTF-8 become
 * U+FFFD rather than invalid JSON. */
static void
escapes(void)
{
	static const char want[] =
		"{\"q\\\"k\": \"a\\\"b\\\\c\", \"ctl\": \"\\n\\t\\u0001\\u001F\", "
		"\"utf8\": \"caf\xc3\xa9\", \"latin1\": \"caf\xef\xbf\xbd!\", "
		"\"null\": null}\n";
	struct gpuapp_json *j = gpuapp_json_create();
	char p[512];

	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_str(j, "q\"k", "a\"b\\c");
	gpuapp_json_str(j, "ctl", "\n\t\x01\x1f");
	gpuapp_json_str(j, "utf8", "caf\xc3\xa9");
	gpuapp_json_str(j, "latin1", "caf\xe9!");
	gpuapp_json_str(j, "null", NULL);
	gpuapp_json_obj_end(j);
	path_in_dir(p, sizeof(p), "esc.json");
	CHECK(gpuapp_json_write(j, p, 0) == 0, "write");
	CHECK(strcmp(slurp(p), want) == 0, "got:\n%s", slurp(p));
	unlink(p);
	gpuapp_json_free(j);
}

/* 64-bit counters exact up to INT64_MAX; above, the document refused. */
static void
numbers(void)
{
	static const char want[] =
		"{\"max\": 9223372036854775807, \"min\": -9223372036854775808, "
		"\"ns\": 1700000000123456789, \"tenth\": 0.1, \"nan\": null, "
		"\"inf\": null, \"rate\": 10000.0, \"pps\": 1234567.9, "
		"\"us\": 12.35}\n";
	struct gpuapp_json *j = gpuapp_json_create();
	char p[512];
	int rc;

	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_u64(j, "max", INT64_MAX);
	gpuapp_json_i64(j, "min", INT64_MIN);
	gpuapp_json_u64(j, "ns", 1700000000123456789ull);
	gpuapp_json_num(j, "tenth", 0.1);
	gpuapp_json_num(j, "nan", NAN);
	gpuapp_json_num(j, "inf", INFINITY);
	gpuapp_json_num(j, "rate", 1e4);
	gpuapp_json_fixed(j, "pps", 1234567.89, 1);
	gpuapp_json_fixed(j, "us", 12.345678, 2);
	gpuapp_json_obj_end(j);
	path_in_dir(p, sizeof(p), "num.json");
	CHECK(gpuapp_json_write(j, p, 0) == 0, "write");
	CHECK(strcmp(slurp(p), want) == 0, "got:\n%s", slurp(p));
	gpuapp_json_free(j);

	j = gpuapp_json_create();
	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_u64(j, "wrapped", (uint64_t)INT64_MAX + 1);
	gpuapp_json_u64(j, "after", 1);
	gpuapp_json_obj_end(j);
	CHECK(gpuapp_json_error(j) == -ERANGE, "%d", gpuapp_json_error(j));
	rc = gpuapp_json_write(j, p, 0);
	CHECK(rc == -ERANGE, "rc %d", rc);
	/* Refused before the file was touched. */
	CHECK(strcmp(slurp(p), want) == 0, "file changed:\n%s", slurp(p));
	unlink(p);
	gpuapp_json_free(j);
}

/* A writer's mistakes: found, the first one kept, nothing written. */
static void
misuse(void)
{
	struct gpuapp_json *j;
	char p[512];

	path_in_dir(p, sizeof(p), "misuse.json");

	j = gpuapp_json_create();
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_u64(j, "a", 1);
	gpuapp_json_u64(j, "a", 2);
	gpuapp_json_u64(j, NULL, 3);
	gpuapp_json_obj_end(j);
	CHECK(gpuapp_json_error(j) == -EEXIST, "twice: %d",
		gpuapp_json_error(j));
	gpuapp_json_free(j);

	j = gpuapp_json_create();
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_arr_begin(j, "list");
	gpuapp_json_u64(j, "named", 1);
	CHECK(gpuapp_json_error(j) == -EINVAL, "key in an array: %d",
		gpuapp_json_error(j));
	gpuapp_json_free(j);

	j = gpuapp_json_create();
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_arr_begin(j, "list");
	gpuapp_json_obj_end(j);
	CHECK(gpuapp_json_error(j) == -EINVAL, "array ended as object: %d",
		gpuapp_json_error(j));
	gpuapp_json_free(j);

	j = gpuapp_json_create();
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_obj_begin(j, "open");
	CHECK(gpuapp_json_error(j) == 0, "%d", gpuapp_json_error(j));
	CHECK(gpuapp_json_write(j, p, 1) == -EINVAL, "unclosed written");
	CHECK(access(p, F_OK) != 0, "unclosed document written");
	gpuapp_json_free(j);

	j = gpuapp_json_create();
	CHECK(gpuapp_json_write(j, p, 1) == -EINVAL, "empty written");
	gpuapp_json_u64(j, "root", 1);
	CHECK(gpuapp_json_error(j) == -EINVAL, "scalar root: %d",
		gpuapp_json_error(j));
	gpuapp_json_free(j);

	j = gpuapp_json_create();
	for (int i = 0; i < 40; i++)
		gpuapp_json_arr_begin(j, NULL);
	CHECK(gpuapp_json_error(j) == -E2BIG, "too deep: %d",
		gpuapp_json_error(j));
	gpuapp_json_free(j);
	gpuapp_json_free(NULL);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		printf("mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	CHECK_CASE(layout);
	CHECK_CASE(stdout_target);
	CHECK_CASE(file_target);
	CHECK_CASE(unwritable_target);
	CHECK_CASE(target_check);
	CHECK_CASE(escapes);
	CHECK_CASE(numbers);
	CHECK_CASE(misuse);
	rmdir(dir);
	return check_finish("test_gpuapp_json");
}
