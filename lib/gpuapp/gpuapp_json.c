/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_common.h>
#include <rte_errno.h>

#include "gpuapp_io.h"
#include "gpuapp_json.h"
#include "gpuapp_log.h"

/* Deeper than any document the programs write; a runaway begin without
 * its end shows here rather than as a huge file. */
#define JSON_DEPTH_MAX 32

/* 15 significant digits: every double printed that way reads back as the
 * decimal it was meant to be (DBL_DIG), without the 17-digit noise. */
#define JSON_FLAGS (JSON_ENCODE_ANY | JSON_REAL_PRECISION(15))

struct gpuapp_json {
	json_t *root;
	json_t *open[JSON_DEPTH_MAX];	/* containers not yet ended */
	unsigned int depth;
	int err;			/* first failure, negative errno */
	char err_at[64];		/* the member it happened at */
};

struct gpuapp_json *
gpuapp_json_create(void)
{
	struct gpuapp_json *j = calloc(1, sizeof(*j));

	if (j == NULL)
		rte_errno = ENOMEM;
	return j;
}

void
gpuapp_json_free(struct gpuapp_json *j)
{
	if (j == NULL)
		return;
	json_decref(j->root);
	free(j);
}

int
gpuapp_json_error(const struct gpuapp_json *j)
{
	return j->err;
}

static void
fail(struct gpuapp_json *j, const char *key, int err)
{
	if (j->err != 0)
		return;
	j->err = err;
	snprintf(j->err_at, sizeof(j->err_at), "%s",
		key != NULL ? key : "(no key)");
}

/* Put v (its reference taken, whatever happens) where the document is. */
static void
put(struct gpuapp_json *j, const char *key, json_t *v)
{
	json_t *top;

	if (v == NULL) {
		fail(j, key, -ENOMEM);
		return;
	}
	if (j->err != 0) {
		json_decref(v);
		return;
	}
	if (j->root == NULL) {
		/* The root: a container, unnamed. */
		if (key != NULL || !(json_is_object(v) || json_is_array(v))) {
			json_decref(v);
			fail(j, key, -EINVAL);
			return;
		}
		j->root = v;
		return;
	}
	if (j->depth == 0) {
		/* After the root was ended: a second document. */
		json_decref(v);
		fail(j, key, -EINVAL);
		return;
	}
	top = j->open[j->depth - 1];
	if (json_is_array(top)) {
		if (key != NULL) {
			json_decref(v);
			fail(j, key, -EINVAL);
		} else if (json_array_append_new(top, v) != 0) {
			fail(j, "(array element)", -ENOMEM);
		}
		return;
	}
	if (key == NULL || json_object_get(top, key) != NULL) {
		json_decref(v);
		fail(j, key, key == NULL ? -EINVAL : -EEXIST);
		return;
	}
	/* Fails only without memory or for a key that is not UTF-8. */
	if (json_object_set_new(top, key, v) != 0)
		fail(j, key, -EINVAL);
}

static void
begin(struct gpuapp_json *j, const char *key, json_t *c)
{
	if (c != NULL && j->err == 0 && j->depth == JSON_DEPTH_MAX) {
		json_decref(c);
		fail(j, key, -E2BIG);
		return;
	}
	/* The parent holds the reference, c stays valid while it is open. */
	put(j, key, c);
	if (j->err == 0)
		j->open[j->depth++] = c;
}

static void
end(struct gpuapp_json *j, int is_obj)
{
	json_t *top;

	if (j->err != 0)
		return;
	top = j->depth > 0 ? j->open[j->depth - 1] : NULL;
	if (top == NULL || json_is_object(top) != is_obj) {
		fail(j, is_obj ? "(end of object)" : "(end of array)", -EINVAL);
		return;
	}
	j->depth--;
}

void
gpuapp_json_obj_begin(struct gpuapp_json *j, const char *key)
{
	begin(j, key, json_object());
}

void
gpuapp_json_obj_end(struct gpuapp_json *j)
{
	end(j, 1);
}

void
gpuapp_json_arr_begin(struct gpuapp_json *j, const char *key)
{
	begin(j, key, json_array());
}

void
gpuapp_json_arr_end(struct gpuapp_json *j)
{
	end(j, 0);
}

/* Length of the well-formed UTF-8 sequence at s (n bytes left), as
 * jansson checks it (no overlong forms, no surrogates); 0 if none. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp, min;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* s with each byte that starts no UTF-8 sequence replaced by U+FFFD. */
static json_t *
string_repaired(const char *s)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;
	char *buf = malloc(n * 3 + 1);
	json_t *v;

	if (buf == NULL)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);

		if (len == 0) {
			memcpy(buf + o, repl, 3);
			o += 3;
			i++;
		} else {
			memcpy(buf + o, p + i, len);
			o += len;
			i += len;
		}
	}
	v = json_stringn(buf, o);
	free(buf);
	return v;
}

void
gpuapp_json_str(struct gpuapp_json *j, const char *key, const char *val)
{
	json_t *v;

	if (val == NULL) {
		put(j, key, json_null());
		return;
	}
	v = json_string(val);
	/* NULL: no memory, or not UTF-8; repairing tells them apart. */
	put(j, key, v != NULL ? v : string_repaired(val));
}

void
gpuapp_json_bool(struct gpuapp_json *j, const char *key, bool val)
{
	put(j, key, json_boolean(val));
}

void
gpuapp_json_i64(struct gpuapp_json *j, const char *key, int64_t val)
{
	RTE_BUILD_BUG_ON(sizeof(json_int_t) < sizeof(int64_t));
	put(j, key, json_integer((json_int_t)val));
}

void
gpuapp_json_u64(struct gpuapp_json *j, const char *key, uint64_t val)
{
	if (val > INT64_MAX) {
		fail(j, key, -ERANGE);
		return;
	}
	put(j, key, json_integer((json_int_t)val));
}

void
gpuapp_json_num(struct gpuapp_json *j, const char *key, double val)
{
	put(j, key, isfinite(val) ? json_real(val) : json_null());
}

void
gpuapp_json_fixed(struct gpuapp_json *j, const char *key, double val,
		unsigned int decimals)
{
	char buf[64];

	/* From 1e15 on the 15 digits written hold no decimals anyway (and
	 * "%f" would not fit buf). */
	if (isfinite(val) && fabs(val) < 1e15) {
		snprintf(buf, sizeof(buf), "%.*f", (int)RTE_MIN(decimals, 17u),
			val);
		val = strtod(buf, NULL);
	}
	gpuapp_json_num(j, key, val);
}

static void
newline(FILE *f, unsigned int level)
{
	fputc('\n', f);
	for (unsigned int i = 0; i < level; i++)
		fputs("  ", f);
}

/* An array whose elements are all objects or arrays: records. */
static int
is_records(const json_t *v)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, e)
		if (!json_is_object(e) && !json_is_array(e))
			return 0;
	return 1;
}

/* v at nesting level `level`, laid out as gpuapp_json_write() says;
 * jansson encodes every key and value. 0 or -1. */
static int
dump(FILE *f, json_t *v, unsigned int level, unsigned int expand)
{
	size_t n = json_is_object(v) ? json_object_size(v) :
		json_is_array(v) ? json_array_size(v) : 0;
	const char *key;
	json_t *m;
	size_t i;
	int first = 1;

	if (n == 0 || (level > expand) ||
			(level == expand && !is_records(v)))
		return json_dumpf(v, f, JSON_FLAGS);
	if (json_is_array(v)) {
		fputc('[', f);
		json_array_foreach(v, i, m) {
			fputs(first ? "" : ",", f);
			first = 0;
			newline(f, level + 1);
			if (dump(f, m, level + 1, expand) != 0)
				return -1;
		}
		newline(f, level);
		fputc(']', f);
		return 0;
	}
	fputc('{', f);
	json_object_foreach(v, key, m) {
		json_t *k = json_string(key);
		int rc;

		if (k == NULL)
			return -1;
		fputs(first ? "" : ",", f);
		first = 0;
		newline(f, level + 1);
		rc = json_dumpf(k, f, JSON_FLAGS);
		json_decref(k);
		fputs(": ", f);
		if (rc != 0 || dump(f, m, level + 1, expand) != 0)
			return -1;
	}
	newline(f, level);
	fputc('}', f);
	return 0;
}

/* The document as text, in a malloc'd buffer. 0 or -ENOMEM. */
static int
render(const struct gpuapp_json *j, unsigned int expand, char **text,
		size_t *len)
{
	FILE *f = open_memstream(text, len);
	int rc;

	if (f == NULL)
		return -ENOMEM;
	rc = dump(f, j->root, 0, expand);
	fputc('\n', f);
	if (ferror(f))
		rc = -1;
	/* The buffer exists once the stream is closed, even after a failure. */
	if (fclose(f) != 0)
		rc = -1;
	if (rc != 0) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int
say(const char *target, const char *what, int err)
{
	GPUAPP_LOG(ERR, "error: JSON to %s: %s: %s\n", target, what,
		strerror(-err));
	return err;
}

/* After what the program printed there before, in order. */
static int
write_stdout(const char *text, size_t len)
{
	errno = 0;
	if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
		return say("stdout", "write", errno != 0 ? -errno : -EIO);
	return 0;
}

/* Not a regular file (a device, a FIFO, a symbolic link to follow):
 * opened and written in place, as fopen(path, "w") would. */
static int
write_in_place(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return say(path, "open", -errno);
	rc = gpuapp_write_all(fd, text, len);
	if (rc != 0) {
		close(fd);
		return say(path, "write", rc);
	}
	if (close(fd) != 0)
		return say(path, "close", -errno);
	return 0;
}

/* The temporary file beside path that the write renames over it (and
 * the start-up check tries): 0, or -ENAMETOOLONG. */
static int
tmp_path(const char *path, char *tmp, size_t len)
{
	int n = snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A regular file, or none yet: written beside it and renamed over it. */
static int
write_replace(const char *path, const struct stat *old, const char *text,
		size_t len)
{
	char tmp[PATH_MAX];
	int fd, rc;

	if (tmp_path(path, tmp, sizeof(tmp)) != 0)
		return say(path, "temporary file name", -ENAMETOOLONG);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		rc = -errno;
		GPUAPP_LOG(ERR, "error: JSON to %s: create %s: %s\n", path, tmp,
			strerror(-rc));
		return rc;
	}
	/* A file replaced keeps its permissions, as with fopen("w"). */
	rc = old != NULL && fchmod(fd, old->st_mode & 07777) != 0 ? -errno : 0;
	if (rc == 0)
		rc = gpuapp_write_all(fd, text, len);
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return say(path, "write", rc);
	}
	return 0;
}

int
gpuapp_json_write(const struct gpuapp_json *j, const char *target,
		unsigned int expand)
{
	struct stat st;
	int have_st;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (target == NULL || target[0] == '\0') {
		GPUAPP_LOG(ERR, "error: JSON: no target (a file name, or - for "
			"stdout)\n");
		return -EINVAL;
	}
	if (j->err != 0) {
		GPUAPP_LOG(ERR, "error: JSON to %s: not written, member \"%s\": "
			"%s\n", target, j->err_at, j->err == -ERANGE ?
			"a counter above INT64_MAX" : strerror(-j->err));
		return j->err;
	}
	if (j->root == NULL || j->depth != 0) {
		GPUAPP_LOG(ERR, "error: JSON to %s: not written, the document "
			"is %s\n", target, j->root == NULL ? "empty" :
			"not closed");
		return -EINVAL;
	}
	rc = render(j, expand, &text, &len);
	if (rc != 0)
		return say(target, "encode", rc);
	/* Not there, or not to be seen: the file's creation says why. */
	have_st = strcmp(target, "-") != 0 && lstat(target, &st) == 0;
	if (strcmp(target, "-") == 0)
		rc = write_stdout(text, len);
	else if (have_st && !S_ISREG(st.st_mode))
		rc = write_in_place(target, text, len);
	else
		rc = write_replace(target, have_st ? &st : NULL, text, len);
	free(text);
	return rc;
}

int
gpuapp_json_check_target(const char *target)
{
	char tmp[PATH_MAX];
	struct stat st;
	int fd;

	if (target == NULL || target[0] == '\0') {
		GPUAPP_LOG(ERR, "error: JSON: no target (a file name, or - for "
			"stdout)\n");
		return -EINVAL;
	}
	if (strcmp(target, "-") == 0)
		return 0;
	/* What gpuapp_json_write() will do, tried now: opened in place, or
	 * a temporary file created beside the target, then taken away. */
	if (lstat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return say(target, "a directory", -EISDIR);
		/* A FIFO is not opened: a reader waiting on it would take
		 * the probe's close for the end of the document. */
		if (S_ISFIFO(st.st_mode))
			return 0;
		fd = open(target, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return say(target, "open", -errno);
		close(fd);
		return 0;
	}
	if (tmp_path(target, tmp, sizeof(tmp)) != 0)
		return say(target, "temporary file name", -ENAMETOOLONG);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return say(target, "cannot create a file there", -errno);
	close(fd);
	unlink(tmp);
	return 0;
}
