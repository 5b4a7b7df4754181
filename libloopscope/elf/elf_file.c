/* elf_file.c - an ELF file as the front ends need it before any analysis:
 * its build-id, where file offsets load (PT_LOAD), its sections and its
 * function symbols (the public ls_file_* calls of loopscope.h).
 *
 * perf-loops matches a recorded build-id and turns mmap offsets into
 * link-time addresses for every binary a profile names; the GDB extension
 * wants the section addresses of every shared library GDB maps.  Neither
 * needs the structure, so this reads the file with libelf alone (no DWARF,
 * no libdwfl, no analysis) and stays cheap: the sections and segments are
 * read at open, the symbol table on first use.  Strings point into
 * libelf's copies of the file's pieces (read, not mapped), which live until
 * ls_file_close.
 */
#include "support/base.h"
#include "support/sort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ls_file_seg {
	uint64_t off, vaddr, filesz;
};

struct ls_file_syms {
	ls_symbol *v;      /* sorted by address, ties in symbol-table order */
	size_t n;
};

struct ls_file {
	int fd;
	char *path;                /* for messages */
	Elf *elf;
	bool relocatable;
	int machine;               /* e_machine */
	const uint8_t *build_id;   /* in the mapping */
	size_t build_id_size;
	struct ls_file_seg *segs;  /* PT_LOAD, in program-header order */
	size_t nsegs;
	ls_section *secs;          /* in section-header order */
	size_t nsecs;
	struct ls_file_syms *syms; /* built by the first ls_file_symbol_at */
};

/* The GNU build-id note in D, or 0. */
static size_t note_build_id(Elf_Data *d, const uint8_t **bits)
{
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;
	while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)d->d_buf + noff, "GNU", 4)) {
			*bits = (const uint8_t *)d->d_buf + doff;
			return nh.n_descsz;
		}
	}
	return 0;
}

/* The build-id from the program headers' notes, or (in a .o or .ko, which
 * has none) from the note sections. */
static void read_build_id(ls_file *f)
{
	size_t phnum = 0;
	if (!f->relocatable && elf_getphdrnum(f->elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && !f->build_id_size; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_NOTE)
				f->build_id_size = note_build_id(
					elf_getdata_rawchunk(f->elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR), &f->build_id);
		}
		return;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn)) && !f->build_id_size;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			f->build_id_size = note_build_id(elf_getdata(scn, NULL), &f->build_id);
	}
}

static int read_segments(ls_file *f)
{
	size_t phnum = 0;
	if (elf_getphdrnum(f->elf, &phnum) != 0 || !phnum)
		return 0;
	f->segs = calloc(phnum, sizeof *f->segs);
	if (!f->segs)
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->segs[f->nsegs++] = (struct ls_file_seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return 0;
}

static int read_sections(ls_file *f)
{
	size_t shnum = 0, shstrndx;
	if (elf_getshdrnum(f->elf, &shnum) != 0 || elf_getshdrstrndx(f->elf, &shstrndx) != 0 || !shnum)
		return 0;
	f->secs = calloc(shnum, sizeof *f->secs);
	if (!f->secs)
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(f->elf, shstrndx, sh.sh_name)))
			continue;
		f->secs[f->nsecs++] = (ls_section){
			.name = name, .addr = sh.sh_addr, .offset = sh.sh_offset, .size = sh.sh_size,
			.align = sh.sh_addralign ? sh.sh_addralign : 1,
			.flags = ((sh.sh_flags & SHF_ALLOC) ? LS_SECTION_ALLOC : 0) |
			         ((sh.sh_flags & SHF_EXECINSTR) ? LS_SECTION_EXEC : 0) |
			         ((sh.sh_flags & SHF_WRITE) ? LS_SECTION_WRITE : 0),
		};
	}
	return 0;
}

ls_file *ls_file_open(const char *path, ls_error *err)
{
	if (!path || !*path) {
		ls_set_error(err, LS_ERR_USAGE, "no file name given");
		return NULL;
	}
	ls_file *f = calloc(1, sizeof *f);
	if (!f) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
		return NULL;
	}
	/* A FIFO or device named where a binary is expected must not block us
	 * (file.c): only regular files are opened. */
	const char *why;
	f->fd = ls_open_input(path, NULL, &why);
	if (f->fd < 0) {
		ls_set_error(err, errno == ENOENT ? LS_ERR_NOT_FOUND : LS_ERR_IO, "%s: %s", path, why);
		free(f);
		return NULL;
	}
	elf_version(EV_CURRENT);
	/* Read, not mapped: the names and notes handed out live in libelf's
	 * copies, so a file truncated meanwhile (`cp` over a library perf
	 * recorded) gives short reads, never SIGBUS in the front end's code. */
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh)) {
		ls_set_error(err, LS_ERR_NOT_ELF, "%s: not an ELF file", path);
		ls_file_close(f);
		return NULL;
	}
	f->relocatable = eh.e_type == ET_REL;
	f->machine = eh.e_machine;
	f->path = strdup(path);
	read_build_id(f);
	if (!f->path || read_segments(f) < 0 || read_sections(f) < 0) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", path);
		ls_file_close(f);
		return NULL;
	}
	return f;
}

void ls_file_close(ls_file *f)
{
	if (!f)
		return;
	if (f->syms)
		free(f->syms->v);
	free(f->syms);
	free(f->segs);
	free(f->secs);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

size_t ls_file_build_id(const ls_file *f, const uint8_t **bits)
{
	if (bits)
		*bits = f->build_id;
	return f->build_id_size;
}

int ls_file_is_relocatable(const ls_file *f) { return f->relocatable; }
int ls_file_machine(const ls_file *f) { return f->machine; }

int ls_file_read_code(const ls_file *f, uint64_t lo, uint64_t hi, uint8_t *buf, ls_error *err)
{
	const ls_section *sec = NULL;
	for (size_t i = 0; i < f->nsecs; i++) {
		const ls_section *s = &f->secs[i];
		if ((s->flags & LS_SECTION_EXEC) && lo >= s->addr && hi >= lo && hi - s->addr <= s->size)
			sec = s;
	}
	if (!sec) {
		ls_set_error(err, LS_ERR_NOT_FOUND, "%s: no code section holds %#llx-%#llx", f->path,
			     (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	size_t n = hi - lo;
	for (size_t got = 0; got < n;) {
		ssize_t k = pread(f->fd, buf + got, n - got, (off_t)(sec->offset + (lo - sec->addr) + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			ls_set_error(err, LS_ERR_IO, "%s: the code at %#llx is cut short", f->path,
				     (unsigned long long)(lo + got));
			return -1;
		}
		got += (size_t)k;
	}
	return 0;
}

int ls_file_offset_to_addr(const ls_file *f, uint64_t off, uint64_t *addr)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct ls_file_seg *s = &f->segs[i];
		if (off >= s->off && off - s->off < s->filesz) {
			*addr = s->vaddr + (off - s->off);
			return 0;
		}
	}
	return -1;
}

size_t ls_file_nsections(const ls_file *f) { return f->nsecs; }

const ls_section *ls_file_section(const ls_file *f, size_t i)
{
	return i < f->nsecs ? &f->secs[i] : NULL;
}

const ls_section *ls_file_section_named(const ls_file *f, const char *name)
{
	for (size_t i = 0; i < f->nsecs; i++)
		if (!strcmp(f->secs[i].name, name))
			return &f->secs[i];
	return NULL;
}

/* ---- function symbols by address ---------------------------------------- */

struct sym_order {
	ls_symbol sym;
	size_t order;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_order *x = a, *y = b;
	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Defined, named STT_FUNC symbols of the tables of TYPE, appended to V. */
static int add_symbols(Elf *elf, Elf64_Word type, struct sym_order **v, size_t *n)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t count = sh.sh_size / sh.sh_entsize;
		struct sym_order *nv = realloc(*v, (*n + count + 1) * sizeof **v);
		if (!nv)
			return -1;
		*v = nv;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym s;
			if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			(*v)[*n] = (struct sym_order){ { name, s.st_value, s.st_size }, *n };
			(*n)++;
		}
	}
	return 0;
}

/* .symtab's functions, else .dynsym's, sorted by address. */
static struct ls_file_syms *build_symbols(const ls_file *f)
{
	struct ls_file_syms *t = calloc(1, sizeof *t);
	struct sym_order *v = NULL;
	size_t n = 0;
	if (!t || add_symbols(f->elf, SHT_SYMTAB, &v, &n) < 0 ||
	    (!n && add_symbols(f->elf, SHT_DYNSYM, &v, &n) < 0)) {
		free(v);
		free(t);
		return NULL;
	}
	if (n > 1) /* no symbols: V may be NULL, which qsort must not get */
		ls_sort_runs(v, n, sizeof *v, cmp_sym);
	t->v = malloc((n + 1) * sizeof *t->v);
	if (!t->v) {
		free(v);
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		t->v[i] = v[i].sym;
	t->n = n;
	free(v);
	return t;
}

/* Built by the first lookup; two threads racing both build it and the loser
 * frees its copy (as symbols.c does). */
static const struct ls_file_syms *file_symbols(const ls_file *cf)
{
	ls_file *f = (ls_file *)cf; /* the table is logically const */
	struct ls_file_syms *t = __atomic_load_n(&f->syms, __ATOMIC_ACQUIRE);
	if (t)
		return t;
	struct ls_file_syms *fresh = build_symbols(f), *expected = NULL;
	if (!fresh)
		return NULL;
	if (__atomic_compare_exchange_n(&f->syms, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fresh;
	free(fresh->v);
	free(fresh);
	return expected;
}

int ls_file_symbol_at(const ls_file *f, uint64_t addr, ls_symbol *out)
{
	const struct ls_file_syms *t = file_symbols(f);
	if (!t)
		return -1;
	size_t lo = LS_FIRST_ABOVE(t->v, t->n, addr, addr);
	if (!lo)
		return -1;
	const ls_symbol *s = &t->v[lo - 1];
	if (s->size && addr - s->addr >= s->size)
		return -1;
	*out = *s;
	return 0;
}
