/* module.c - opens the ELF file with libdwfl and reads its debug
 * information.
 *
 * Owns the first part of struct ls_module: path, build_id, the Dwfl
 * session, the main Elf (the code), the Dwarf (possibly from a separate
 * debug file, which debuginfo.c finds: build-id, .gnu_debuglink,
 * debuginfod), the bias, and the executable sections with their bytes.
 *
 * Before libdwfl sees the file we check it ourselves with plain libelf, so
 * that garbage, truncated and foreign files give a message that names the
 * file and the reason instead of libdwfl's generic one, and so that no later
 * stage reads past the end of a mapped section.
 *
 * Addresses: everything the stages produce is a link-time address.  For
 * ET_REL files (.o, .ko) libdwfl lays the SHF_ALLOC sections out one after
 * another and relocates the DWARF against that layout; we report the same
 * layout shifted so that .text is at 0 (objdump's and readelf's addresses
 * of .text symbols), so DWARF addresses, symbol values and text addresses
 * agree.  relocate.c then relocates the code against that layout.
 */
#include "elf/debuginfo.h"
#include "elf/module.h"
#include "elf/relocate.h"
#include "support/base.h"

#include <elfutils/libdwelf.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_AARCH64: return "AArch64";
	case EM_PPC: return "PowerPC";
	case EM_PPC64: return "PowerPC64";
	case EM_S390: return "s390";
	case EM_RISCV: return "RISC-V";
	case EM_MIPS: return "MIPS";
	case EM_SPARCV9: return "SPARC V9";
	case EM_LOONGARCH: return "LoongArch";
	default: return NULL;
	}
}

/* The machines whose code the decoder understands.  Kept as a function so
 * that adding one is a one-line change here and in decode_*.c. */
static bool machine_supported(const GElf_Ehdr *eh)
{
	return eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_machine == EM_X86_64;
}

/* The file itself: a regular, non-empty file with a complete ELF
 * identification and header.  Sets *FSIZE to its size. */
static int validate_file(const char *path, int fd, uint64_t *fsize_out, ls_error *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		ls_set_error(err, LS_ERR_IO, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		ls_set_error(err, LS_ERR_IO, "%s: is a directory", path);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: not a regular file", path);
		return -1;
	}
	uint64_t fsize = (uint64_t)st.st_size;
	if (fsize == 0) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: empty file", path);
		return -1;
	}
	unsigned char ident[EI_NIDENT];
	ssize_t n = pread(fd, ident, sizeof ident, 0);
	if (n < 0) {
		ls_set_error(err, LS_ERR_IO, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (n < SELFMAG || memcmp(ident, ELFMAG, SELFMAG) != 0) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: not an ELF file", path);
		return -1;
	}
	if (n < EI_NIDENT) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: truncated ELF file (no complete ELF header)", path);
		return -1;
	}
	if (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF file (bad class %u)", path, ident[EI_CLASS]);
		return -1;
	}
	if (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF file (bad data encoding %u)", path, ident[EI_DATA]);
		return -1;
	}
	size_t ehsize = ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (fsize < ehsize) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: truncated ELF file (no complete ELF header)", path);
		return -1;
	}
	*fsize_out = fsize;
	return 0;
}

/* The ELF header: a type and machine we analyze, program headers inside the
 * file. */
static int validate_header(const char *path, Elf *elf, uint64_t fsize, GElf_Ehdr *ehdr, ls_error *err)
{
	GElf_Ehdr eh;
	if (elf_kind(elf) != ELF_K_ELF) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: not an ELF file%s", path,
			     elf_kind(elf) == ELF_K_AR ? " (an ar archive: analyze its members)" : "");
		return -1;
	}
	if (!gelf_getehdr(elf, &eh)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF header (%s)", path, elf_errmsg(-1));
		return -1;
	}
	switch (eh.e_type) {
	case ET_EXEC: case ET_DYN: case ET_REL:
		break;
	case ET_CORE:
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: is a core file, not an executable or library", path);
		return -1;
	default:
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: unsupported ELF file type %u", path, eh.e_type);
		return -1;
	}
	if (!machine_supported(&eh)) {
		const char *mn = machine_name(eh.e_machine);
		char buf[32];
		if (!mn) {
			snprintf(buf, sizeof buf, "%u", eh.e_machine);
			mn = buf;
		}
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: unsupported machine %s%s (loopscope analyzes x86-64 code)",
			     path, mn, eh.e_ident[EI_CLASS] == ELFCLASS32 ? " (32-bit)" : "");
		return -1;
	}
	/* Program headers: libdwfl lays ET_EXEC/ET_DYN modules out by them. */
	if (eh.e_phnum && (eh.e_phoff > fsize || (uint64_t)eh.e_phnum * eh.e_phentsize > fsize - eh.e_phoff)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: truncated ELF file (program headers past the end)", path);
		return -1;
	}
	if (eh.e_type != ET_REL && eh.e_phnum == 0) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF file (no program headers)", path);
		return -1;
	}
	*ehdr = eh;
	return 0;
}

/* The section headers and every section's bytes inside the file. */
static int validate_sections(const char *path, Elf *elf, uint64_t fsize, const GElf_Ehdr *ehdr, ls_error *err)
{
	GElf_Ehdr eh = *ehdr;
	if (eh.e_shoff && (eh.e_shoff > fsize ||
			   (uint64_t)(eh.e_shnum ? eh.e_shnum : 1) * eh.e_shentsize > fsize - eh.e_shoff)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: truncated ELF file (section headers past the end)", path);
		return -1;
	}
	size_t shnum, shstrndx;
	if (elf_getshdrnum(elf, &shnum) < 0) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt section headers (%s)", path, elf_errmsg(-1));
		return -1;
	}
	if (shnum && (eh.e_shoff > fsize || (uint64_t)shnum * eh.e_shentsize > fsize - eh.e_shoff)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: truncated ELF file (section headers past the end)", path);
		return -1;
	}
	if (shnum == 0) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF file (no section headers)", path);
		return -1;
	}
	if (elf_getshdrstrndx(elf, &shstrndx) < 0 || shstrndx >= shnum) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt section headers (no section name table)", path);
		return -1;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt section header %zu (%s)", path,
				     elf_ndxscn(scn), elf_errmsg(-1));
			return -1;
		}
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (sh.sh_offset > fsize || sh.sh_size > fsize - sh.sh_offset) {
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: truncated ELF file (section %s extends past the end)",
				     path, name ? name : "?");
			return -1;
		}
	}
	return 0;
}

/* Checks PATH with libelf alone: is it an ELF file we can analyze, and does
 * every header and section it declares lie inside the file? */
static int validate_elf(const char *path, int fd, ls_error *err)
{
	uint64_t fsize;
	if (validate_file(path, fd, &fsize, err) < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF file (%s)", path, elf_errmsg(-1));
		return -1;
	}
	GElf_Ehdr eh;
	int rc = validate_header(path, elf, fsize, &eh, err) == 0 &&
	         validate_sections(path, elf, fsize, &eh, err) == 0 ? 0 : -1;
	elf_end(elf);
	return rc;
}

char *ls_hex_string(const unsigned char *bits, int len)
{
	static const char digits[] = "0123456789abcdef";
	char *s = ls_xmalloc((size_t)len * 2 + 1);
	for (int i = 0; i < len; i++) {
		s[2 * i] = digits[bits[i] >> 4];
		s[2 * i + 1] = digits[bits[i] & 15];
	}
	s[2 * len] = 0;
	return s;
}

bool ls_elf_has_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(name, want) == 0)
			return true;
	}
	return false;
}

static int cmp_text(const void *a, const void *b)
{
	const struct ls_text *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Collects the executable sections of the main file at their link-time
 * (for ET_REL: laid-out) addresses. */
static int collect_text(ls_module *m, ls_error *err)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		shstrndx = 0;
	size_t cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size) {
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt section %zu (%s)", m->path,
				     elf_ndxscn(scn), elf_errmsg(-1));
			return -1;
		}
		const char *name = shstrndx ? elf_strptr(m->elf, shstrndx, sh.sh_name) : NULL;
		uint64_t addr = sh.sh_addr;
		/* For ET_REL, libdwfl wrote its layout into sh_addr (absolute
		 * dwfl addresses); translate back to the module's own space. */
		if (m->relocatable)
			addr -= m->bias;
		m->text = ls_grow(m->text, &cap, m->ntext + 1, sizeof *m->text);
		m->text[m->ntext++] = (struct ls_text){
			.addr = addr,
			.size = sh.sh_size,
			.data = d->d_buf,
			.name = ls_intern(&m->strings, name ? name : "?"),
		};
	}
	if (m->ntext)
		qsort(m->text, m->ntext, sizeof *m->text, cmp_text);
	/* Code at two places for one address: no linker writes that, and
	 * every stage assumes an address is in one section at most. */
	for (size_t i = 1; i < m->ntext; i++) {
		const struct ls_text *a = &m->text[i - 1], *b = &m->text[i];
		if (b->addr - a->addr < a->size) {
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt: executable sections %s (0x%llx-0x%llx) and %s (at 0x%llx) overlap",
				     m->path, a->name, (unsigned long long)a->addr, (unsigned long long)(a->addr + a->size),
				     b->name, (unsigned long long)b->addr);
			return -1;
		}
	}
	return 0;
}

/* Where an ET_REL file's address 0 is in libdwfl's layout: at .text, so
 * that .text symbols have the addresses objdump, readelf and addr2line show
 * (their st_value), unless another code section was laid out below it (then
 * at the lowest code section: no code at a negative address).  libdwfl
 * wrote its layout into the section headers. */
static uint64_t relocatable_base(const ls_module *m)
{
	size_t shstrndx = 0;
	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		shstrndx = 0;
	uint64_t text = UINT64_MAX, lowest = UINT64_MAX;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		const char *name = shstrndx ? elf_strptr(m->elf, shstrndx, sh.sh_name) : NULL;
		if (name && strcmp(name, ".text") == 0)
			text = sh.sh_addr;
		if (sh.sh_addr < lowest)
			lowest = sh.sh_addr;
	}
	if (text != UINT64_MAX && text <= lowest)
		return text;
	if (lowest != UINT64_MAX)
		return lowest;
	/* No code: the first section at 0, as before. */
	Dwarf_Addr start = 0;
	dwfl_module_info(m->dwmod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	return start;
}

void ls_elf_load_dwarf(ls_module *m, ls_error *err)
{
	if (m->dwarf_tried || !m->dwarf_found)
		return;
	m->dwarf_tried = true;
	Dwarf_Addr bias = 0, dbias = 0;
	dwfl_module_getelf(m->dwmod, &bias); /* libdwfl's bias, before relocatable_base */
	m->dwarf = dwfl_module_getdwarf(m->dwmod, &dbias);
	/* libdw's own answer to running out of memory is to print "libdw:
	 * Cannot allocate memory" and exit the process (GDB's too): ours jumps
	 * to the open's guard, which names the file (api.c). */
	if (m->dwarf)
		dwarf_new_oom_handler(m->dwarf, ls_oom_raise);
	if (!m->dwarf) {
		int e = dwfl_errno();
		/* The debug info is there (find_dwarf saw it) but unreadable:
		 * worth a warning.  No debug info at all is normal (stripped
		 * code) and has no warning: the stages fall back to symbols. */
		ls_warn_dwarf(&m->opt, err, "%s: cannot read debug information (%s); continuing without it",
			      m->debug_path ? m->debug_path : m->path, dwfl_errmsg(e));
	} else if (dbias != bias) {
		/* A debug file prelinked or laid out differently from the code:
		 * our stages use DWARF addresses as link-time addresses. */
		ls_warn(&m->opt, "%s: debug information is at a different bias than the code (0x%llx vs 0x%llx); ignoring it",
			m->path, (unsigned long long)dbias, (unsigned long long)bias);
		m->dwarf = NULL;
	}
	if (!m->dwarf) {
		m->dwarf_found = false; /* stored so in the cache: a later run tries again */
		free(m->debug_path);
		m->debug_path = NULL;
	}
}

int ls_elf_open(ls_module *m, const char *path, ls_error *err)
{
	m->fd = -1;
	char *abs = realpath(path, NULL);
	if (!abs) {
		ls_set_error(err, errno == ENOENT ? LS_ERR_NOT_FOUND : LS_ERR_IO, "%s: %s", path, strerror(errno));
		return -1;
	}
	m->path = abs;

	/* Never blocks on a FIFO: checked to be a regular file before reading. */
	const char *why;
	struct stat st;
	int fd = ls_open_input(abs, &st, &why);
	if (fd < 0) {
		if (errno == EISDIR)
			ls_set_error(err, LS_ERR_IO, "%s: is a directory", path);
		else if (errno == EINVAL)
			ls_set_error(err, LS_ERR_NOT_ELF, "%s: not a regular file (%s)", path, why);
		else
			ls_set_error(err, LS_ERR_IO, "%s: %s", path, why);
		return -1;
	}
	m->file_stat = st;
	elf_version(EV_CURRENT);
	if (validate_elf(path, fd, err) < 0) {
		close(fd);
		return -1;
	}

	if (m->opt.debug_file_path)
		m->debuginfo_path = ls_xstrdup(m->opt.debug_file_path);
	m->dwfl_callbacks = (Dwfl_Callbacks){
		.find_elf = NULL,
		.find_debuginfo = ls_dwfl_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = m->debuginfo_path ? &m->debuginfo_path : NULL,
	};
	m->dwfl = dwfl_begin(&m->dwfl_callbacks);
	if (!m->dwfl) {
		close(fd);
		ls_set_error(err, LS_ERR_NOMEM, "%s: %s", path, dwfl_errmsg(-1));
		return -1;
	}
	/* libdwfl takes the descriptor over on success. */
	m->dwmod = dwfl_report_offline(m->dwfl, abs, abs, fd);
	if (!m->dwmod) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: %s", path, dwfl_errmsg(-1));
		return -1;
	}
	void **userdata;
	dwfl_module_info(m->dwmod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = m; /* for ls_dwfl_find_debuginfo */
	if (dwfl_report_end(m->dwfl, NULL, NULL) != 0) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: %s", path, dwfl_errmsg(-1));
		return -1;
	}

	Dwarf_Addr bias = 0;
	m->elf = dwfl_module_getelf(m->dwmod, &bias);
	if (!m->elf) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: %s", path, dwfl_errmsg(-1));
		return -1;
	}
	m->bias = bias;
	if (!gelf_getehdr(m->elf, &m->ehdr)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: corrupt ELF header (%s)", path, elf_errmsg(-1));
		return -1;
	}
	m->relocatable = m->ehdr.e_type == ET_REL;
	/* Kernel code knows its own noreturn functions (procs.c) and thunks. */
	m->kernel = ls_elf_has_section(m->elf, ".modinfo") || ls_elf_has_section(m->elf, "__ksymtab") ||
	            ls_elf_has_section(m->elf, "__bug_table");

	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(m->dwmod, &bits, &vaddr);
	if (len > 0)
		m->build_id = ls_hex_string(bits, len);

	ls_debuginfo_find(m);
	if (m->relocatable)
		m->bias = relocatable_base(m);
	if (collect_text(m, err) < 0)
		return -1;
	ls_relocate_text(m);
	return 0;
}

void ls_elf_close(ls_module *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->dwmod = NULL;
	m->elf = NULL;
	m->dwarf = NULL;
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	ls_relocate_free(m);
	free(m->text);
	m->text = NULL;
	m->ntext = 0;
	free(m->path);
	free(m->debug_path);
	free(m->build_id);
	free(m->debuginfo_path);
	free(m->debuginfod_why);
	m->path = m->debug_path = m->build_id = m->debuginfo_path = m->debuginfod_why = NULL;
}

const struct ls_text *ls_text_find(const ls_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->ntext;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ls_text *t = &m->text[mid];
		if (addr < t->addr)
			hi = mid;
		else if (addr - t->addr >= t->size)
			lo = mid + 1;
		else
			return t;
	}
	return NULL;
}

const struct ls_text *ls_text_from(const ls_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->ntext; /* sorted by addr, disjoint */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->text[mid].addr + m->text[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ntext ? &m->text[lo] : NULL;
}

static int find_section(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size);

const char *ls_elf_mapped_file(const ls_module *m, const void *addr)
{
	const char *p = addr;
	size_t n = 0;
	const char *base = m->elf ? elf_rawfile(m->elf, &n) : NULL;
	if (base && p >= base && p < base + n)
		return m->path;
	Elf *debug = m->dwarf ? dwarf_getelf(m->dwarf) : NULL;
	base = debug && debug != m->elf ? elf_rawfile(debug, &n) : NULL;
	if (base && p >= base && p < base + n)
		return m->debug_path ? m->debug_path : m->path;
	return NULL;
}

int ls_module_section(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
	if (!m || !m->elf || !name)
		return -1;
	/* The section headers are read from the file's mapping: a file
	 * truncated since the analysis answers "none" (sigbus.c). */
	ls_sigbus_catch();
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env))
		return -1;
	int rc = find_section(m, name, addr, size);
	ls_oom_pop(&g);
	return rc;
}

static int find_section(const ls_module *m, const char *name, uint64_t *addr, uint64_t *size)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		const char *sn;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    !(sn = elf_strptr(m->elf, shstrndx, sh.sh_name)) || strcmp(sn, name) != 0)
			continue;
		if (addr)
			*addr = sh.sh_addr - (m->relocatable ? m->bias : 0);
		if (size)
			*size = sh.sh_size;
		return 0;
	}
	return -1;
}
