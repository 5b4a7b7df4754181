# The GDB extension: Python package over a C module over libloopscope.
#
# _loopscope.so is a libtool module built against the Python GDB embeds; it
# and loopscope.py are installed side by side in $(pkgdatadir)/gdb, so that
#   source PREFIX/share/loopscope/gdb/loopscope.py
# finds the module next to the script (loopscope_gdb.py holds the commands).
# In a build tree the script looks in
# gdb-ext/.libs too; for out-of-tree builds the script is copied into the
# build tree so `source $builddir/gdb-ext/loopscope.py` works as well.
if HAVE_GDB_PYTHON
gdbextdir = $(pkgdatadir)/gdb
gdbext_LTLIBRARIES = gdb-ext/_loopscope.la
gdb_ext__loopscope_la_SOURCES = gdb-ext/_loopscope.c
gdb_ext__loopscope_la_CFLAGS = $(AM_CFLAGS) $(GDB_PYTHON_CFLAGS) -fvisibility=default
gdb_ext__loopscope_la_LIBADD = libloopscope.la
gdb_ext__loopscope_la_LDFLAGS = -module -avoid-version -shared
gdbext_py = loopscope.py loopscope_gdb.py loopscope_settings.py loopscope_mi.py loopscope_step.py
dist_gdbext_DATA = $(addprefix gdb-ext/,$(gdbext_py))

all-local: gdb-ext-script-in-builddir
.PHONY: gdb-ext-script-in-builddir
gdb-ext-script-in-builddir:
	@if test "$(abs_srcdir)" != "$(abs_builddir)"; then \
		$(MKDIR_P) gdb-ext && \
		for f in $(gdbext_py); do \
			cmp -s $(srcdir)/gdb-ext/$$f gdb-ext/$$f || cp $(srcdir)/gdb-ext/$$f gdb-ext/$$f || exit 1; \
		done; \
	fi
# Python imports _loopscope.so; the libtool archive beside it is no use there.
install-data-hook: gdb-ext-remove-la
.PHONY: gdb-ext-remove-la
gdb-ext-remove-la:
	rm -f $(DESTDIR)$(gdbextdir)/_loopscope.la
uninstall-local: gdb-ext-uninstall-so
.PHONY: gdb-ext-uninstall-so
gdb-ext-uninstall-so:
	rm -f $(DESTDIR)$(gdbextdir)/_loopscope.so
clean-local: gdb-ext-clean-script-copy
.PHONY: gdb-ext-clean-script-copy
gdb-ext-clean-script-copy:
	@if test "$(abs_srcdir)" != "$(abs_builddir)"; then rm -f $(addprefix gdb-ext/,$(gdbext_py)); fi
endif
EXTRA_DIST += bench/gdb-latency.sh
