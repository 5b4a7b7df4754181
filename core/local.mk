# libloopscope: one file per stage (see core/internal.h).
#
# The stages are built once, into a convenience library compiled with
# -fvisibility=hidden (loopscope.h alone declares default visibility), which
# the unit tests link to reach internal stages.  libloopscope.so is that
# library behind core/loopscope.map: only loopscope.h's functions, in the
# version node LOOPSCOPE_0.1.
lib_LTLIBRARIES += libloopscope.la
noinst_LTLIBRARIES += libloopscope-internal.la
include_HEADERS += core/loopscope.h
libloopscope_internal_la_SOURCES = \
	core/internal.h core/decode.h core/cfg.h core/loop_forest.h \
	core/error.c core/arena.c core/strtab.c core/demangle.c core/progress.c core/workers.c \
	core/module.c core/elf_file.c core/relocate.c core/symbols.c core/procs.c core/linemap.c core/inline_tree.c \
	core/decode_x86.c core/cfg.c core/loop_forest.c \
	core/structure.c core/normalize.c core/analyze.c \
	core/scope.c core/lookup.c core/api.c core/cache.c \
	core/output_text.c core/output_json.c core/output_xml.c
libloopscope_internal_la_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) -fvisibility=hidden
libloopscope_internal_la_LIBADD = $(ELFUTILS_LIBS) $(OPCODES_LIBS) $(IBERTY_LIBS) -lpthread
libloopscope_la_SOURCES =
libloopscope_la_LIBADD = libloopscope-internal.la
libloopscope_la_LDFLAGS = -version-info 0:0:0 -Wl,--version-script=$(srcdir)/core/loopscope.map
EXTRA_libloopscope_la_DEPENDENCIES = $(srcdir)/core/loopscope.map
EXTRA_DIST += core/loopscope.map
# pkg-config --cflags --libs loopscope
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = core/loopscope.pc
EXTRA_DIST += core/loopscope.pc.in
