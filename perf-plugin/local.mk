# perf-loops, run by perf as `perf loops`.
bin_PROGRAMS += perf-loops
perf_loops_SOURCES = \
	perf-plugin/perf-loops.c perf-plugin/cmd-record.c perf-plugin/record-mode.c perf-plugin/record.h \
	perf-plugin/cmd-report.c \
	perf-plugin/options.c perf-plugin/pager.c perf-plugin/view-sort.c perf-plugin/data-keys.c perf-plugin/places.c perf-plugin/view-header.c perf-plugin/progress.c perf-plugin/names.c perf-plugin/view-pprof.c \
	perf-plugin/perf_data.c perf-plugin/perf_data.h \
	perf-plugin/session.c perf-plugin/session.h \
	perf-plugin/cct.c perf-plugin/find-dso.c perf-plugin/attribute.c perf-plugin/attribute.h \
	perf-plugin/unwind.c perf-plugin/fp-repair.c perf-plugin/report.h \
	perf-plugin/view-tree.c perf-plugin/view-flat.c perf-plugin/view-loops.c \
	perf-plugin/view-folded.c perf-plugin/view-json.c perf-plugin/view-chains.c \
	perf-plugin/offcpu.c perf-plugin/offcpu.h perf-plugin/view-wall.c \
	perf-plugin/cmd-annotate.c perf-plugin/annotate.c perf-plugin/annotate-asm.c perf-plugin/annotate-data.c perf-plugin/data-addr.c perf-plugin/view-annotate.c perf-plugin/view-data.c \
	perf-plugin/browser.c \
	perf-plugin/cmd-stat.c perf-plugin/stat.h perf-plugin/stat-plan.c perf-plugin/stat-run.c \
	perf-plugin/stat-print.c perf-plugin/stat-calibrate.c perf-plugin/stat-hot.c \
	perf-plugin/stat-trace.c perf-plugin/stat-burst.c \
	perf-plugin/search.c perf-plugin/search.h perf-plugin/search-tree.c perf-plugin/search-count.c \
	perf-plugin/search-print.c
perf_loops_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) $(ZSTD_CFLAGS) $(ZLIB_CFLAGS) $(NCURSES_CFLAGS)
perf_loops_LDADD = libloopscope.la libloopscope-json.la $(ELFUTILS_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) $(NCURSES_LIBS) -lm

# The perf.data reader under libFuzzer: ./configure --enable-fuzz CC=clang
if ENABLE_FUZZ
noinst_PROGRAMS += fuzz-perf-data
fuzz_perf_data_SOURCES = perf-plugin/fuzz-perf-data.c perf-plugin/perf_data.c perf-plugin/perf_data.h \
	perf-plugin/session.c perf-plugin/session.h perf-plugin/view-header.c \
	libloopscope/support/file.c libloopscope/support/error.c libloopscope/support/text_escape.c
fuzz_perf_data_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) $(ZSTD_CFLAGS) -fsanitize=fuzzer,address,undefined -g -O1
fuzz_perf_data_LDFLAGS = -fsanitize=fuzzer,address,undefined
fuzz_perf_data_LDADD = $(ZSTD_LIBS)
# The whole report: DSO lookup, ELF loading, kallsyms, unwinding, views.
noinst_PROGRAMS += fuzz-perf-report
fuzz_perf_report_SOURCES = perf-plugin/fuzz-perf-report.c \
	perf-plugin/perf_data.c perf-plugin/perf_data.h perf-plugin/session.c perf-plugin/session.h \
	perf-plugin/cct.c perf-plugin/find-dso.c perf-plugin/attribute.c perf-plugin/attribute.h \
	perf-plugin/unwind.c perf-plugin/fp-repair.c perf-plugin/report.h \
	perf-plugin/view-tree.c perf-plugin/view-flat.c perf-plugin/view-loops.c \
	perf-plugin/view-folded.c perf-plugin/view-json.c perf-plugin/view-chains.c perf-plugin/names.c \
	perf-plugin/places.c perf-plugin/progress.c perf-plugin/offcpu.c perf-plugin/view-wall.c \
	perf-plugin/data-addr.c perf-plugin/view-data.c perf-plugin/data-keys.c
fuzz_perf_report_CFLAGS = $(AM_CFLAGS) $(ELFUTILS_CFLAGS) $(ZSTD_CFLAGS) -g -O1
fuzz_perf_report_LDFLAGS = -fsanitize=fuzzer,address,undefined
fuzz_perf_report_LDADD = $(libloopscope_internal_la_OBJECTS) $(libloopscope_internal_la_LIBADD) $(ELFUTILS_LIBS) $(ZSTD_LIBS)
endif
if ENABLE_FUZZ
# make fuzz-perf-data-run [FUZZ_SECONDS=180]: fuzz from seeds recorded now
fuzz-perf-data-run: fuzz-perf-data
	mkdir -p fuzz-corpus/perf-data
	perf record -q -e cpu-clock --call-graph=fp -o fuzz-corpus/perf-data/seed-file.data true || :
	perf record -q -e cpu-clock --call-graph=fp -o - true >fuzz-corpus/perf-data/seed-pipe.data || :
	./fuzz-perf-data -max_total_time=$${FUZZ_SECONDS:-180} -max_len=70000 -print_final_stats=1 fuzz-corpus/perf-data
.PHONY: fuzz-perf-data-run
endif
