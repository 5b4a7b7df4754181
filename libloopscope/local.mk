# libloopscope: one folder per group of stages, one file per stage (see
# libloopscope/README.md for what each folder owns, reads and makes).
#
# The stages are built once, into a convenience library compiled with
# -fvisibility=hidden (loopscope.h alone declares default visibility), which
# the unit tests link to reach internal stages.  libloopscope.so is that
# library behind libloopscope/loopscope.map: only loopscope.h's functions, in
# its version nodes (LOOPSCOPE_0.1, LOOPSCOPE_0.2).  loopscope-version.h is
# made by configure (LS_VERSION, from AC_INIT).
lib_LTLIBRARIES += libloopscope.la
noinst_LTLIBRARIES += libloopscope-internal.la
include_HEADERS += libloopscope/loopscope.h
nodist_include_HEADERS = libloopscope/loopscope-version.h
EXTRA_DIST += libloopscope/loopscope-version.h.in
libloopscope_internal_la_SOURCES = \
	libloopscope/api.c libloopscope/compat.c libloopscope/pipeline.c libloopscope/pipeline.h \
	libloopscope/analyze.c libloopscope/analyze.h \
	libloopscope/support/base.h libloopscope/support/error.c libloopscope/support/file.c \
	libloopscope/support/arena.c libloopscope/support/strtab.c libloopscope/support/demangle.c \
	libloopscope/support/progress.c libloopscope/support/workers.c libloopscope/support/sigbus.c \
	libloopscope/support/sort.c libloopscope/support/sort.h \
	libloopscope/elf/module.c libloopscope/elf/module.h libloopscope/elf/elf_file.c \
	libloopscope/elf/debuginfo.c libloopscope/elf/debuginfo.h \
	libloopscope/kernel/kmap.c libloopscope/kernel/layout.c \
	libloopscope/elf/relocate.c libloopscope/elf/relocate.h \
	libloopscope/elf/symbols.c libloopscope/elf/symbols.h \
	libloopscope/dwarf/inline_tree.c libloopscope/dwarf/inline_tree.h \
	libloopscope/dwarf/die_order.c libloopscope/dwarf/die_order.h \
	libloopscope/dwarf/procs.c libloopscope/dwarf/procs.h libloopscope/dwarf/proc_bounds.c \
	libloopscope/dwarf/linemap.c libloopscope/dwarf/linemap.h \
	libloopscope/dwarf/line_files.c libloopscope/dwarf/line_files.h \
	libloopscope/cfg/decode.h libloopscope/cfg/decode_x86.c libloopscope/cfg/decode_x86_fast.c libloopscope/cfg/decode_x86_fast.h \
	libloopscope/cfg/decode_x86_flow.c \
	libloopscope/cfg/opcodes.h libloopscope/cfg/disasm.c \
	libloopscope/cfg/cfg.c libloopscope/cfg/cfg.h libloopscope/cfg/cfg_private.h \
	libloopscope/cfg/eh_frame.c libloopscope/cfg/jump_tables.c libloopscope/cfg/noreturn.c \
	libloopscope/cfg/kernel_edges.c \
	libloopscope/cfg/stack_slots.c \
	libloopscope/loops/loop_forest.c libloopscope/loops/loop_forest.h \
	libloopscope/loops/loop_line.c libloopscope/loops/loop_kind.c libloopscope/loops/source.c libloopscope/loops/source.h \
	libloopscope/loops/probe_points.c libloopscope/loops/loop_find.c \
	libloopscope/structure/structure.c libloopscope/structure/structure.h libloopscope/structure/normalize.c \
	libloopscope/structure/scope.c libloopscope/structure/scope.h \
	libloopscope/structure/lookup.c libloopscope/structure/lookup.h \
	libloopscope/structure/check.c libloopscope/structure/check.h \
	libloopscope/unwind/recipes.c libloopscope/unwind/recipes.h \
	libloopscope/cache/cache.c libloopscope/cache/cache.h libloopscope/cache/cache_format.h \
	libloopscope/cache/cache_store.c libloopscope/cache/cache_accesses.c libloopscope/cache/cache_dir.c \
	libloopscope/data/accesses.c libloopscope/data/accesses.h libloopscope/data/location.c libloopscope/data/location.h \
	libloopscope/data/types.c libloopscope/data/types.h libloopscope/data/reg_origin.c libloopscope/data/reg_origin.h libloopscope/data/reg_names.c libloopscope/data/reg_names.h libloopscope/data/blame.c \
	libloopscope/output/output.h libloopscope/output/output_text.c \
	libloopscope/output/output_json.c libloopscope/output/output_xml.c
libloopscope_internal_la_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) -fvisibility=hidden -DLS_SYMVER
libloopscope_internal_la_LIBADD = libloopscope-json.la $(ELFUTILS_LIBS) $(OPCODES_LIBS) $(IBERTY_LIBS) -lpthread -ldl
# The one JSON writer: the library's JSON outputs, `loopscope lookup --json`
# and `perf loops report --format=json` share it.  A convenience library of
# its own, since the front ends link libloopscope.so, which does not export it.
noinst_LTLIBRARIES += libloopscope-json.la
# The text escaper too (names and paths printed on a terminal), which the
# library's text writer and the front ends' text outputs share.
libloopscope_json_la_SOURCES = libloopscope/support/json_writer.c libloopscope/support/json_writer.h \
	libloopscope/support/text_escape.c libloopscope/support/text_escape.h
libloopscope_json_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libloopscope_la_SOURCES =
libloopscope_la_LIBADD = libloopscope-internal.la
libloopscope_la_LDFLAGS = -version-info 1:0:1 -Wl,--version-script=$(srcdir)/libloopscope/loopscope.map
EXTRA_libloopscope_la_DEPENDENCIES = $(srcdir)/libloopscope/loopscope.map
EXTRA_DIST += libloopscope/loopscope.map libloopscope/README.md
# pkg-config --cflags --libs loopscope
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libloopscope/loopscope.pc
EXTRA_DIST += libloopscope/loopscope.pc.in
