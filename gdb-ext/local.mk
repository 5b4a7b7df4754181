# The GDB extension: Python package over a C module over libloopscope.
#
# _loopscope.so is a libtool module built against the Python GDB embeds; it
# and the Python files are installed side by side in $(pkglibdir)/gdb
# (PREFIX/lib/loopscope/gdb: the module is architecture-dependent), so that
#   source PREFIX/lib/loopscope/gdb/loopscope.py
# finds the module next to the script (loopscope_gdb.py and the other
# loopscope_*.py hold the commands).  In a build tree the script looks in
# gdb-ext/.libs too; for out-of-tree builds the scripts are copied into the
# build tree so `source $builddir/gdb-ext/loopscope.py` works as well.
#
# Auto-load: the one-line drop-in loopscope.gdb (`source` of the installed
# script) goes to $(pkgdatadir)/gdbinit.d, and with
# ./configure --with-gdb-system-gdbinit-dir[=DIR] also to GDB's system
# gdbinit directory (Debian: /etc/gdb/gdbinit.d), which GDB reads at start.
# The man page loopscope-gdb(1) is gdb-ext/loopscope-gdb.1.
if HAVE_GDB_PYTHON
gdbextdir = $(pkglibdir)/gdb
gdbext_LTLIBRARIES = gdb-ext/_loopscope.la
gdb_ext__loopscope_la_SOURCES = gdb-ext/_loopscope.c
gdb_ext__loopscope_la_CFLAGS = $(AM_CFLAGS) $(GDB_PYTHON_CFLAGS) -fvisibility=default
gdb_ext__loopscope_la_LIBADD = libloopscope.la
# -R: the installed module finds the installed libloopscope in any prefix.
gdb_ext__loopscope_la_LDFLAGS = -module -avoid-version -shared -R$(libdir)
gdbext_py = loopscope.py loopscope_gdb.py loopscope_args.py loopscope_settings.py loopscope_mi.py \
	loopscope_step.py loopscope_breakloop.py loopscope_tui.py loopscope_module.py
dist_gdbext_DATA = $(addprefix gdb-ext/,$(gdbext_py))
gdbextman1dir = $(mandir)/man1
dist_gdbextman1_DATA = gdb-ext/loopscope-gdb.1

# The drop-in is written at install time, so that it names the installed
# script (`make install prefix=...` included).
gdbinitddir = $(pkgdatadir)/gdbinit.d
gdbext_dropin = echo '\# loopscope: the GDB commands in every session (structure, info loops, loop-next, ...)'; \
	echo 'source $(gdbextdir)/loopscope.py'
install-data-hook: gdb-ext-install-dropin
.PHONY: gdb-ext-install-dropin
gdb-ext-install-dropin:
	$(MKDIR_P) $(DESTDIR)$(gdbinitddir)
	{ $(gdbext_dropin); } >$(DESTDIR)$(gdbinitddir)/loopscope.gdb
	@if test -n "$(gdb_system_gdbinit_dir)"; then \
		echo " $(MKDIR_P) $(DESTDIR)$(gdb_system_gdbinit_dir)"; \
		$(MKDIR_P) $(DESTDIR)$(gdb_system_gdbinit_dir) && \
		echo " cp $(gdbinitddir)/loopscope.gdb $(DESTDIR)$(gdb_system_gdbinit_dir)/loopscope.gdb" && \
		cp $(DESTDIR)$(gdbinitddir)/loopscope.gdb $(DESTDIR)$(gdb_system_gdbinit_dir)/loopscope.gdb; \
	fi

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
	rm -f $(DESTDIR)$(gdbextdir)/_loopscope.so $(DESTDIR)$(gdbinitddir)/loopscope.gdb
	@if test -n "$(gdb_system_gdbinit_dir)"; then \
		rm -f $(DESTDIR)$(gdb_system_gdbinit_dir)/loopscope.gdb; \
	fi
clean-local: gdb-ext-clean-script-copy
.PHONY: gdb-ext-clean-script-copy
gdb-ext-clean-script-copy:
	@if test "$(abs_srcdir)" != "$(abs_builddir)"; then rm -f $(addprefix gdb-ext/,$(gdbext_py)); fi
endif
EXTRA_DIST += bench/gdb-latency.sh
