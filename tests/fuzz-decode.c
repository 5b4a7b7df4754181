/* fuzz-decode.c - libFuzzer target: the fast x86-64 decoder
 * (libloopscope/cfg/decode_x86_fast.c) against libopcodes on random bytes.
 *
 * The first byte chooses the address the bytes are decoded at (low, a
 * PIE's, the kernel's, next to 2^64 where a rip-relative address or a
 * branch target wraps); every offset of the rest is then decoded both ways
 * (tests/decode-compare.h).  Wherever the fast decoder claims an
 * instruction, struct ls_insn (every field) and the mnemonic must equal
 * libopcodes' answer: any difference aborts, with both printed.  The same
 * for ls_decode_flow (decode_x86_flow.c) against ls_decode: length, kind,
 * opcode and target.
 *
 * Build (configure --enable-fuzz CC=clang):  make fuzz-decode
 * Seeds: the code of the fixtures built by scripts/fuzz-ci. */
#include "decode-compare.h"

#include <elf.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ls_decoder *ref, *fast, *full, *flow;
	static const uint64_t bases[4] = { 0x1000, 0x555555554000, 0xffffffff81000000, 0xfffffffffffffff0 };
	if (!ref) {
		ref = ls_decoder_new(EM_X86_64);
		fast = ls_decoder_new(EM_X86_64);
		full = ls_decoder_new(EM_X86_64);
		flow = ls_decoder_new(EM_X86_64);
		if (!ref || !fast || !full || !flow)
			abort();
	}
	if (size < 2)
		return 0;
	uint64_t base = bases[data[0] & 3];
	data++;
	size--;
	if (size > 4096)
		size = 4096;
	struct decode_pair p;
	for (size_t off = 0; off < size; off++) {
		if (decode_both(ref, fast, data + off, size - off, base + off, &p) < 0) {
			print_mismatch(stderr, data + off, size - off, base + off, &p);
			abort();
		}
		if (decode_flow_check(full, flow, data + off, size - off, base + off, stderr) < 0)
			abort();
	}
	return 0;
}
