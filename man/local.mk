# Manual pages and shell completion (issue 11).  perf runs `man perf-loops`
# for `perf loops --help`, as it runs `man perf-report` for perf report;
# man finds PREFIX/share/man through PREFIX/bin on PATH.
dist_man1_MANS = man/loopscope.1 man/perf-loops.1
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = man/completion/loopscope man/completion/perf-loops
# perf's own completion never offers `loops` (it lists perf's built-in
# commands): man/completion/perf wraps it.  It is installed only where no
# other file named perf is (installing into perf's own directory, as with
# --prefix=/usr, would replace perf's), and removed only if it is ours.
EXTRA_DIST += man/completion/perf
install-data-local: install-perf-completion
uninstall-local: uninstall-perf-completion
.PHONY: install-perf-completion uninstall-perf-completion
# bash-completion (2.11, Debian 12) looks in XDG_DATA_DIRS only (by default
# /usr/local/share:/usr/share) and the user's directory: installed elsewhere
# (--prefix=$HOME/opt), the completions are not found; make install says so.
install-perf-completion:
	@f="$(DESTDIR)$(bashcompletiondir)/perf"; \
	if [ -e "$$f" ] && ! grep -q "with .perf loops. in it (loopscope)" "$$f"; then \
		echo "not installing $$f: another perf completion is there (perf <TAB> will not offer loops)"; \
	else \
		$(MKDIR_P) "$(DESTDIR)$(bashcompletiondir)" && \
		$(INSTALL_DATA) "$(srcdir)/man/completion/perf" "$$f"; \
	fi; \
	case ":$${XDG_DATA_DIRS:-/usr/local/share:/usr/share}:" in \
	*":$(datadir):"*|*":$(datadir)/:"*) ;; \
	*) echo "note: bash completion installed in $(bashcompletiondir), which bash-completion does not search"; \
	   echo "      (it looks in XDG_DATA_DIRS: $${XDG_DATA_DIRS:-/usr/local/share:/usr/share}): for perf loops <TAB>,"; \
	   echo "      export XDG_DATA_DIRS=$(datadir):$${XDG_DATA_DIRS:-/usr/local/share:/usr/share} in ~/.profile,"; \
	   echo "      or link $(bashcompletiondir)/* into ~/.local/share/bash-completion/completions/" ;; \
	esac
uninstall-perf-completion:
	@f="$(DESTDIR)$(bashcompletiondir)/perf"; \
	if [ -e "$$f" ] && grep -q "with .perf loops. in it (loopscope)" "$$f"; then rm -f "$$f"; fi

# The distribution (make dist, make distcheck): files no other rule lists.
EXTRA_DIST += examples/small.cpp bench/perf-report.sh bench/perf-loops-elf.sh bench/loop-stat.sh bench/offcpu.py \
	scripts/build scripts/check scripts/demo scripts/setup-deps scripts/distcheck
# The developer scripts and notes the tests and bench/ name (issues 9-14).
EXTRA_DIST += scripts/check-sanitizers scripts/fuzz-ci scripts/fuzz-coverage \
	scripts/longest-functions scripts/mutate-campaign
