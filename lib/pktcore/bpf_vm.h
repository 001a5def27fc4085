/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classic BPF interpreter with the semantics of libpcap's bpf_filter(),
 * runnable on the host and inside CUDA kernels.
 *
 * Programs must pass bpf_vm_validate() on the host first: the interpreter
 * then only checks packet bounds, which keeps the GPU inner loop short.
 * Even an unvalidated program cannot make it touch memory outside the
 * packet and its own scratch words; it could only fail to terminate.
 */
#ifndef GPURX_BPF_VM_H
#define GPURX_BPF_VM_H

#include "gpurx_portable.h"
#include "pkt_view.h"

/* Same layout as libpcap's struct bpf_insn, without needing pcap.h. */
struct bpf_vm_insn {
	uint16_t code;
	uint8_t jt;
	uint8_t jf;
	uint32_t k;
};

#define BPF_VM_MEMWORDS 16
#define BPF_VM_MAX_INSNS 4096

/* Opcode fields, as defined by the BPF instruction encoding. */
#define BPF_VM_CLASS(c) ((c) & 0x07)
#define BPF_VM_LD 0x00
#define BPF_VM_LDX 0x01
#define BPF_VM_ST 0x02
#define BPF_VM_STX 0x03
#define BPF_VM_ALU 0x04
#define BPF_VM_JMP 0x05
#define BPF_VM_RET 0x06
#define BPF_VM_MISC 0x07

#define BPF_VM_W 0x00
#define BPF_VM_H 0x08
#define BPF_VM_B 0x10

#define BPF_VM_IMM 0x00
#define BPF_VM_ABS 0x20
#define BPF_VM_IND 0x40
#define BPF_VM_MEM 0x60
#define BPF_VM_LEN 0x80
#define BPF_VM_MSH 0xa0

#define BPF_VM_ADD 0x00
#define BPF_VM_SUB 0x10
#define BPF_VM_MUL 0x20
#define BPF_VM_DIV 0x30
#define BPF_VM_OR 0x40
#define BPF_VM_AND 0x50
#define BPF_VM_LSH 0x60
#define BPF_VM_RSH 0x70
#define BPF_VM_NEG 0x80
#define BPF_VM_MOD 0x90
#define BPF_VM_XOR 0xa0

#define BPF_VM_JA 0x00
#define BPF_VM_JEQ 0x10
#define BPF_VM_JGT 0x20
#define BPF_VM_JGE 0x30
#define BPF_VM_JSET 0x40

#define BPF_VM_K 0x00
#define BPF_VM_X 0x08
#define BPF_VM_A 0x10

#define BPF_VM_TAX 0x00
#define BPF_VM_TXA 0x80

/* Load helpers: libpcap rejects (returns 0) a load that does not fit. */
GPURX_FN int
bpf_vm_load_fits(uint64_t off, uint32_t size, uint32_t buflen)
{
	return off + size <= buflen;
}

/* Scratch word k of a run (mem_set: the words stored so far). */
GPURX_FN uint32_t
bpf_vm_mem_get(const uint32_t *mem, uint32_t mem_set, uint32_t k)
{
	k &= BPF_VM_MEMWORDS - 1;
	return (mem_set >> k) & 1u ? mem[k] : 0;
}

GPURX_FN void
bpf_vm_mem_put(uint32_t *mem, uint32_t *mem_set, uint32_t k, uint32_t v)
{
	k &= BPF_VM_MEMWORDS - 1;
	mem[k] = v;
	*mem_set |= 1u << k;
}

/*
 * Run prog over one packet (its bytes seen through pkt: one run, or the
 * two of a split packet). buflen bounds the loads (captured bytes),
 * wirelen is what BPF_LEN sees. Returns 0 to reject, otherwise the number
 * of bytes to keep, exactly as bpf_filter() does. *cut (when cut is not
 * NULL) is set to 1 when a load past buflen rejected the packet: given
 * more of its bytes the verdict could differ; otherwise it is left as is.
 */
GPURX_FN uint32_t
bpf_vm_run_view(const struct bpf_vm_insn *GPURX_RESTRICT prog,
	       uint32_t prog_len, struct gpurx_pkt_view pkt,
	       uint32_t wirelen, uint32_t buflen, int *cut)
{
	uint32_t mem[BPF_VM_MEMWORDS];
	/* Scratch words stored so far: the others read as 0, so CPU and GPU
	 * agree on any program. Zeroing the words instead cost every packet
	 * stores to local memory (the array is indexed by the program, so it
	 * is not in registers), and most filters never use scratch. */
	uint32_t mem_set = 0;
	uint32_t a = 0, x = 0;
	uint32_t pc = 0;

	while (pc < prog_len) {
		const struct bpf_vm_insn in = prog[pc++];
		uint64_t off;

		switch (in.code) {
		case BPF_VM_RET | BPF_VM_K:
			return in.k;
		case BPF_VM_RET | BPF_VM_A:
			return a;

		case BPF_VM_LD | BPF_VM_W | BPF_VM_ABS:
		case BPF_VM_LD | BPF_VM_W | BPF_VM_IND:
			off = in.k;
			if (in.code & BPF_VM_IND)
				off += x;
			if (!bpf_vm_load_fits(off, 4, buflen))
				goto short_packet;
			a = gpurx_view_be32(pkt, off);
			break;
		case BPF_VM_LD | BPF_VM_H | BPF_VM_ABS:
		case BPF_VM_LD | BPF_VM_H | BPF_VM_IND:
			off = in.k;
			if (in.code & BPF_VM_IND)
				off += x;
			if (!bpf_vm_load_fits(off, 2, buflen))
				goto short_packet;
			a = gpurx_view_be16(pkt, off);
			break;
		case BPF_VM_LD | BPF_VM_B | BPF_VM_ABS:
		case BPF_VM_LD | BPF_VM_B | BPF_VM_IND:
			off = in.k;
			if (in.code & BPF_VM_IND)
				off += x;
			if (!bpf_vm_load_fits(off, 1, buflen))
				goto short_packet;
			a = gpurx_view_u8(pkt, off);
			break;
		case BPF_VM_LD | BPF_VM_W | BPF_VM_LEN:
			a = wirelen;
			break;
		case BPF_VM_LDX | BPF_VM_W | BPF_VM_LEN:
			x = wirelen;
			break;
		case BPF_VM_LD | BPF_VM_IMM:
			a = in.k;
			break;
		case BPF_VM_LDX | BPF_VM_IMM:
			x = in.k;
			break;
		case BPF_VM_LD | BPF_VM_MEM:
			a = bpf_vm_mem_get(mem, mem_set, in.k);
			break;
		case BPF_VM_LDX | BPF_VM_MEM:
			x = bpf_vm_mem_get(mem, mem_set, in.k);
			break;
		case BPF_VM_LDX | BPF_VM_B | BPF_VM_MSH:
			/* IPv4 header length: (p[k] & 0xf) * 4. */
			if (!bpf_vm_load_fits(in.k, 1, buflen))
				goto short_packet;
			x = (uint32_t)(gpurx_view_u8(pkt, in.k) & 0x0f) << 2;
			break;
		case BPF_VM_ST:
			bpf_vm_mem_put(mem, &mem_set, in.k, a);
			break;
		case BPF_VM_STX:
			bpf_vm_mem_put(mem, &mem_set, in.k, x);
			break;

		case BPF_VM_JMP | BPF_VM_JA:
			pc += in.k;
			break;
		case BPF_VM_JMP | BPF_VM_JEQ | BPF_VM_K:
			pc += a == in.k ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JGT | BPF_VM_K:
			pc += a > in.k ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JGE | BPF_VM_K:
			pc += a >= in.k ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JSET | BPF_VM_K:
			pc += (a & in.k) ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JEQ | BPF_VM_X:
			pc += a == x ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JGT | BPF_VM_X:
			pc += a > x ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JGE | BPF_VM_X:
			pc += a >= x ? in.jt : in.jf;
			break;
		case BPF_VM_JMP | BPF_VM_JSET | BPF_VM_X:
			pc += (a & x) ? in.jt : in.jf;
			break;

		case BPF_VM_ALU | BPF_VM_ADD | BPF_VM_X: a += x; break;
		case BPF_VM_ALU | BPF_VM_SUB | BPF_VM_X: a -= x; break;
		case BPF_VM_ALU | BPF_VM_MUL | BPF_VM_X: a *= x; break;
		case BPF_VM_ALU | BPF_VM_DIV | BPF_VM_X:
			if (x == 0)
				return 0;
			a /= x;
			break;
		case BPF_VM_ALU | BPF_VM_MOD | BPF_VM_X:
			if (x == 0)
				return 0;
			a %= x;
			break;
		case BPF_VM_ALU | BPF_VM_AND | BPF_VM_X: a &= x; break;
		case BPF_VM_ALU | BPF_VM_OR | BPF_VM_X: a |= x; break;
		case BPF_VM_ALU | BPF_VM_XOR | BPF_VM_X: a ^= x; break;
		case BPF_VM_ALU | BPF_VM_LSH | BPF_VM_X:
			/* C leaves shifts >= 32 undefined; libpcap yields 0. */
			a = x < 32 ? a << x : 0;
			break;
		case BPF_VM_ALU | BPF_VM_RSH | BPF_VM_X:
			a = x < 32 ? a >> x : 0;
			break;
		case BPF_VM_ALU | BPF_VM_ADD | BPF_VM_K: a += in.k; break;
		case BPF_VM_ALU | BPF_VM_SUB | BPF_VM_K: a -= in.k; break;
		case BPF_VM_ALU | BPF_VM_MUL | BPF_VM_K: a *= in.k; break;
		case BPF_VM_ALU | BPF_VM_DIV | BPF_VM_K:
			/* Validation rejects k == 0; stay safe without it. */
			if (in.k == 0)
				return 0;
			a /= in.k;
			break;
		case BPF_VM_ALU | BPF_VM_MOD | BPF_VM_K:
			if (in.k == 0)
				return 0;
			a %= in.k;
			break;
		case BPF_VM_ALU | BPF_VM_AND | BPF_VM_K: a &= in.k; break;
		case BPF_VM_ALU | BPF_VM_OR | BPF_VM_K: a |= in.k; break;
		case BPF_VM_ALU | BPF_VM_XOR | BPF_VM_K: a ^= in.k; break;
		case BPF_VM_ALU | BPF_VM_LSH | BPF_VM_K:
			a = in.k < 32 ? a << in.k : 0;
			break;
		case BPF_VM_ALU | BPF_VM_RSH | BPF_VM_K:
			a = in.k < 32 ? a >> in.k : 0;
			break;
		case BPF_VM_ALU | BPF_VM_NEG:
			a = 0u - a;
			break;

		case BPF_VM_MISC | BPF_VM_TAX:
			x = a;
			break;
		case BPF_VM_MISC | BPF_VM_TXA:
			a = x;
			break;
		default:
			/* Unknown opcode: validation prevents it; reject. */
			return 0;
		}
	}
	return 0;
short_packet:
	if (cut != NULL)
		*cut = 1;
	return 0;
}

/* bpf_vm_run_view() over one run of bytes. */
GPURX_FN uint32_t
bpf_vm_run_cut(const struct bpf_vm_insn *GPURX_RESTRICT prog,
	       uint32_t prog_len, const uint8_t *pkt, uint32_t wirelen,
	       uint32_t buflen, int *cut)
{
	return bpf_vm_run_view(prog, prog_len, gpurx_view_linear(pkt), wirelen,
		buflen, cut);
}

GPURX_FN uint32_t
bpf_vm_run(const struct bpf_vm_insn *GPURX_RESTRICT prog, uint32_t prog_len,
	   const uint8_t *pkt, uint32_t wirelen, uint32_t buflen)
{
	return bpf_vm_run_cut(prog, prog_len, pkt, wirelen, buflen, NULL);
}

enum bpf_vm_verr {
	BPF_VM_OK = 0,
	BPF_VM_ERR_EMPTY,
	BPF_VM_ERR_TOO_LONG,
	BPF_VM_ERR_BAD_OPCODE,
	BPF_VM_ERR_BAD_JUMP,
	BPF_VM_ERR_BACKWARD_JUMP,
	BPF_VM_ERR_BAD_MEM,
	BPF_VM_ERR_DIV_ZERO,
	BPF_VM_ERR_BAD_SHIFT,
	BPF_VM_ERR_NO_RET,
};

/* Exactly the opcodes bpf_filter() executes; anything else is refused. */
static inline int
bpf_vm_opcode_known(uint16_t code)
{
	switch (code) {
	case BPF_VM_LD | BPF_VM_W | BPF_VM_ABS:
	case BPF_VM_LD | BPF_VM_H | BPF_VM_ABS:
	case BPF_VM_LD | BPF_VM_B | BPF_VM_ABS:
	case BPF_VM_LD | BPF_VM_W | BPF_VM_IND:
	case BPF_VM_LD | BPF_VM_H | BPF_VM_IND:
	case BPF_VM_LD | BPF_VM_B | BPF_VM_IND:
	case BPF_VM_LD | BPF_VM_W | BPF_VM_LEN:
	case BPF_VM_LD | BPF_VM_IMM:
	case BPF_VM_LD | BPF_VM_MEM:
	case BPF_VM_LDX | BPF_VM_W | BPF_VM_LEN:
	case BPF_VM_LDX | BPF_VM_IMM:
	case BPF_VM_LDX | BPF_VM_MEM:
	case BPF_VM_LDX | BPF_VM_B | BPF_VM_MSH:
	case BPF_VM_ST:
	case BPF_VM_STX:
	case BPF_VM_JMP | BPF_VM_JA:
	case BPF_VM_RET | BPF_VM_K:
	case BPF_VM_RET | BPF_VM_A:
	case BPF_VM_ALU | BPF_VM_NEG:
	case BPF_VM_MISC | BPF_VM_TAX:
	case BPF_VM_MISC | BPF_VM_TXA:
		return 1;
	default:
		break;
	}
	if (BPF_VM_CLASS(code) == BPF_VM_JMP) {
		uint16_t op = code & 0xf0;

		return (code & ~(uint16_t)0xf8) == BPF_VM_JMP &&
			op >= BPF_VM_JEQ && op <= BPF_VM_JSET;
	}
	if (BPF_VM_CLASS(code) == BPF_VM_ALU) {
		uint16_t op = code & 0xf0;

		return (code & ~(uint16_t)0xf8) == BPF_VM_ALU &&
			op != BPF_VM_NEG && op <= BPF_VM_XOR;
	}
	return 0;
}

/*
 * Host-side check that makes a program safe for bpf_vm_run(): every
 * opcode known, every jump lands inside the program (jumps only go
 * forward, so it terminates), scratch indexes in range, no division by a
 * constant 0, constant shifts < 32, and the last instruction returns.
 * Returns BPF_VM_OK or an error; *bad_pc gets the offending index.
 */
static inline int
bpf_vm_validate(const struct bpf_vm_insn *prog, uint32_t len, uint32_t *bad_pc)
{
	uint32_t dummy;

	if (bad_pc == NULL)
		bad_pc = &dummy;
	*bad_pc = 0;
	if (prog == NULL || len == 0)
		return BPF_VM_ERR_EMPTY;
	if (len > BPF_VM_MAX_INSNS)
		return BPF_VM_ERR_TOO_LONG;
	for (uint32_t i = 0; i < len; i++) {
		const struct bpf_vm_insn *in = &prog[i];
		uint16_t code = in->code;
		uint32_t left = len - i - 1;	/* insns after this one */

		*bad_pc = i;
		if (!bpf_vm_opcode_known(code))
			return BPF_VM_ERR_BAD_OPCODE;
		switch (BPF_VM_CLASS(code)) {
		case BPF_VM_LD:
		case BPF_VM_LDX:
			if ((code & 0xe0) == BPF_VM_MEM &&
					in->k >= BPF_VM_MEMWORDS)
				return BPF_VM_ERR_BAD_MEM;
			break;
		case BPF_VM_ST:
		case BPF_VM_STX:
			if (in->k >= BPF_VM_MEMWORDS)
				return BPF_VM_ERR_BAD_MEM;
			break;
		case BPF_VM_ALU:
			if ((code & BPF_VM_X) || code == (BPF_VM_ALU | BPF_VM_NEG))
				break;
			if (((code & 0xf0) == BPF_VM_DIV ||
					(code & 0xf0) == BPF_VM_MOD) && in->k == 0)
				return BPF_VM_ERR_DIV_ZERO;
			if (((code & 0xf0) == BPF_VM_LSH ||
					(code & 0xf0) == BPF_VM_RSH) && in->k >= 32)
				return BPF_VM_ERR_BAD_SHIFT;
			break;
		case BPF_VM_JMP:
			if ((code & 0xf0) == BPF_VM_JA) {
				/*
				 * bpf_filter() lets k wrap into a backward jump
				 * (libpcap's "protochain" loops that way); a
				 * kernel must always terminate, so refuse it.
				 */
				if (in->k > UINT32_MAX - i - 1)
					return BPF_VM_ERR_BACKWARD_JUMP;
				if (in->k >= left)
					return BPF_VM_ERR_BAD_JUMP;
			} else if (in->jt >= left || in->jf >= left) {
				return BPF_VM_ERR_BAD_JUMP;
			}
			break;
		default:
			break;
		}
	}
	*bad_pc = len - 1;
	if (BPF_VM_CLASS(prog[len - 1].code) != BPF_VM_RET)
		return BPF_VM_ERR_NO_RET;
	return BPF_VM_OK;
}

static inline const char *
bpf_vm_verr_str(int err)
{
	switch (err) {
	case BPF_VM_OK: return "ok";
	case BPF_VM_ERR_EMPTY: return "empty program";
	case BPF_VM_ERR_TOO_LONG: return "program too long";
	case BPF_VM_ERR_BAD_OPCODE: return "unknown opcode";
	case BPF_VM_ERR_BAD_JUMP: return "jump out of program";
	case BPF_VM_ERR_BACKWARD_JUMP:
		return "backward jump (loops such as protochain are not supported)";
	case BPF_VM_ERR_BAD_MEM: return "scratch memory index out of range";
	case BPF_VM_ERR_DIV_ZERO: return "division by constant zero";
	case BPF_VM_ERR_BAD_SHIFT: return "constant shift of 32 or more";
	case BPF_VM_ERR_NO_RET: return "last instruction is not a return";
	default: return "unknown error";
	}
}

#endif /* GPURX_BPF_VM_H */
