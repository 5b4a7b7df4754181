#!/bin/sh
# perf-install.sh - the install as a user meets it: the distribution files
# configured with --prefix=TMP, built, installed, then the installed
# commands run at once (RUNPATH, no LD_LIBRARY_PATH): loopscope, perf loops
# with PREFIX/bin on PATH, `perf loops --help` (perf opens man perf-loops, as
# it opens perf-report(1) for perf report --help), man loopscope, and the
# bash completion (perf <TAB> offering loops).  Slow (a full build): LOOPSCOPE_SKIP_INSTALL_TEST=1 skips it.
. "$top_srcdir/tests/lib.sh"
[ -z "${LOOPSCOPE_SKIP_INSTALL_TEST:-}" ] || skip_all "LOOPSCOPE_SKIP_INSTALL_TEST is set"
[ -f "$top_builddir/Makefile" ] || skip_all "no configured build tree"
PREFIX="$TMP/prefix"
# the files of the distribution, as `make dist` would pack them
if make -s -C "$top_builddir" distdir distdir="$TMP/src" >"$TMP/distdir.log" 2>&1; then
	pass "make distdir"
else
	fail "make distdir"; sed 's/^/# /' "$TMP/distdir.log"; done_testing
fi
cd "$TMP/src" || exit 1
./configure --quiet --prefix="$PREFIX" >"$TMP/configure.log" 2>&1 && \
	make -s -j"$(nproc)" >"$TMP/make.log" 2>&1 && XDG_DATA_DIRS= make -s install >"$TMP/install.log" 2>&1
rc=$?
ok $rc "./configure --prefix=TMP && make && make install"
[ $rc -eq 0 ] || { tail -n 20 "$TMP/configure.log" "$TMP/make.log" "$TMP/install.log" >&2; done_testing; }
cd "$TMP" || exit 1
unset LD_LIBRARY_PATH MANPATH
# a prefix outside XDG_DATA_DIRS: bash-completion will not look there, and make install says so
grep -q "^note: bash completion installed in $PREFIX/share/bash-completion/completions, which bash-completion does not search" \
	"$TMP/install.log" && grep -q "export XDG_DATA_DIRS=$PREFIX/share:/usr/local/share:/usr/share" "$TMP/install.log"
ok $? "make install with a prefix outside XDG_DATA_DIRS says how bash-completion will find the completions"

readelf -d "$PREFIX/bin/loopscope" | grep -q "RUNPATH.*\[$PREFIX/lib\]"
ok $? "the installed loopscope carries RUNPATH $PREFIX/lib"
"$PREFIX/bin/loopscope" --version >"$TMP/out" 2>&1
ok $? "the installed loopscope starts: $(head -n 1 "$TMP/out")"
build_fixture gcc -O2 loops.c "$TMP/loops" && "$PREFIX/bin/loopscope" struct "$TMP/loops" >"$TMP/struct" 2>&1
grep -q "loop at loops.c" "$TMP/struct"
ok $? "the installed loopscope finds the loops of a fixture"

if command -v perf >/dev/null 2>&1; then
	PATH="$PREFIX/bin:$PATH" perf loops --version >"$TMP/out" 2>&1
	grep -q "^perf-loops (loopscope) " "$TMP/out"
	ok $? "perf loops runs the installed perf-loops ($(head -n 1 "$TMP/out"))"
	PATH="$PREFIX/bin:$PATH" perf loops report -h >"$TMP/out" 2>&1
	ok $? "perf loops report -h exits 0"
else
	skip "perf not installed"; skip "perf not installed"
fi

if command -v man >/dev/null 2>&1; then
	[ -f "$PREFIX/share/man/man1/perf-loops.1" ] && [ -f "$PREFIX/share/man/man1/loopscope.1" ]
	ok $? "man pages installed in PREFIX/share/man/man1"
	# man-db finds PREFIX/share/man through PREFIX/bin on PATH
	PATH="$PREFIX/bin:$PATH" MANPAGER=cat MANWIDTH=80 man perf-loops >"$TMP/man" 2>&1
	grep -q "perf report's" "$TMP/man"
	ok $? "man perf-loops (PREFIX/bin on PATH) shows the page"
	PATH="$PREFIX/bin:$PATH" MANPAGER=cat MANWIDTH=80 man loopscope >"$TMP/man" 2>&1
	grep -q "loopscope lookup" "$TMP/man"
	ok $? "man loopscope shows the page"
	if command -v perf >/dev/null 2>&1; then
		# perf turns `perf loops --help` into `perf help loops`: man perf-loops
		PATH="$PREFIX/bin:$PATH" MANPAGER=cat PAGER=cat MANWIDTH=80 perf loops --help >"$TMP/help" 2>&1
		grep -q "perf report's" "$TMP/help"
		ok $? "perf loops --help opens perf-loops(1)"
	else
		skip "perf not installed"
	fi
else
	skip "man not installed"; skip "man not installed"; skip "man not installed"; skip "man not installed"
fi

comp="$PREFIX/share/bash-completion/completions"
if command -v bash >/dev/null 2>&1 && [ -f "$comp/perf-loops" ]; then
	out=$(PATH="$PREFIX/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(perf-loops report --sym); COMP_CWORD=2; _perf_loops; echo "${COMPREPLY[*]}"' sh "$comp/perf-loops")
	case " $out " in *" --symbols "*) pass "bash completion of perf-loops report --sym offers --symbols";;
	*) fail "bash completion of perf-loops report --sym offers --symbols"; diag "got: $out";; esac
	# values: --format=<TAB> (bash splits the word at '='), -s with a list
	out=$(bash -c '. "$1"; COMP_WORDS=(perf-loops report --format = ""); COMP_CWORD=4; _perf_loops; echo "${COMPREPLY[*]}"' sh "$comp/perf-loops")
	check_eq "$out" "tree flat loops folded json pprof data" "bash completion of --format=<TAB> offers the formats, not files"
	out=$(bash -c '. "$1"; COMP_WORDS=(perf-loops report -s dso,sy); COMP_CWORD=3; _perf_loops; echo "${COMPREPLY[*]}"' sh "$comp/perf-loops")
	check_eq "$out" "dso,sym dso,symoff" "bash completion of -s dso,sy<TAB> offers the keys after the comma"
else
	fail "bash completion installed in PREFIX/share/bash-completion/completions"
fi
# perf <TAB> offers loops: bash-completion's own loader, as an interactive
# shell runs it, finds PREFIX's perf file first (XDG_DATA_DIRS), which loads
# perf's and adds loops; `perf loops report --sym<TAB>` asks perf-loops
if [ -f /usr/share/bash-completion/bash_completion ] && [ -f /usr/share/bash-completion/completions/perf ]; then
	complete_words() { # complete_words WORD...: what TAB offers after them
		PATH="$PREFIX/bin:$PATH" XDG_DATA_DIRS="$PREFIX/share:/usr/share" HOME="$TMP" bash -c '
			. /usr/share/bash-completion/bash_completion
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			__load_completion perf || exit 1
			f=$(complete -p perf | sed -n "s/.*-F \([^ ]*\) perf$/\1/p")
			"$f" perf "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
			printf "%s\n" "${COMPREPLY[@]}"' sh "$@" 2>&1
	}
	out=$(complete_words perf lo)
	echo "$out" | grep -qx "loops *" && echo "$out" | grep -qx "lock *"
	ok $? "perf lo<TAB> offers loops beside perf's own lock (got: $(echo $out))"
	out=$(complete_words perf "")
	echo "$out" | grep -qx "loops *" && echo "$out" | grep -qx "report *"
	ok $? "perf <TAB>: perf's commands and loops"
	out=$(complete_words perf loops report --sym)
	echo "$out" | grep -q -- "--symbol-filter" && echo "$out" | grep -q -- "--symbols" && ! echo "$out" | grep -q -- "--symfs-not"
	ok $? "perf loops report --sym<TAB> offers perf-loops' options (got: $(echo $out))"
	out=$(complete_words perf report --sym)
	echo "$out" | grep -q -- "--symbols"
	ok $? "perf report --sym<TAB>: perf's own completion still answers (got: $(echo $out))"
else
	skip "bash-completion or perf's completion not installed"; skip "bash-completion not installed"
	skip "bash-completion not installed"; skip "bash-completion not installed"
fi
make -s -C "$TMP/src" uninstall >/dev/null 2>&1
[ ! -e "$PREFIX/bin/perf-loops" ] && [ ! -e "$PREFIX/share/man/man1/perf-loops.1" ] &&
	[ ! -e "$PREFIX/share/bash-completion/completions/perf" ]
ok $? "make uninstall removes what was installed"
done_testing
