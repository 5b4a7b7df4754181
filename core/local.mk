# libloopscope: one file per stage (see core/internal.h).
lib_LTLIBRARIES += libloopscope.la
include_HEADERS += core/loopscope.h
libloopscope_la_SOURCES = \
	core/internal.h core/decode.h core/cfg.h core/loop_forest.h core/source.h core/structure.h \
	core/error.c core/file.c core/arena.c core/strtab.c core/demangle.c core/progress.c core/workers.c \
	core/module.c core/relocate.c core/symbols.c core/procs.c core/linemap.c core/inline_tree.c \
	core/decode_x86.c core/cfg.c core/loop_forest.c \
	core/structure.c core/loop_line.c core/source.c core/normalize.c core/analyze.c \
	core/scope.c core/lookup.c core/api.c core/cache.c core/cache_dir.c \
	core/output_text.c core/output_json.c core/output_xml.c
libloopscope_la_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS)
libloopscope_la_LIBADD = $(ELFUTILS_LIBS) $(OPCODES_LIBS) $(IBERTY_LIBS) -lpthread
libloopscope_la_LDFLAGS = -version-info 0:0:0
