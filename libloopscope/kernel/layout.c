/* layout.c - where the kernel's module loader puts a module's code
 * (ls_module_kernel_layout of loopscope.h).
 *
 * A .ko has no addresses of its own: the loader (kernel/module/main.c,
 * layout_sections) lays its core's code sections out one after another
 * from the module's base, in section-header order, each at its alignment,
 * the .init ones apart (they go with the init part, freed after loading).
 * The base is what /proc/modules prints and what perf records as the
 * module's map; an address in .text.unlikely or .static_call.text is found
 * from there through this layout, and only .text's from the base alone.
 */
#include "elf/module.h"
#include "support/base.h"

#include <stdlib.h>
#include <string.h>

size_t ls_module_kernel_layout(const ls_module *m, ls_ksection *out, size_t cap)
{
	size_t shstrndx, n = 0;
	if (!m || !m->elf || !m->relocatable || elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return 0;
	uint64_t off = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		const uint64_t code = SHF_ALLOC | SHF_EXECINSTR;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & code) != code ||
		    !(name = elf_strptr(m->elf, shstrndx, sh.sh_name)) || !strncmp(name, ".init", 5))
			continue;
		uint64_t align = sh.sh_addralign ? sh.sh_addralign : 1;
		off = (off + align - 1) & ~(align - 1);
		if (n < cap) /* sh_addr: libdwfl's layout, .text at the module's 0 (module.c) */
			out[n] = (ls_ksection){ name, off, sh.sh_size, sh.sh_addr - m->bias };
		n++;
		off += sh.sh_size;
	}
	return n;
}

int ls_module_kernel_addr(const ls_module *m, uint64_t off, uint64_t *addr)
{
	size_t n = ls_module_kernel_layout(m, NULL, 0);
	ls_ksection *secs = n ? malloc(n * sizeof *secs) : NULL;
	int rc = -1;
	/* only what was written is read (the count is the same again) */
	size_t cap = n;
	n = secs ? ls_module_kernel_layout(m, secs, cap) : 0;
	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n && rc < 0; i++)
		if (off >= secs[i].offset && off - secs[i].offset < secs[i].size) {
			*addr = secs[i].addr + (off - secs[i].offset);
			rc = 0;
		}
	free(secs);
	return rc;
}
