#!/bin/sh
# gdb-quote-fuzz.sh - every loopscope command given what hurts a location
# parser (tests/fixtures/gdb/quote_fuzz.py): mixed, nested and unbalanced
# quotes (structure "a'b", '"', 'operator"" _km', the reproducers of
# issue 28), real C++ operator names (udl.cpp), 10,000-character arguments,
# control characters, random strings and random C++ names, on a program
# built by g++ and clang++ -O2.  GDB 13's gdb.decode_line corrupts GDB's
# memory on a location its lexer refuses, and its C++ symbol lookup ends the
# session on some names (::0, a>::x): GDB must live through all of it and
# through `run` after, with no Python traceback; and what the parser lets
# through, GDB's own lexer must take (no "unmatched quote" from break).
# Then the MI commands on the same kind of arguments.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace

COUNT=${LOOPSCOPE_FUZZ_COUNT:-300}
seed=1
for cxx in g++ clang++; do
	command -v "$cxx" >/dev/null 2>&1 || continue
	bin="$TMP/udl-$cxx"
	build_fixture "$cxx" -O2 gdb/udl.cpp "$bin" || { fail "$cxx: build udl.cpp"; continue; }
	out=$(gdb_run -ex 'break main' -ex run -ex "set \$fuzz_count = $COUNT" -ex "set \$fuzz_seed = $seed" \
		-ex "source $FIXTURES/gdb/quote_fuzz.py" -ex 'break main' -ex run -ex 'bt 1' \
		-ex "structure 'operator\"\" _km'" -ex "python print('alive')" --args "$bin")
	seed=$((seed + 1))
	summary=$(echo "$out" | grep '^fuzz: ')
	diag "$cxx: $summary"
	echo "$out" | grep -q '^alive$' && ! echo "$out" | grep -qE 'internal-error|Recursive internal problem|Fatal (signal|Python error)|unknown opcode|SystemError'
	ok_show $? "$cxx: GDB alive after the fuzz and a run after it" "$(echo "$out" | tail -n 30 >"$TMP/o"; echo "$TMP/o")"
	echo "$summary" | grep -q ' 0 tracebacks;'
	ok_show $? "$cxx: every refusal is a message, no Python traceback" "$(echo "$out" | grep '^TRACEBACK' >"$TMP/o"; echo "$TMP/o")"
	echo "$summary" | grep -q ', 0 let through that GDB refuses$'
	ok_show $? "$cxx: what the parser lets through, GDB's lexer takes" "$(echo "$out" | grep '^UNDER' >"$TMP/o"; echo "$TMP/o")"
	n=$(echo "$summary" | sed -n 's/^fuzz: \([0-9]*\) invocations.*/\1/p')
	[ -n "$n" ] && [ "$n" -ge 2000 ]
	ok $? "$cxx: ... over $n invocations"
	echo "$out" | grep -q "^structure: unmatched quote in the location (GDB's quoting rules): 'operator\"\" _km'$"
	ok $? "$cxx: structure 'operator\"\" _km' says the quotes do not match, as GDB's break does"
done

# The reproducer's cases one by one, each followed by a run (the crash came
# at the next run), and what they mean.
bin="$TMP/udl-g++"
if [ -x "$bin" ]; then
	for loc in "\"a'b\"" "'\"'" "'operator\"\" _km'" "'main" "::0" "a>::x"; do
		out=$(gdb_run -ex "structure $loc" -ex "info loops $loc" -ex "break-loop $loc" -ex 'break main' -ex run \
			-ex "python print('alive')" --args "$bin")
		echo "$out" | grep -q '^alive$' && ! echo "$out" | grep -qE 'internal-error|Fatal|unknown opcode|Traceback'
		ok_show $? "structure, info loops, break-loop $loc, then run: GDB alive" "$(echo "$out" | tail -n 12 >"$TMP/o"; echo "$TMP/o")"
	done
	out=$(gdb_run -ex 'structure operator"" _km' -ex 'info loops operator"" _km' "$bin")
	echo "$out" | grep -q '^  proc    operator"" _km(long double)  at udl.cpp:' &&
		echo "$out" | grep -q '^1 loop in operator"" _km(long double) (udl.cpp:[0-9]*) in '
	ok_show $? "the literal operator unquoted, as GDB's break takes it: structure and info loops find it" \
		"$(echo "$out" >"$TMP/o"; echo "$TMP/o")"
fi

# MI: the same kind of arguments, as IDEs pass them (c-strings).
if "$GDB" -nx -batch -ex 'python gdb.MICommand' >/dev/null 2>&1 && [ -x "$bin" ]; then
	python3 - "$GDB" "$GDBEXT" "$bin" "$FIXTURES/gdb" >"$TMP/mi.out" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
from mi3 import Mi

def c(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'

mi = Mi([sys.argv[1], "-nx", "-q", "--interpreter=mi3", "-ex", "source " + sys.argv[2], sys.argv[3]])
mi.cmd("-break-insert main")
mi.cmd("-exec-run", wait_stop=True)
args = ["'main", "\"a'b\"", "'\"'", "'operator\"\" _km'", "::0", "a>::x", "x" * 10000, "'" * 5000, "main\x01",
        "\x1b[31m", "a\\b", "*'", "-json", "--", "main, x", "main if 1"]
bad = 0
for a in args:
    for cmd in ("-loopscope-structure", "-loopscope-loops"):
        r, out = mi.cmd("%s %s" % (cmd, c(a)), timeout=30)
        if r is None or r[2] not in ("done", "error"):
            bad += 1
            print("no answer to %s %r: %r" % (cmd, a[:40], r))
r, _ = mi.cmd("-loopscope-stack 0 0")
mi.cmd("-exec-run", wait_stop=True)
r2, _ = mi.cmd("-loopscope-structure main")
print("answered", bad == 0, "unparsable", len(mi.bad), "alive", r is not None and r[2] == "done" and r2 is not None and r2[2] == "done")
mi.close()
PY
	grep -q '^answered True unparsable 0 alive True$' "$TMP/mi.out"
	ok_show $? "MI: -loopscope-structure and -loopscope-loops answer every hostile argument; GDB alive, output MI3" "$TMP/mi.out"
fi
done_testing
