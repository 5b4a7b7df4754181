# libloopscope: one file per stage (see libloopscope/internal.h).
#
# The stages are built once, into a convenience library compiled with
# -fvisibility=hidden (loopscope.h alone declares default visibility), which
# the unit tests link to reach internal stages.  libloopscope.so is that
# library behind libloopscope/loopscope.map: only loopscope.h's functions, in the
# version node LOOPSCOPE_0.1.
lib_LTLIBRARIES += libloopscope.la
noinst_LTLIBRARIES += libloopscope-internal.la
include_HEADERS += libloopscope/loopscope.h
libloopscope_internal_la_SOURCES = \
	libloopscope/internal.h libloopscope/decode.h libloopscope/cfg.h libloopscope/cfg_private.h libloopscope/loop_forest.h \
	libloopscope/source.h libloopscope/structure.h \
	libloopscope/base.h libloopscope/module.h libloopscope/relocate.h libloopscope/procs.h libloopscope/symbols.h \
	libloopscope/linemap.h libloopscope/inline_tree.h libloopscope/scope.h libloopscope/lookup.h libloopscope/check.h \
	libloopscope/analyze.h libloopscope/cache.h libloopscope/output.h libloopscope/pipeline.h \
	libloopscope/error.c libloopscope/file.c libloopscope/arena.c libloopscope/strtab.c \
	libloopscope/demangle.c libloopscope/progress.c libloopscope/workers.c \
	libloopscope/module.c libloopscope/elf_file.c libloopscope/relocate.c libloopscope/symbols.c \
	libloopscope/procs.c libloopscope/linemap.c libloopscope/inline_tree.c \
	libloopscope/decode_x86.c libloopscope/cfg.c libloopscope/eh_frame.c libloopscope/jump_tables.c libloopscope/noreturn.c libloopscope/loop_forest.c \
	libloopscope/structure.c libloopscope/loop_line.c libloopscope/source.c \
	libloopscope/normalize.c libloopscope/pipeline.c libloopscope/analyze.c \
	libloopscope/scope.c libloopscope/check.c libloopscope/lookup.c libloopscope/api.c libloopscope/cache.c libloopscope/cache_dir.c \
	libloopscope/output_text.c libloopscope/output_json.c libloopscope/output_xml.c
libloopscope_internal_la_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) -fvisibility=hidden
libloopscope_internal_la_LIBADD = libloopscope-json.la $(ELFUTILS_LIBS) $(OPCODES_LIBS) $(IBERTY_LIBS) -lpthread
# The one JSON writer: the library's JSON outputs, `loopscope lookup --json`
# and `perf loops report --format=json` share it.  A convenience library of
# its own, since the front ends link libloopscope.so, which does not export it.
noinst_LTLIBRARIES += libloopscope-json.la
libloopscope_json_la_SOURCES = libloopscope/json_writer.c libloopscope/json_writer.h
libloopscope_json_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libloopscope_la_SOURCES =
libloopscope_la_LIBADD = libloopscope-internal.la
libloopscope_la_LDFLAGS = -version-info 0:0:0 -Wl,--version-script=$(srcdir)/libloopscope/loopscope.map
EXTRA_libloopscope_la_DEPENDENCIES = $(srcdir)/libloopscope/loopscope.map
EXTRA_DIST += libloopscope/loopscope.map
# pkg-config --cflags --libs loopscope
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libloopscope/loopscope.pc
EXTRA_DIST += libloopscope/loopscope.pc.in
