/* fuzz-debuginfo.c - libFuzzer target: an ELF file with its debug
 * information in a separate file, found the way real ones are.
 *
 * The input is a 4-byte little-endian length L, the main file's L bytes,
 * then the separate debug file.  The main file goes to a temporary
 * directory as `bin`; the debug file both under the build-id path libdwfl
 * searches (DIR/debug/.build-id/xx/yyyy.debug, when the main file has a
 * build-id) and next to it as `bin.debug` (where .gnu_debuglink points in
 * the seeds).  So libdwfl's validation (build-id match) passes for mutated
 * debug files and the DWARF readers (inline tree, line table, procedures
 * from the debug file) see them.  Seeds: the fixtures split with
 * objcopy --only-keep-debug and strip --only-keep... (scripts/fuzz-ci). */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loopscope.h"

static void quiet(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = size ? fwrite(data, 1, size, f) : 0;
	return fclose(f) == 0 && n == size ? 0 : -1;
}

/* The GNU build-id of the ELF image DATA, in hex, or "" (libelf only). */
static void build_id_of(const uint8_t *data, size_t size, char *hex, size_t cap)
{
	hex[0] = 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)data, size);
	if (!e)
		return;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) && !hex[0];) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz < 2 ||
			    nh.n_descsz * 2 + 1 > cap || memcmp((char *)d->d_buf + noff, "GNU", 4))
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", ((unsigned char *)d->d_buf)[doff + i]);
			break;
		}
	}
	elf_end(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	uint32_t len;
	memcpy(&len, data, 4);
	if (len > size - 4)
		len = (uint32_t)(size - 4);
	const uint8_t *main_part = data + 4, *debug_part = data + 4 + len;
	size_t debug_size = size - 4 - len;

	char dir[] = "/tmp/ls-fuzz-dbg.XXXXXX";
	if (!mkdtemp(dir))
		return 0;
	char bin[128], dbgdir[128], sub[160], path[256], id[129];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	snprintf(dbgdir, sizeof dbgdir, "%s/debug", dir);
	write_file(bin, main_part, len);
	snprintf(path, sizeof path, "%s/bin.debug", dir);
	write_file(path, debug_part, debug_size);
	build_id_of(main_part, len, id, sizeof id);
	if (id[0]) {
		snprintf(sub, sizeof sub, "%s/.build-id/%.2s", dbgdir, id);
		mkdir(dbgdir, 0700);
		snprintf(path, sizeof path, "%s/.build-id", dbgdir);
		mkdir(path, 0700);
		mkdir(sub, 0700);
		snprintf(path, sizeof path, "%s/%s.debug", sub, id + 2);
		write_file(path, debug_part, debug_size);
	}

	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = 0;
	opt.jobs = 1;
	opt.progress = 0;
	opt.warn = quiet;
	opt.debug_file_path = dbgdir;
	ls_error err;
	ls_module *m = ls_module_open(bin, &opt, &err);
	if (m) {
		FILE *devnull = fopen("/dev/null", "w");
		if (devnull) {
			const ls_scope *root = ls_module_root(m);
			const ls_scope *chain[LS_MAX_CHAIN];
			for (const ls_scope *f = root ? ls_scope_first_child(root) : NULL; f; f = ls_scope_next_sibling(f))
				for (const ls_scope *p = ls_scope_first_child(f); p; p = ls_scope_next_sibling(p)) {
					uint64_t lo = ls_scope_low(p);
					ls_lookup_chain(m, lo, chain, LS_MAX_CHAIN);
					ls_write_chain_json(m, lo + 1, devnull);
				}
			ls_write_structure(m, LS_FORMAT_JSON, devnull, &err);
			ls_write_structure(m, LS_FORMAT_XML, devnull, &err);
			fclose(devnull);
		}
		ls_module_close(m);
	} else if (err.message[0] == '\0') {
		fprintf(stderr, "ls_module_open failed without a message\n");
		abort();
	}
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return 0;
}
