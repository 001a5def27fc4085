/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams from spec strings and pcap files, compiled into the table the
 * per-packet code (gpugen_core.h) reads; the CPU build. Syntax and
 * semantics: doc/gpu_tx.md.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "gpugen.h"
#include "gpugen_core.h"
#include "gpugen_priv.h"

#define fail gpugen_fail

#define GPUGEN_DEFAULT_ROOM 2048
#define GPUGEN_DEFAULT_BURST 32
#define GPUGEN_DEFAULT_SIZE 128
#define GPUGEN_MAX_TOKENS 64
#define GPUGEN_DIM(a) (sizeof(a) / sizeof((a)[0]))

GPURX_STATIC_ASSERT(GPUGEN_MAX_VARS == GPUGEN_FE_MAX_VARS &&
	GPUGEN_PROTO_UDP == GPURX_IPPROTO_UDP &&
	GPUGEN_PROTO_TCP == GPURX_IPPROTO_TCP &&
	GPUGEN_SIZES_FIXED == GPUGEN_SIZE_FIXED &&
	GPUGEN_SIZES_STEP == GPUGEN_SIZE_STEP &&
	GPUGEN_SIZES_RANDOM == GPUGEN_SIZE_RANDOM &&
	GPUGEN_VAR_INC == GPUGEN_FE_INC && GPUGEN_VAR_DEC == GPUGEN_FE_DEC &&
	GPUGEN_VAR_RANDOM == GPUGEN_FE_RANDOM, "the public numbers are the "
	"engine's");
GPURX_STATIC_ASSERT(GPUGEN_CSUM_IP4 == GPUGEN_CSUM_OFF_IP4 &&
	GPUGEN_CSUM_UDP == GPUGEN_CSUM_OFF_UDP &&
	GPUGEN_CSUM_TCP == GPUGEN_CSUM_OFF_TCP, "one set of offload bits");

struct gpugen {
	struct gpugen_conf conf;
	struct gpugen_table *t;		/* followed by the templates */
	size_t t_len;
	char *desc[GPUGEN_MAX_STREAMS];
};

int
gpugen_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int
gpugen_create(struct gpugen **gp, const struct gpugen_conf *conf)
{
	struct gpugen *g;

	*gp = NULL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	if (conf != NULL)
		g->conf = *conf;
	if (g->conf.data_room == 0)
		g->conf.data_room = GPUGEN_DEFAULT_ROOM;
	if (g->conf.data_room > GPUGEN_FRAME_MAX - GPUGEN_FCS)
		g->conf.data_room = GPUGEN_FRAME_MAX - GPUGEN_FCS;
	if (g->conf.burst == 0)
		g->conf.burst = GPUGEN_DEFAULT_BURST;
	g->t_len = sizeof(*g->t);
	g->t = calloc(1, g->t_len);
	if (g->t == NULL) {
		free(g);
		return -ENOMEM;
	}
	g->t->tmpl_at = sizeof(*g->t);
	*gp = g;
	return 0;
}

void
gpugen_free(struct gpugen *g)
{
	if (g == NULL)
		return;
	for (uint32_t s = 0; s < g->t->n_streams; s++)
		free(g->desc[s]);
	free(g->t);
	free(g);
}

/* ---- Values ------------------------------------------------------------ */

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	int base = 10;

	/* Decimal, or hex after 0x; never octal: 010 is ten, as people
	 * read it. Signs and spaces, which strtoull takes, are refused. */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s) ||
			(base == 10 && !isdigit((unsigned char)*s)))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	if (*end != '\0')
		return -EINVAL;
	return errno == ERANGE ? -ERANGE : errno != 0 ? -EINVAL : 0;
}

/* A number, or a dotted IPv4 address as its 32-bit value. */
static int
parse_value(const char *s, uint64_t *v)
{
	struct in_addr a;

	if (strchr(s, '.') != NULL) {
		if (inet_pton(AF_INET, s, &a) != 1)
			return -EINVAL;
		*v = ntohl(a.s_addr);
		return 0;
	}
	return parse_u64(s, v);
}

static int
parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
			&b[4], &b[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

/* Cut s at each sep into at most max fields; 0 when there are more. */
static unsigned int
split(char *s, char sep, char **f, unsigned int max)
{
	unsigned int n = 0;

	while (s != NULL) {
		if (n == max)
			return 0;
		f[n++] = s;
		s = strchr(s, sep);
		if (s != NULL)
			*s++ = '\0';
	}
	return n;
}

/* "A-B" into two values (A alone: A-A). */
static int
parse_range(char *s, uint64_t *lo, uint64_t *hi)
{
	char *dash = strchr(s, '-');
	int rc;

	if (dash == NULL) {
		rc = parse_value(s, lo);
		*hi = *lo;
		return rc;
	}
	*dash = '\0';
	rc = parse_value(s, lo);
	if (rc == 0)
		rc = parse_value(dash + 1, hi);
	*dash = '-';	/* the text stays whole for messages */
	return rc;
}

/* ---- A stream's description, before compiling ----------------------- */

struct var_desc {
	char text[128];		/* the item, for messages */
	int tuple;
};

/* The spec's items as a struct stream (def), with what the parser needs
 * besides: the variables' text, compiled once the frame's layout is
 * known, and sizes as given (they may pass 32 bits). */
struct stream_desc {
	struct gpugen_stream_def def;
	int have_ip, have_l4;
	uint64_t size_lo, size_hi;
	int stamp;		/* -1: the default */
	const char *pcap;
	int pcap_all;
	int imix;
	int size_given;
	struct var_desc vars[GPUGEN_FE_MAX_VARS];	/* def.n_vars of them */
};

static const char known_keys[] = "eth, vlan[=ID], ipv4, ipv6, udp, tcp, "
	"imix, dmac, smac, pcp, src, dst, sport, dport, ttl, tos, flags, size, "
	"payload, stamp, seed, weight, pcap, all, var, tuple";

static int
set_size(struct stream_desc *d, char *v, char *err, size_t errlen)
{
	char *opt = strchr(v, ':');
	uint64_t step;

	d->def.size_mode = GPUGEN_SIZE_FIXED;
	d->def.size_step = 1;
	if (opt != NULL)
		*opt++ = '\0';
	if (parse_range(v, &d->size_lo, &d->size_hi) != 0)
		return fail(err, errlen, -EINVAL, "size '%s': not N or MIN-MAX",
			v);
	if (d->size_lo > d->size_hi)
		return fail(err, errlen, -EINVAL, "size %" PRIu64 "-%" PRIu64
			": min > max", d->size_lo, d->size_hi);
	if (d->size_lo != d->size_hi)
		d->def.size_mode = GPUGEN_SIZE_STEP;
	while (opt != NULL) {
		char *next = strchr(opt, ':');

		if (next != NULL)
			*next++ = '\0';
		if (strcmp(opt, "random") == 0) {
			d->def.size_mode = GPUGEN_SIZE_RANDOM;
		} else if (strncmp(opt, "step=", 5) == 0) {
			if (parse_u64(opt + 5, &step) != 0 ||
					step == 0 || step > 65535)
				return fail(err, errlen, -EINVAL, "size step '%s': "
					"not a number in 1..65535", opt + 5);
			d->def.size_step = (uint32_t)step;
		} else {
			return fail(err, errlen, -EINVAL, "size option '%s' "
				"unknown (step=N, random)", opt);
		}
		opt = next;
	}
	if (d->size_lo == d->size_hi)
		d->def.size_mode = GPUGEN_SIZE_FIXED;
	d->size_given = 1;
	return 0;
}

static int
set_addr(struct stream_desc *d, uint8_t *dst, const char *key, const char *v,
		char *err, size_t errlen)
{
	uint8_t b[16];

	memset(b, 0, sizeof(b));
	if (inet_pton(AF_INET, v, b) == 1) {
		if (d->def.ip_version == 6)
			return fail(err, errlen, -EINVAL, "%s=%s: an IPv4 address "
				"in an IPv6 stream", key, v);
		d->def.ip_version = 4;
	} else if (inet_pton(AF_INET6, v, b) == 1) {
		if (d->def.ip_version == 4)
			return fail(err, errlen, -EINVAL, "%s=%s: an IPv6 address "
				"in an IPv4 stream", key, v);
		d->def.ip_version = 6;
	} else {
		return fail(err, errlen, -EINVAL, "%s=%s: not an IPv4 or IPv6 "
			"address", key, v);
	}
	memcpy(dst, b, 16);
	d->have_ip = 1;
	return 0;
}

static int
set_ipver(struct stream_desc *d, int v, char *err, size_t errlen)
{
	if (d->def.ip_version != 0 && d->def.ip_version != v)
		return fail(err, errlen, -EINVAL, "ipv%d: the stream is already "
			"IPv%d (by a word or an address)", v, d->def.ip_version);
	d->def.ip_version = v;
	d->have_ip = 1;
	return 0;
}

static int
set_l4(struct stream_desc *d, uint8_t proto, char *err, size_t errlen)
{
	if (d->have_l4 && d->def.proto != proto)
		return fail(err, errlen, -EINVAL, "udp and tcp in one stream");
	d->def.proto = proto;
	d->have_l4 = 1;
	return 0;
}

static int
num_key(const char *key, const char *v, uint64_t max, uint64_t *out,
		char *err, size_t errlen)
{
	if (parse_u64(v, out) != 0 || *out > max)
		return fail(err, errlen, -EINVAL, "%s=%s: not a number in "
			"0..%" PRIu64, key, v, max);
	return 0;
}

/*
 * flags=: a number, or tcpdump's letters in any order (S SYN, A ACK, F FIN,
 * R RST, P PSH, U URG, E ECE, C CWR; "SA" is SYN-ACK, "." ACK alone as
 * tcpdump prints it).
 */
static int
set_tcp_flags(struct stream_desc *d, const char *v, char *err, size_t errlen)
{
	static const char letters[] = "FSRPAUEC";
	uint64_t n;
	unsigned int f = 0;

	if (v[0] >= '0' && v[0] <= '9') {
		if (num_key("flags", v, 255, &n, err, errlen) != 0)
			return -EINVAL;
		d->def.tcp_flags = (uint8_t)n;
		return 0;
	}
	if (v[0] == '\0')
		return fail(err, errlen, -EINVAL, "flags=: empty (a number, or "
			"letters of %s such as SA)", letters);
	for (const char *c = v; *c != '\0'; c++) {
		const char *at = *c == '.' ? strchr(letters, 'A') :
			strchr(letters, *c);
		unsigned int bit;

		if (at == NULL)
			return fail(err, errlen, -EINVAL, "flags=%s: '%c' is no "
				"TCP flag (F S R P A U E C, . for ACK)", v, *c);
		bit = 1u << (at - letters);
		if (f & bit)
			return fail(err, errlen, -EINVAL, "flags=%s: '%c' given "
				"twice", v, *c);
		f |= bit;
	}
	d->def.tcp_flags = (uint8_t)f;
	return 0;
}

static int
parse_item(struct stream_desc *d, char *item, char *err, size_t errlen)
{
	char *v = strchr(item, '=');
	uint64_t n;
	int rc;

	if (v != NULL)
		*v++ = '\0';
	if (v == NULL) {
		if (strcmp(item, "eth") == 0)
			return 0;
		if (strcmp(item, "ipv4") == 0)
			return set_ipver(d, 4, err, errlen);
		if (strcmp(item, "ipv6") == 0)
			return set_ipver(d, 6, err, errlen);
		if (strcmp(item, "udp") == 0)
			return set_l4(d, GPURX_IPPROTO_UDP, err, errlen);
		if (strcmp(item, "tcp") == 0)
			return set_l4(d, GPURX_IPPROTO_TCP, err, errlen);
		if (strcmp(item, "imix") == 0) {
			d->imix = 1;
			return 0;
		}
		if (strcmp(item, "all") == 0) {
			d->pcap_all = 1;
			return 0;
		}
		if (strcmp(item, "vlan") == 0)
			v = (char *)"1";
		else
			return fail(err, errlen, -EINVAL, "'%s': unknown word "
				"(known: %s)", item, known_keys);
	}
	if (strcmp(item, "vlan") == 0) {
		if (d->def.n_vlans >= 2)
			return fail(err, errlen, -EINVAL, "vlan: at most 2 tags "
				"(QinQ)");
		if (num_key(item, v, 4095, &n, err, errlen) != 0)
			return -EINVAL;
		d->def.vid[d->def.n_vlans++] = (uint16_t)n;
		return 0;
	}
	if (strcmp(item, "pcp") == 0) {
		if (num_key(item, v, 7, &n, err, errlen) != 0)
			return -EINVAL;
		d->def.pcp = (uint8_t)n;
		return 0;
	}
	if (strcmp(item, "dmac") == 0 || strcmp(item, "smac") == 0) {
		if (parse_mac(v, item[0] == 'd' ? d->def.eth_dst : d->def.eth_src))
			return fail(err, errlen, -EINVAL, "%s=%s: not a MAC "
				"address (xx:xx:xx:xx:xx:xx)", item, v);
		return 0;
	}
	if (strcmp(item, "src") == 0)
		return set_addr(d, d->def.src, item, v, err, errlen);
	if (strcmp(item, "dst") == 0)
		return set_addr(d, d->def.dst, item, v, err, errlen);
	if (strcmp(item, "sport") == 0 || strcmp(item, "dport") == 0) {
		if (num_key(item, v, 65535, &n, err, errlen) != 0)
			return -EINVAL;
		if (item[0] == 's')
			d->def.sport = (uint16_t)n;
		else
			d->def.dport = (uint16_t)n;
		return 0;
	}
	if (strcmp(item, "flags") == 0)
		return set_tcp_flags(d, v, err, errlen);
	if (strcmp(item, "ttl") == 0 || strcmp(item, "tos") == 0 ||
			strcmp(item, "payload") == 0) {
		if (num_key(item, v, 255, &n, err, errlen) != 0)
			return -EINVAL;
		if (strcmp(item, "ttl") == 0)
			d->def.ttl = (uint8_t)n;
		else if (strcmp(item, "tos") == 0)
			d->def.tos = (uint8_t)n;
		else
			d->def.payload_byte = (uint8_t)n;
		return 0;
	}
	if (strcmp(item, "size") == 0)
		return set_size(d, v, err, errlen);
	if (strcmp(item, "stamp") == 0) {
		if (strcmp(v, "on") == 0)
			d->stamp = 1;
		else if (strcmp(v, "off") == 0)
			d->stamp = 0;
		else
			return fail(err, errlen, -EINVAL, "stamp=%s: on or off", v);
		return 0;
	}
	if (strcmp(item, "seed") == 0)
		return num_key(item, v, UINT64_MAX, &d->def.seed, err, errlen);
	if (strcmp(item, "weight") == 0) {
		rc = num_key(item, v, 1000000, &n, err, errlen);
		if (rc == 0 && n == 0)
			return fail(err, errlen, -EINVAL, "weight=0: at least 1");
		d->def.weight = (uint32_t)n;
		return rc;
	}
	if (strcmp(item, "pcap") == 0) {
		d->pcap = v;
		return 0;
	}
	if (strcmp(item, "var") == 0 || strcmp(item, "tuple") == 0) {
		struct var_desc *x;

		if (d->def.n_vars >= GPUGEN_FE_MAX_VARS)
			return fail(err, errlen, -ENOSPC, "more than %d variables",
				GPUGEN_FE_MAX_VARS);
		x = &d->vars[d->def.n_vars++];
		x->tuple = item[0] == 't';
		if (strlen(v) >= sizeof(x->text))
			return fail(err, errlen, -EINVAL, "%s=%s: too long", item,
				v);
		strcpy(x->text, v);
		return 0;
	}
	return fail(err, errlen, -EINVAL, "'%s': unknown key (known: %s)",
		item, known_keys);
}

/* ---- Compiling ---------------------------------------------------------- */

static const char *
fe_why(int rc)
{
	switch (rc) {
	case -ENOENT: return "unknown field name";
	case -ENXIO: return "the frame has no such header";
	case -ERANGE: return "past the end of the (shortest) frame";
	case -EPERM: return "a field the engine keeps (checksum, length, "
		"IP version and header length, protocol or the stamp)";
	case -ENOSPC: return "too many variables or writes";
	default: return "value wider than the field, or a bad range";
	}
}

/* Largest variable size (1, 2, 4, 8) that fits in width bytes. */
static uint8_t
var_size_for(uint32_t width)
{
	return width >= 8 ? 8 : width >= 4 ? 4 : width >= 2 ? 2 : 1;
}

/* FIELD for a write: a name, or @OFF[/BYTES]. */
struct var_target {
	const char *name;	/* NULL: at off */
	uint32_t off;
	uint32_t width;		/* the variable's size */
	uint32_t bits;		/* a masked field's bits; 0: whole bytes */
	uint64_t vmax;		/* the largest value the field holds */
};

static int
parse_target(const struct gpugen_fe_prog *p, char *f, struct var_target *t,
		char *err, size_t errlen)
{
	struct gpugen_fe_field ff;
	uint64_t off, w = 4;
	char *slash;
	int rc;

	memset(t, 0, sizeof(*t));
	if (f[0] == '@') {
		slash = strchr(f, '/');
		if (slash != NULL)
			*slash++ = '\0';
		if (parse_u64(f + 1, &off) != 0 || off > 65535 ||
				(slash != NULL && (parse_u64(slash, &w) != 0 ||
				(w != 1 && w != 2 && w != 4 && w != 8))))
			return fail(err, errlen, -EINVAL, "'%s': @OFFSET[/1|2|4|8] "
				"wanted", f);
		t->off = (uint32_t)off;
		t->width = (uint32_t)w;
		t->vmax = w == 8 ? UINT64_MAX : (1ull << (8 * w)) - 1;
		return 0;
	}
	rc = gpugen_fe_field_find(&p->lay, f, &ff);
	if (rc != 0)
		return fail(err, errlen, rc, "field '%s': %s", f, fe_why(rc));
	t->name = f;
	if (ff.mask != 0) {
		t->vmax = ff.mask >> ff.shift;
		t->bits = (uint32_t)__builtin_popcountll(ff.mask);
		/* The smallest variable that holds every value of the bits
		 * (20 for the flow label: 4 bytes, though it spans 3). */
		t->width = t->vmax > UINT16_MAX ? 4 : t->vmax > UINT8_MAX ? 2 : 1;
	} else {
		t->width = var_size_for(ff.width);
		t->vmax = t->width == 8 ? UINT64_MAX :
			(1ull << (8 * t->width)) - 1;
	}
	return 0;
}

static int
add_write(struct gpugen_fe_prog *p, const struct var_target *t, int var,
		uint8_t part)
{
	if (t->name != NULL)
		return gpugen_fe_write_field(p, t->name, var, part, 0);
	return gpugen_fe_write_off(p, t->off, var, part, 0);
}

/*
 * ref as a write target, named in buf (bufsz bytes, which t->name may
 * point into: keep it until the write is added).
 */
static int
ref_target(const struct gpugen_fe_prog *p, const struct gpugen_field_ref *ref,
		char *buf, size_t bufsz, struct var_target *t, char *err,
		size_t errlen)
{
	if (ref->name == NULL) {
		if (ref->off > 65535 || (ref->width != 1 && ref->width != 2 &&
				ref->width != 4 && ref->width != 8))
			return fail(err, errlen, -EINVAL, "field at offset %u, "
				"%u bytes: an offset in 0..65535 and 1, 2, 4 or 8 "
				"bytes wanted", ref->off, ref->width);
		snprintf(buf, bufsz, "@%u/%u", ref->off, ref->width);
	} else if ((size_t)snprintf(buf, bufsz, "%s", ref->name) >= bufsz) {
		return fail(err, errlen, -EINVAL, "field '%s': too long",
			ref->name);
	}
	return parse_target(p, buf, t, err, errlen);
}

/* text (var=, the item's value) as a variable whose field names point
 * into buf (128 bytes). */
static int
var_of_text(const char *text, char *buf, struct gpugen_var_def *v,
		char *err, size_t errlen)
{
	char *f[8];
	unsigned int nf;
	int rc;

	memset(v, 0, sizeof(*v));
	v->step = 1;
	snprintf(buf, 128, "%s", text);
	nf = split(buf, ':', f, GPUGEN_DIM(f));
	if (nf == 0)
		return fail(err, errlen, -EINVAL, "%s: too many parts", text);
	if (nf < 3)
		return fail(err, errlen, -EINVAL, "var=%s: FIELD:OP:MIN-MAX "
			"wanted", text);
	if (strcmp(f[1], "inc") == 0)
		v->op = GPUGEN_FE_INC;
	else if (strcmp(f[1], "dec") == 0)
		v->op = GPUGEN_FE_DEC;
	else if (strcmp(f[1], "random") == 0)
		v->op = GPUGEN_FE_RANDOM;
	else
		return fail(err, errlen, -EINVAL, "var=%s: operation '%s' "
			"unknown (inc, dec, random)", text, f[1]);
	rc = parse_range(f[2], &v->min, &v->max);
	if (rc == -ERANGE)
		return fail(err, errlen, -ERANGE, "var=%s: range '%s' holds a "
			"number above 2^64 - 1", text, f[2]);
	if (rc != 0)
		return fail(err, errlen, -EINVAL, "var=%s: range '%s' is not "
			"MIN-MAX (numbers or dotted IPv4)", text, f[2]);
	for (unsigned int k = 3; k < nf; k++) {
		if (strncmp(f[k], "step=", 5) == 0) {
			if (parse_u64(f[k] + 5, &v->step) != 0 || v->step == 0)
				return fail(err, errlen, -EINVAL, "var=%s: step "
					"'%s' not a number >= 1", text, f[k] + 5);
		} else if (strncmp(f[k], "init=", 5) == 0) {
			if (parse_value(f[k] + 5, &v->init) != 0)
				return fail(err, errlen, -EINVAL, "var=%s: init "
					"'%s' not a value", text, f[k] + 5);
			v->has_init = 1;
		} else if (strcmp(f[k], "burst") == 0) {
			v->burst = 1;
		} else {
			return fail(err, errlen, -EINVAL, "var=%s: option '%s' "
				"unknown (step=N, init=V, burst)", text, f[k]);
		}
	}
	v->field.name = f[0];
	return 0;
}

/* text (tuple=) as a tuple whose field names point into buf (128
 * bytes). */
static int
tuple_of_text(const char *text, char *buf, struct gpugen_var_def *v,
		char *err, size_t errlen)
{
	char *f[7];
	unsigned int nf;
	uint64_t plo, phi;

	memset(v, 0, sizeof(*v));
	v->tuple = 1;
	v->step = 1;
	snprintf(buf, 128, "%s", text);
	nf = split(buf, ':', f, GPUGEN_DIM(f));
	if (nf == 0)
		return fail(err, errlen, -EINVAL, "%s: too many parts", text);
	if (nf < 4)
		return fail(err, errlen, -EINVAL, "tuple=%s: IPFIELD:PORTFIELD:"
			"IPMIN-IPMAX:PMIN-PMAX wanted", text);
	if (parse_range(f[2], &v->min, &v->max) != 0 || v->max > UINT32_MAX)
		return fail(err, errlen, -EINVAL, "tuple=%s: address range '%s' "
			"not IPv4 MIN-MAX", text, f[2]);
	if (parse_range(f[3], &plo, &phi) != 0 || phi > 65535)
		return fail(err, errlen, -EINVAL, "tuple=%s: port range '%s' "
			"not MIN-MAX in 0..65535", text, f[3]);
	if (v->min > v->max || plo > phi)
		return fail(err, errlen, -EINVAL, "tuple=%s: min > max", text);
	for (unsigned int k = 4; k < nf; k++) {
		if (strncmp(f[k], "limit=", 6) == 0) {
			if (parse_u64(f[k] + 6, &v->limit) != 0)
				return fail(err, errlen, -EINVAL, "tuple=%s: limit "
					"'%s' not a number", text, f[k] + 6);
		} else if (strcmp(f[k], "burst") == 0) {
			v->burst = 1;
		} else {
			return fail(err, errlen, -EINVAL, "tuple=%s: option '%s' "
				"unknown (limit=N, burst)", text, f[k]);
		}
	}
	v->field.name = f[0];
	v->port_field.name = f[1];
	v->port_min = (uint16_t)plo;
	v->port_max = (uint16_t)phi;
	return 0;
}

/* A variable into p; label names it in messages (its spec text). */
static int
compile_var(struct gpugen_fe_prog *p, const struct gpugen_var_def *v,
		const char *label, char *err, size_t errlen)
{
	char fname[64];
	struct var_target t;
	uint64_t init = v->init;
	uint8_t size;
	int rc;

	if (v->op > GPUGEN_FE_RANDOM)
		return fail(err, errlen, -EINVAL, "var=%s: operation %u unknown "
			"(GPUGEN_VAR_INC, _DEC, _RANDOM)", label, v->op);
	if (v->step == 0)
		return fail(err, errlen, -EINVAL, "var=%s: step 0, not >= 1",
			label);
	if (v->min > v->max)
		return fail(err, errlen, -EINVAL, "var=%s: min > max", label);
	if (!v->has_init)
		init = v->op == GPUGEN_FE_DEC ? v->max : v->min;
	if (init < v->min || init > v->max)
		return fail(err, errlen, -EINVAL, "var=%s: init outside "
			"[min, max]", label);
	rc = ref_target(p, &v->field, fname, sizeof(fname), &t, err, errlen);
	if (rc != 0)
		return rc;
	size = (uint8_t)t.width;
	if (v->max > t.vmax && t.bits != 0)
		return fail(err, errlen, -ERANGE, "var=%s: max %" PRIu64 " does "
			"not fit the field's %u bits (0-%" PRIu64 ")", label,
			v->max, t.bits, t.vmax);
	if (v->max > t.vmax)
		return fail(err, errlen, -ERANGE, "var=%s: max %" PRIu64 " does "
			"not fit the field's %u bytes", label, v->max, size);
	rc = gpugen_fe_add_var(p, size, (uint8_t)v->op, v->min, v->max, init,
		v->step, v->burst);
	if (rc < 0)
		return fail(err, errlen, rc, "var=%s: %s", label, fe_why(rc));
	rc = add_write(p, &t, rc, GPUGEN_FE_PART_VALUE);
	if (rc < 0)
		return fail(err, errlen, rc, "var=%s: field %s: %s", label, fname,
			fe_why(rc));
	return 0;
}

/* A tuple into p; label names it in messages. */
static int
compile_tuple(struct gpugen_fe_prog *p, const struct gpugen_var_def *v,
		const char *label, char *err, size_t errlen)
{
	char fip[64], fport[64];
	struct var_target tip, tport;
	int rc, var;

	if (v->max > UINT32_MAX)
		return fail(err, errlen, -EINVAL, "tuple=%s: address range not "
			"IPv4 MIN-MAX", label);
	if (v->min > v->max || v->port_min > v->port_max)
		return fail(err, errlen, -EINVAL, "tuple=%s: min > max", label);
	rc = ref_target(p, &v->field, fip, sizeof(fip), &tip, err, errlen);
	if (rc == 0)
		rc = ref_target(p, &v->port_field, fport, sizeof(fport), &tport,
			err, errlen);
	if (rc != 0)
		return rc;
	var = gpugen_fe_add_tuple(p, (uint32_t)v->min, (uint32_t)v->max,
		v->port_min, v->port_max, v->limit, v->burst);
	if (var < 0)
		return fail(err, errlen, var, "tuple=%s: %s", label, fe_why(var));
	rc = add_write(p, &tip, var, GPUGEN_FE_PART_IP);
	if (rc < 0)
		return fail(err, errlen, rc, "tuple=%s: field %s: %s", label, fip,
			fe_why(rc));
	rc = add_write(p, &tport, var, GPUGEN_FE_PART_PORT);
	if (rc < 0)
		return fail(err, errlen, rc, "tuple=%s: field %s: %s", label,
			fport, fe_why(rc));
	return 0;
}

/*
 * st's program: the stamp, then def's variables, from their spec text
 * when text is set (the parser's), else from def->vars.
 */
static int
compile_prog(const struct gpugen *g, struct gpugen_stream_dev *st,
		const struct gpugen_stream_def *def, const struct var_desc *text,
		const struct gpugen_pkt_layout *lay, int stamp, uint32_t id,
		char *err, size_t errlen)
{
	int rc = gpugen_fe_init(&st->prog, lay, st->seed, id, g->conf.burst);

	if (rc != 0)
		return fail(err, errlen, rc, "empty frame");
	if (stamp) {
		rc = gpugen_fe_set_stamp(&st->prog);
		if (rc != 0)
			return fail(err, errlen, -EMSGSIZE, "stamp: the %s frame "
				"(%u bytes) has no room for the %d-byte stamp after "
				"its headers; give a larger size, or stamp=off",
				st->from_spec ? "shortest" : "pcap", lay->len,
				GPUGEN_STAMP_LEN);
	}
	for (unsigned int k = 0; k < def->n_vars; k++) {
		struct gpugen_var_def parsed;
		const struct gpugen_var_def *v = &def->vars[k];
		char buf[128], label[32];
		const char *name = label;

		if (text != NULL) {
			rc = text[k].tuple ?
				tuple_of_text(text[k].text, buf, &parsed, err,
					errlen) :
				var_of_text(text[k].text, buf, &parsed, err,
					errlen);
			if (rc != 0)
				return rc;
			v = &parsed;
			name = text[k].text;
		} else {
			snprintf(label, sizeof(label), "vars[%u]", k);
		}
		rc = v->tuple ? compile_tuple(&st->prog, v, name, err, errlen) :
			compile_var(&st->prog, v, name, err, errlen);
		if (rc != 0)
			return rc;
	}
	/* A replay stream's frames differ in layout, and the port's part of
	 * an offload is one per stream: they carry their own checksums. */
	if (g->conf.csum_offload && st->size_mode != GPUGEN_SIZE_REPLAY)
		gpugen_fe_csum_offload(&st->prog);
	return 0;
}

/*
 * Append a stream with template bytes tmpl (tmpl_len of them), its start
 * 16-byte aligned: a replay stream's frame index and programs need 8, and
 * the GPU copies an aligned template in words (gpugen_pb_copy).
 */
static int
append_area(struct gpugen *g, const struct gpugen_stream_dev *st,
		const uint8_t *tmpl, size_t tmpl_len, const char *desc)
{
	const uint32_t pad = (16 - g->t->tmpl_bytes % 16) % 16;
	size_t len = g->t_len + pad + tmpl_len;
	struct gpugen_table *t;
	uint32_t s = g->t->n_streams;
	char *dup;

	if ((uint64_t)g->t->tmpl_bytes + pad + tmpl_len > UINT32_MAX)
		return -EFBIG;
	dup = strdup(desc);
	if (dup == NULL)
		return -ENOMEM;
	t = realloc(g->t, len);
	if (t == NULL) {
		free(dup);
		return -ENOMEM;
	}
	g->t = t;
	t->s[s] = *st;
	t->s[s].tmpl_off = t->tmpl_bytes + pad;
	t->s[s].area_len = (uint32_t)(pad + tmpl_len);
	memset((uint8_t *)(t + 1) + t->tmpl_bytes, 0, pad);
	memcpy((uint8_t *)(t + 1) + t->tmpl_bytes + pad, tmpl, tmpl_len);
	/* The program's layout is the shortest frame's: the same header
	 * offsets; the lengths are read from the frame's own headers. */
	if (st->prog.csum_offload)
		t->s[s].csum_offload = gpugen_pkt_csum_offload(
			(uint8_t *)(t + 1) + t->s[s].tmpl_off, &st->prog.lay);
	t->tmpl_bytes += t->s[s].area_len;
	t->s[s].wstart = t->round;
	t->round += st->weight;
	t->n_streams++;
	g->t_len = len;
	g->desc[s] = dup;
	return 0;
}

static int
append_stream(struct gpugen *g, const struct gpugen_stream_dev *st,
		const uint8_t *tmpl, const char *desc)
{
	return append_area(g, st, tmpl, st->tmpl_len, desc);
}

/* A spec's defaults but those of the IP version and protocol. */
static void
def_defaults(struct gpugen_stream_def *d, const struct gpugen *g)
{
	static const uint8_t dmac[6] = { 2, 0, 0, 0, 0, 2 };
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 1 };

	memset(d, 0, sizeof(*d));
	memcpy(d->eth_dst, dmac, 6);
	memcpy(d->eth_src, smac, 6);
	d->sport = 1024;
	d->dport = 1024;
	d->seed = g->conf.seed;
	d->weight = 1;
	d->size_min = d->size_max = GPUGEN_DEFAULT_SIZE;
	d->stamp = 1;
}

static void
desc_defaults(struct stream_desc *d, const struct gpugen *g)
{
	memset(d, 0, sizeof(*d));
	def_defaults(&d->def, g);
	d->stamp = -1;
}

/* Version, protocol, flags and addresses the spec left unsaid. */
static void
ip_defaults(struct gpugen_stream_def *d, int have_l4, int src_set,
		int dst_set)
{
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	if (d->ip_version == 0)
		d->ip_version = 4;
	if (!have_l4)
		d->proto = GPURX_IPPROTO_UDP;
	if (d->proto == GPURX_IPPROTO_TCP && d->tcp_flags == 0)
		d->tcp_flags = 0x10;		/* ACK: a segment mid-flow */
	if (d->ip_version == 4) {
		const uint8_t s4[4] = { 10, 0, 0, 1 }, d4[4] = { 10, 0, 0, 2 };

		if (!src_set)
			memcpy(d->src, s4, 4);
		if (!dst_set)
			memcpy(d->dst, d4, 4);
	} else {
		if (!src_set) {
			memcpy(d->src, v6, 16);
			d->src[15] = 1;
		}
		if (!dst_set) {
			memcpy(d->dst, v6, 16);
			d->dst[15] = 2;
		}
	}
}

int
gpugen_stream_def_init(const struct gpugen *g, struct gpugen_stream_def *d,
		uint8_t ip_version, uint8_t proto)
{
	if (g == NULL || d == NULL || (ip_version != 4 && ip_version != 6) ||
			(proto != GPUGEN_PROTO_UDP && proto != GPUGEN_PROTO_TCP))
		return -EINVAL;
	def_defaults(d, g);
	d->ip_version = ip_version;
	d->proto = proto;
	ip_defaults(d, 1, 0, 0);
	return 0;
}

/* Frame sizes with the FCS: the minimum first, as below the FCS's 4
 * bytes the data room test would wrap. */
static int
sizes_check(const struct gpugen *g, uint64_t lo, uint64_t hi, char *err,
		size_t errlen)
{
	if (lo < GPUGEN_PB_MIN_FRAME + GPUGEN_FCS)
		return fail(err, errlen, -EINVAL, "size %" PRIu64 " below the "
			"Ethernet minimum of %d", lo,
			GPUGEN_PB_MIN_FRAME + GPUGEN_FCS);
	if (hi > GPUGEN_FRAME_MAX)
		return fail(err, errlen, -EMSGSIZE, "size %" PRIu64 " beyond the "
			"largest frame the generator makes (%d bytes with FCS, "
			"a jumbo frame)", hi, GPUGEN_FRAME_MAX);
	if (hi - GPUGEN_FCS > g->conf.data_room)
		return fail(err, errlen, -EMSGSIZE, "size %" PRIu64 " beyond the "
			"mbuf data room (%u bytes, %u with FCS)", hi,
			g->conf.data_room, g->conf.data_room + GPUGEN_FCS);
	return 0;
}

/* What the spec parser's syntax rules out, checked for a struct. */
static int
def_check(const struct gpugen_stream_def *d, char *err, size_t errlen)
{
	if (d->n_vlans > 2)
		return fail(err, errlen, -EINVAL, "%u VLAN tags: at most 2 "
			"(QinQ)", d->n_vlans);
	for (uint32_t i = 0; i < d->n_vlans; i++)
		if (d->vid[i] > 4095)
			return fail(err, errlen, -EINVAL, "VLAN id %u: not in "
				"0..4095", d->vid[i]);
	if (d->pcp > 7)
		return fail(err, errlen, -EINVAL, "pcp %u: not in 0..7", d->pcp);
	if (d->ip_version != 4 && d->ip_version != 6)
		return fail(err, errlen, -EINVAL, "IP version %u: 4 or 6",
			d->ip_version);
	if (d->proto != GPURX_IPPROTO_UDP && d->proto != GPURX_IPPROTO_TCP)
		return fail(err, errlen, -EINVAL, "protocol %u: UDP (17) or TCP "
			"(6)", d->proto);
	if (d->weight == 0 || d->weight > 1000000)
		return fail(err, errlen, -EINVAL, "weight %u: not in 1..1000000",
			d->weight);
	if (d->size_min > d->size_max)
		return fail(err, errlen, -EINVAL, "size %u-%u: min > max",
			d->size_min, d->size_max);
	if (d->size_mode > GPUGEN_SIZE_RANDOM)
		return fail(err, errlen, -EINVAL, "size mode %u unknown "
			"(GPUGEN_SIZES_FIXED, _STEP, _RANDOM)", d->size_mode);
	if (d->size_mode == GPUGEN_SIZE_STEP &&
			(d->size_step == 0 || d->size_step > 65535))
		return fail(err, errlen, -EINVAL, "size step %u: not in "
			"1..65535", d->size_step);
	if (d->stamp != 0 && d->stamp != 1)
		return fail(err, errlen, -EINVAL, "stamp %d: 0 or 1", d->stamp);
	if (d->n_vars > GPUGEN_FE_MAX_VARS)
		return fail(err, errlen, -ENOSPC, "more than %d variables",
			GPUGEN_FE_MAX_VARS);
	return 0;
}

/* The packet builder's spec of d's headers, no payload. */
static void
def_headers(const struct gpugen_stream_def *d, struct gpugen_pkt_spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	memcpy(sp->eth_dst, d->eth_dst, 6);
	memcpy(sp->eth_src, d->eth_src, 6);
	sp->n_vlans = (int)d->n_vlans;
	for (uint32_t i = 0; i < d->n_vlans; i++)
		sp->vid[i] = d->vid[i];
	/* Two tags: an 802.1ad outer tag, as QinQ is sent. */
	if (d->n_vlans == 2) {
		sp->tpid[0] = GPURX_ETHERTYPE_QINQ;
		sp->tpid[1] = GPURX_ETHERTYPE_VLAN;
	}
	for (int i = 0; i < GPUGEN_PB_MAX_VLANS; i++)
		sp->pcp[i] = d->pcp;
	sp->ip_version = d->ip_version;
	memcpy(sp->src, d->src, 16);
	memcpy(sp->dst, d->dst, 16);
	sp->ttl = d->ttl;
	sp->tos = d->tos;
	sp->proto = d->proto;
	sp->sport = d->sport;
	sp->dport = d->dport;
	sp->tcp_flags = d->tcp_flags;
	sp->payload_byte = d->payload_byte;
}

/*
 * One stream of d (every spec stream but pcap's, and every struct one):
 * template of the longest size, program on the shortest. text: the
 * variables' spec text (NULL: d->vars). stamp_optional: with no room
 * for the stamp, go without (imix's default).
 */
static int
add_def_stream(struct gpugen *g, const struct gpugen_stream_def *d,
		const struct var_desc *text, int stamp_optional, const char *desc,
		char *err, size_t errlen)
{
	struct gpugen_stream_dev *st;
	struct gpugen_pkt_layout lay;
	uint8_t *tmpl = NULL;
	uint32_t id = g->t->n_streams;
	int rc;

	if (g->t->n_streams >= GPUGEN_MAX_STREAMS)
		return fail(err, errlen, -ENOSPC, "more than %d streams",
			GPUGEN_MAX_STREAMS);
	rc = sizes_check(g, d->size_min, d->size_max, err, errlen);
	if (rc == 0)
		rc = def_check(d, err, errlen);
	if (rc != 0)
		return rc;
	st = calloc(1, sizeof(*st));
	tmpl = malloc(d->size_max);
	if (st == NULL || tmpl == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	st->from_spec = 1;
	st->seed = d->seed;
	st->weight = d->weight;
	st->size_mode = d->size_min == d->size_max ? GPUGEN_SIZE_FIXED :
		(uint8_t)d->size_mode;
	st->len_min = d->size_min - GPUGEN_FCS;
	st->len_max = d->size_max - GPUGEN_FCS;
	st->len_step = d->size_step;
	def_headers(d, &st->spec);
	if (gpugen_pkt_build(&st->spec, tmpl, st->len_max, &lay) == 0) {
		rc = fail(err, errlen, -EINVAL, "headers do not fit");
		goto out;
	}
	st->hdr_len = lay.payload_off;
	if (st->len_min < st->hdr_len) {
		rc = fail(err, errlen, -EINVAL, "size %u shorter than the headers "
			"(%u bytes with FCS)", st->len_min + GPUGEN_FCS,
			st->hdr_len + GPUGEN_FCS);
		goto out;
	}
	/* The shortest frame: every write and the stamp must lie in it. */
	st->spec.payload_len = st->len_min - st->hdr_len;
	if (gpugen_pkt_build(&st->spec, tmpl, st->len_max, &lay) !=
			st->len_min) {
		rc = fail(err, errlen, -EINVAL, "size %u cannot be built",
			st->len_min + GPUGEN_FCS);
		goto out;
	}
	rc = compile_prog(g, st, d, text, &lay, d->stamp, id, err, errlen);
	/* imix's 64-byte frames have no room for a stamp behind IPv6 or
	 * TCP headers: there the stamp is left out unless stamp=on asked
	 * for it (gpugen_stream_info() says which streams carry one). */
	if (rc == -EMSGSIZE && stamp_optional) {
		if (err != NULL && errlen > 0)
			err[0] = '\0';
		rc = compile_prog(g, st, d, text, &lay, 0, id, err, errlen);
	}
	if (rc != 0)
		goto out;
	st->spec.payload_len = st->len_max - st->hdr_len;
	st->tmpl_len = gpugen_pkt_build(&st->spec, tmpl, st->len_max, &lay);
	rc = append_stream(g, st, tmpl, desc);
out:
	free(st);
	free(tmpl);
	return rc;
}

/* Where the checksums and headers of a frame read from a file are. */
static int
layout_of(const uint8_t *p, uint32_t len, struct gpugen_pkt_layout *lay)
{
	struct gpurx_pkt_info pi;

	memset(lay, 0, sizeof(*lay));
	lay->len = len;
	if (gpurx_pkt_parse(p, len, len, &pi) != GPURX_MAL_NONE)
		return -1;
	lay->vlan_off = pi.vlan_count ? 12 : 0;
	lay->l3_off = pi.l3_off;
	lay->ip_version = pi.ip_version;
	lay->l4_proto = pi.l4_proto;
	lay->ip_end = pi.ip_version ? pi.ip_end : len;
	lay->payload_off = pi.ip_version ? pi.payload_off : pi.l3_off;
	lay->frag = (pi.flags & GPURX_PF_FRAGMENT) != 0;
	if (pi.ip_version == 0)
		return 0;
	if (pi.ip_version == 4) {
		lay->l3_hlen = (p[pi.l3_off] & 0x0f) * 4u;
		lay->ip4_csum_off = pi.l3_off + 10;
	}
	if (pi.flags & GPURX_PF_L4) {
		lay->l4_off = pi.l4_off;
		lay->l4_hlen = pi.payload_off - pi.l4_off;
		if (pi.ip_version == 6)
			lay->l3_hlen = pi.l4_off - pi.l3_off;
		if (!lay->frag) {
			if (pi.l4_proto == GPURX_IPPROTO_TCP)
				lay->l4_csum_off = pi.l4_off + 16;
			else if (pi.l4_proto == GPURX_IPPROTO_UDP)
				lay->l4_csum_off = pi.l4_off + 6;
			else if (pi.l4_proto == GPURX_IPPROTO_ICMP ||
					pi.l4_proto == GPURX_IPPROTO_ICMPV6)
				lay->l4_csum_off = pi.l4_off + 2;
		}
	}
	return 0;
}

/* Whether frame k + 1 of d's file can be sent as it is. */
static int
pcap_frame_check(const struct gpugen *g, const struct stream_desc *d,
		const struct pcap_pkthdr *h, uint32_t k, char *err, size_t errlen)
{
	if (h->caplen > h->len)
		return fail(err, errlen, -EINVAL, "pcap=%s: packet %u "
			"malformed: %u bytes captured of a %u-byte packet",
			d->pcap, k + 1, h->caplen, h->len);
	if (h->caplen < h->len || h->caplen == 0)
		return fail(err, errlen, -EINVAL, "pcap=%s: packet %u "
			"truncated (%u of %u bytes captured)", d->pcap,
			k + 1, h->caplen, h->len);
	if (h->caplen > GPUGEN_FRAME_MAX - GPUGEN_FCS)
		return fail(err, errlen, -EMSGSIZE, "pcap=%s: packet %u of %u "
			"bytes (%u with FCS) beyond the largest frame the "
			"generator makes (%d bytes with FCS, a jumbo frame)",
			d->pcap, k + 1, h->caplen, h->caplen + GPUGEN_FCS,
			GPUGEN_FRAME_MAX);
	if (h->caplen > g->conf.data_room)
		return fail(err, errlen, -EMSGSIZE, "pcap=%s: packet %u of %u "
			"bytes beyond the mbuf data room (%u)", d->pcap,
			k + 1, h->caplen, g->conf.data_room);
	return 0;
}

/*
 * A frame read from a file, ready to send: valid checksums from the
 * start, whatever the capture held (offloaded checksums are often
 * garbage there), and its layout for the variables.
 */
static void
pcap_frame_ready(uint8_t *f, uint32_t len, struct gpugen_pkt_layout *lay)
{
	if (layout_of(f, len, lay) != 0) {
		/* Not parsable: sent as is, variables by offset only. */
		memset(lay, 0, sizeof(*lay));
		lay->len = len;
	}
	gpugen_pkt_csum_fill(f, lay);
}

/* The file's first frame as a stream of its own (pcap=FILE). */
static int
add_pcap_frame(struct gpugen *g, const struct stream_desc *d,
		const u_char *data, uint32_t len, const char *desc, char *err,
		size_t errlen)
{
	struct gpugen_stream_dev *st = calloc(1, sizeof(*st));
	uint8_t *tmpl = malloc(len);
	struct gpugen_pkt_layout lay;
	int rc;

	if (st == NULL || tmpl == NULL) {
		free(st);
		free(tmpl);
		return -ENOMEM;
	}
	memcpy(tmpl, data, len);
	pcap_frame_ready(tmpl, len, &lay);
	st->seed = d->def.seed;
	st->weight = d->def.weight;
	st->tmpl_len = st->len_min = st->len_max = len;
	st->hdr_len = lay.payload_off;
	rc = compile_prog(g, st, &d->def, d->vars, &lay, d->stamp == 1,
		g->t->n_streams, err, errlen);
	if (rc == 0)
		rc = append_stream(g, st, tmpl, desc);
	free(st);
	free(tmpl);
	return rc;
}

/* Frames and programs of a replay stream at most (GPUGEN_SIZE_REPLAY). */
#define REPLAY_MAX_BYTES ((size_t)1 << 30)

/* A replay stream being read from its file. */
struct replay {
	uint8_t *frames;
	size_t frames_len, frames_cap;
	struct gpugen_replay_frame *idx;
	struct gpugen_fe_prog *progs;	/* with variables or a stamp */
	uint32_t n, cap;
	struct gpugen_stream_dev st;	/* its first frame's program */
};

static int
replay_grow(struct replay *r, uint32_t len, int with_prog)
{
	if (r->frames_len + len > r->frames_cap) {
		size_t cap = r->frames_cap * 2 > r->frames_len + len ?
			r->frames_cap * 2 : r->frames_len + len;
		uint8_t *f = realloc(r->frames, cap);

		if (f == NULL)
			return -ENOMEM;
		r->frames = f;
		r->frames_cap = cap;
	}
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 64;
		struct gpugen_replay_frame *x = realloc(r->idx,
			cap * sizeof(*x));

		if (x == NULL)
			return -ENOMEM;
		r->idx = x;
		if (with_prog) {
			struct gpugen_fe_prog *p = realloc(r->progs,
				cap * sizeof(*p));

			if (p == NULL)
				return -ENOMEM;
			r->progs = p;
		}
		r->cap = cap;
	}
	return 0;
}

/*
 * Frame n of the replay: its bytes, and its program (each frame its own
 * layout), all with the stream's id, so that its stamps and counters are
 * the stream's.
 */
static int
replay_add(struct gpugen *g, const struct stream_desc *d, struct replay *r,
		const u_char *data, uint32_t len, int with_prog, char *err,
		size_t errlen)
{
	struct gpugen_stream_dev st;
	struct gpugen_pkt_layout lay;
	uint8_t *f;
	int rc = replay_grow(r, len, with_prog);

	if (rc != 0)
		return rc;
	f = r->frames + r->frames_len;
	memcpy(f, data, len);
	pcap_frame_ready(f, len, &lay);
	/* Real traffic has frames too short for the stamp (bare ACKs): they
	 * go unstamped, as imix's 64-byte frames do. */
	for (int stamp = d->stamp == 1; ; stamp = 0) {
		memset(&st, 0, sizeof(st));
		st.seed = d->def.seed;
		st.size_mode = GPUGEN_SIZE_REPLAY;
		rc = compile_prog(g, &st, &d->def, d->vars, &lay, stamp,
			g->t->n_streams, err, errlen);
		if (rc != -EMSGSIZE || !stamp)
			break;
	}
	if (rc != 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err != NULL ? err : "");
		return fail(err, errlen, rc, "pcap=%s: packet %u: %s", d->pcap,
			r->n + 1, why);
	}
	/* The stream's own program (what gpugen_stream_info() tells) is its
	 * first stamped frame's, else its first frame's. */
	if (r->n == 0 || (r->st.prog.stamp_off == 0 && st.prog.stamp_off != 0))
		r->st.prog = st.prog;
	if (with_prog)
		r->progs[r->n] = st.prog;
	r->idx[r->n] = (struct gpugen_replay_frame){
		.off = (uint32_t)r->frames_len, .len = len,
		.stamp_rank = r->st.n_stamped };
	r->st.n_stamped += st.prog.stamp_off != 0;
	r->frames_len += len;
	r->n++;
	if (r->n * (sizeof(*r->idx) + (with_prog ? sizeof(*r->progs) : 0)) +
			r->frames_len > REPLAY_MAX_BYTES)
		return fail(err, errlen, -EFBIG, "pcap=%s: more than %zu MiB "
			"of frames%s by packet %u", d->pcap, REPLAY_MAX_BYTES >> 20,
			with_prog ? " and their variables" : "", r->n);
	if (r->n == 1 || len < r->st.len_min)
		r->st.len_min = len;
	if (len > r->st.len_max)
		r->st.len_max = len;
	return 0;
}

/* The replay as one stream: frame index, frames, programs. */
static int
replay_append(struct gpugen *g, const struct stream_desc *d,
		struct replay *r, int with_prog, const char *desc)
{
	const size_t idx_len = (size_t)r->n * sizeof(*r->idx);
	const size_t frames_end = (idx_len + r->frames_len + 7) / 8 * 8;
	const size_t area_len = frames_end +
		(with_prog ? (size_t)r->n * sizeof(*r->progs) : 0);
	uint8_t *area;
	int rc;

	if (d->stamp == 1 && r->st.prog.stamp_off == 0)
		return -EMSGSIZE;
	area = calloc(1, area_len);
	if (area == NULL)
		return -ENOMEM;
	for (uint32_t k = 0; k < r->n; k++) {
		r->idx[k].off += (uint32_t)idx_len;
		r->idx[k].prog_off = with_prog ? (uint32_t)(frames_end +
			k * sizeof(*r->progs)) : GPUGEN_REPLAY_NO_PROG;
	}
	memcpy(area, r->idx, idx_len);
	memcpy(area + idx_len, r->frames, r->frames_len);
	if (with_prog)
		memcpy(area + frames_end, r->progs, r->n * sizeof(*r->progs));
	r->st.seed = d->def.seed;
	r->st.weight = d->def.weight;
	r->st.size_mode = GPUGEN_SIZE_REPLAY;
	r->st.n_frames = r->n;
	r->st.tmpl_len = r->st.len_max;	/* the room a packet needs */
	rc = append_area(g, &r->st, area, area_len, desc);
	free(area);
	return rc;
}

/*
 * pcap=FILE: its first frame as a stream. pcap=FILE,all: every frame of
 * it, in its order, as one replay stream of any length.
 */
static int
add_pcap_streams(struct gpugen *g, struct stream_desc *d, const char *desc,
		char *err, size_t errlen)
{
	const int with_prog = d->def.n_vars != 0 || d->stamp == 1;
	char perr[PCAP_ERRBUF_SIZE];
	struct replay r = { 0 };
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t k = 0;
	pcap_t *pc;
	int rc = 0, n;

	if (d->have_ip || d->have_l4 || d->def.n_vlans || d->size_given ||
			d->imix)
		return fail(err, errlen, -EINVAL, "pcap=%s: the frame comes from "
			"the file; only var, tuple, stamp, seed, weight and all "
			"go with it", d->pcap);
	if (g->t->n_streams >= GPUGEN_MAX_STREAMS)
		return fail(err, errlen, -ENOSPC, "pcap=%s: more than %d "
			"streams", d->pcap, GPUGEN_MAX_STREAMS);
	pc = pcap_open_offline(d->pcap, perr);
	if (pc == NULL)
		return fail(err, errlen, -ENOENT, "pcap=%s: %s", d->pcap, perr);
	if (pcap_datalink(pc) != DLT_EN10MB) {
		pcap_close(pc);
		return fail(err, errlen, -EINVAL, "pcap=%s: link type %s, not "
			"Ethernet", d->pcap,
			pcap_datalink_val_to_name(pcap_datalink(pc)));
	}
	while ((n = pcap_next_ex(pc, &h, &data)) == 1) {
		rc = pcap_frame_check(g, d, h, k, err, errlen);
		if (rc == 0 && !d->pcap_all)
			rc = add_pcap_frame(g, d, data, h->caplen, desc, err,
				errlen);
		else if (rc == 0)
			rc = replay_add(g, d, &r, data, h->caplen, with_prog,
				err, errlen);
		if (rc != 0)
			break;
		k++;
		if (!d->pcap_all)
			break;
	}
	if (rc == 0 && n == -1)
		rc = fail(err, errlen, -EIO, "pcap=%s: %s", d->pcap,
			pcap_geterr(pc));
	if (rc == 0 && k == 0)
		rc = fail(err, errlen, -ENODATA, "pcap=%s: no packets", d->pcap);
	if (rc == 0 && d->pcap_all) {
		rc = replay_append(g, d, &r, with_prog, desc);
		if (rc == -EFBIG)
			rc = fail(err, errlen, rc, "pcap=%s: the table would pass "
				"4 GiB", d->pcap);
		else if (rc == -EMSGSIZE)
			rc = fail(err, errlen, rc, "pcap=%s: stamp: no frame has "
				"room for the %d-byte stamp after its headers; "
				"stamp=off", d->pcap, GPUGEN_STAMP_LEN);
	}
	pcap_close(pc);
	free(r.frames);
	free(r.idx);
	free(r.progs);
	return rc;
}

/* Drop streams from n on (an add that failed half way). */
static void
truncate_streams(struct gpugen *g, uint32_t n)
{
	struct gpugen_table *t = g->t;

	while (t->n_streams > n) {
		struct gpugen_stream_dev *st = &t->s[--t->n_streams];

		t->tmpl_bytes -= st->area_len;
		t->round -= st->weight;
		g->t_len -= st->area_len;
		free(g->desc[t->n_streams]);
		g->desc[t->n_streams] = NULL;
		memset(st, 0, sizeof(*st));
	}
}

/* IMIX (the classic 7:4:1 of 64, 594 and 1518-byte frames). */
static const struct {
	uint32_t size, weight;
} imix[] = { { 64, 7 }, { 594, 4 }, { 1518, 1 } };

int
gpugen_add_spec(struct gpugen *g, const char *spec, char *err, size_t errlen)
{
	struct stream_desc d;
	char *buf, *items[GPUGEN_MAX_TOKENS];
	uint32_t first = g->t->n_streams;
	unsigned int n = 0;
	int rc = 0, src_set = 0, dst_set = 0;

	if (spec == NULL || *spec == '\0')
		return fail(err, errlen, -EINVAL, "empty stream spec");
	buf = strdup(spec);
	if (buf == NULL)
		return -ENOMEM;
	desc_defaults(&d, g);
	n = split(buf, ',', items, GPUGEN_MAX_TOKENS);
	if (n == 0) {
		rc = fail(err, errlen, -EINVAL, "more than %d items",
			GPUGEN_MAX_TOKENS);
		goto out;
	}
	for (unsigned int k = 0; k < n; k++) {
		if (items[k][0] == '\0') {
			rc = fail(err, errlen, -EINVAL, "empty item (two commas?)");
			goto out;
		}
		src_set |= strncmp(items[k], "src=", 4) == 0;
		dst_set |= strncmp(items[k], "dst=", 4) == 0;
		rc = parse_item(&d, items[k], err, errlen);
		if (rc != 0)
			goto out;
	}
	if (d.pcap == NULL && d.pcap_all) {
		rc = fail(err, errlen, -EINVAL, "'all' goes with pcap=FILE");
		goto out;
	}
	if (d.imix && d.size_given) {
		rc = fail(err, errlen, -EINVAL, "imix sets the sizes: no size=");
		goto out;
	}
	if (d.pcap != NULL) {
		rc = add_pcap_streams(g, &d, spec, err, errlen);
		goto out;
	}
	ip_defaults(&d.def, d.have_l4, src_set, dst_set);
	if (!d.size_given)
		d.size_lo = d.size_hi = GPUGEN_DEFAULT_SIZE;
	/* Sizes past 32 bits, refused as any too large. */
	if (d.size_hi > UINT32_MAX &&
			(rc = sizes_check(g, d.size_lo, d.size_hi, err, errlen)) != 0)
		goto out;
	d.def.size_min = (uint32_t)d.size_lo;
	d.def.size_max = (uint32_t)d.size_hi;
	d.def.stamp = d.stamp != 0;
	for (unsigned int k = 0; k < (d.imix ? GPUGEN_DIM(imix) : 1); k++) {
		if (d.imix) {
			d.def.size_min = d.def.size_max = imix[k].size;
			d.def.size_mode = GPUGEN_SIZE_FIXED;
			d.def.weight = imix[k].weight;
		}
		rc = add_def_stream(g, &d.def, d.vars, d.imix && d.stamp == -1,
			spec, err, errlen);
		if (rc != 0)
			goto out;
	}
out:
	free(buf);
	if (rc != 0) {
		truncate_streams(g, first);
		return rc;
	}
	return (int)(g->t->n_streams - first);
}

int
gpugen_add_stream(struct gpugen *g, const struct gpugen_stream_def *d,
		char *err, size_t errlen)
{
	int rc;

	if (g == NULL || d == NULL)
		return fail(err, errlen, -EINVAL, "no generator or no stream");
	rc = add_def_stream(g, d, NULL, 0, d->desc != NULL ? d->desc : "struct",
		err, errlen);
	return rc != 0 ? rc : 1;
}

uint32_t
gpugen_n_streams(const struct gpugen *g)
{
	return g->t->n_streams;
}

int
gpugen_stream_info(const struct gpugen *g, uint32_t s,
		struct gpugen_stream_info *info)
{
	const struct gpugen_stream_dev *st;

	if (s >= g->t->n_streams)
		return -EINVAL;
	st = &g->t->s[s];
	info->id = s;
	info->weight = st->weight;
	info->len_min = st->len_min;
	info->len_max = st->len_max;
	info->stamp_off = st->prog.stamp_off;
	info->n_vars = st->prog.n_vars;
	info->desc = g->desc[s];
	info->ip_version = st->prog.lay.ip_version;
	info->l2_len = (uint16_t)st->prog.lay.l3_off;
	info->l3_len = (uint16_t)(st->prog.lay.l4_off != 0 ?
		st->prog.lay.l4_off - st->prog.lay.l3_off :
		st->prog.lay.l3_hlen);
	info->csum_offload = st->csum_offload;
	return 0;
}

uint32_t
gpugen_stream_of(const struct gpugen *g, uint64_t n)
{
	uint64_t idx;

	return gpugen_locate(g->t, n, &idx);
}

uint32_t
gpugen_fixed_len(const struct gpugen *g)
{
	const uint32_t len = gpugen_max_len(g);

	for (uint32_t s = 0; s < g->t->n_streams; s++)
		if (g->t->s[s].len_min != len || g->t->s[s].len_max != len)
			return 0;
	return len;
}

uint32_t
gpugen_max_len(const struct gpugen *g)
{
	uint32_t m = 0;

	for (uint32_t s = 0; s < g->t->n_streams; s++)
		if (g->t->s[s].len_max > m)
			m = g->t->s[s].len_max;
	return m;
}

uint32_t
gpugen_len(const struct gpugen *g, uint64_t n)
{
	return g->t->n_streams == 0 ? 0 : gpugen_table_len(g->t, n);
}

uint32_t
gpugen_build_cpu(const struct gpugen *g, uint64_t n, uint64_t tx_ns,
		uint8_t *buf, uint32_t bufsz, uint32_t *stream, uint64_t *idx)
{
	const struct gpugen_table *t = g->t;
	uint64_t i;
	uint32_t s;

	if (t->n_streams == 0)
		return 0;
	s = gpugen_locate(t, n, &i);
	if (stream != NULL)
		*stream = s;
	if (idx != NULL)
		*idx = i;
	if (gpugen_stream_len(t, &t->s[s], i) > bufsz)
		return 0;
	return gpugen_make(t, &t->s[s], i, tx_ns, buf);
}

const void *
gpugen_table(const struct gpugen *g, size_t *len)
{
	*len = g->t_len;
	return g->t;
}

const char *
gpugen_version(void)
{
	return GPUGEN_VERSION;
}
