#!/bin/sh
# perf-browser-real.sh - the browser at 80x24 on a DWARF recording of a
# real program (slow tier: the real-code corpus), issue 23: zstd from
# Debian's libzstd sources (tests/corpus/corpus.py, gcc -O2 -g, PIE, no
# frame pointers) compressing 27 MB, recorded with perf loops record
# --call-graph=dwarf: its hot rows are 35-45 levels deep.  In tmux at 80x24,
# polling the screen (no fixed sleeps):
#   - L selects the hottest loop (--format=loops' first) and its row shows
#     its whole label, as does every row on the screen: indentation stops
#     30 columns before the edge and says the depth instead;
#   - H selects the hottest entry: the statement with the most samples of
#     its own, whose figure is the largest Self of --stdio's statements;
#   - / finds a loop by the procedure named on its row in the loops view.
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
grep -q "HAVE_NCURSES" "$top_builddir/Makefile" 2>/dev/null || skip_all "perf-loops built without ncurses (no browser)"
ZSTD=$(LOOPSCOPE_CORPUS_QUIET=1 python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import corpus
p = [p for p in corpus.PROGRAMS if p.name == "zstd"][0]
b = corpus.build(p, "gcc", "-O2")
print(b.path if b else "")' "$top_srcdir/tests/corpus")
[ -n "$ZSTD" ] || skip_all "the corpus' zstd cannot be had here (apt-get source libzstd)"
export HOME="$TMP/home"
mkdir -p "$HOME"
head -c 20000000 /dev/urandom | base64 >"$TMP/in.txt"
"$PERF_LOOPS" record --call-graph=dwarf -o "$TMP/rec.data" -- "$ZSTD" -q -f -5 "$TMP/in.txt" -o "$TMP/in.zst" \
	>/dev/null 2>"$TMP/rec.err" || skip_all "perf record does not work here: $(head -n 1 "$TMP/rec.err")"
R() { "$PERF_LOOPS" report -i "$TMP/rec.data" --stdio --no-pager "$@" 2>/dev/null; }
R >"$TMP/stdio"
deepest=$(awk '/^ *[0-9.]+% +[0-9.]+% +[0-9]+  / { sub(/^ *[0-9.]+% +[0-9.]+% +[0-9]+  /, ""); match($0, /^ */);
	if (RLENGTH > m) m = RLENGTH } END { print m / 2 }' "$TMP/stdio")
diag "the tree is $deepest levels deep (--stdio, not a terminal)"

. "$top_srcdir/tests/tmux.sh"
pane=b
keys() { T send-keys -t b "$@"; }
status() { sed -n 23p "$TMP/pane" | sed 's/ *$//'; }
# every data row shows some of its label: 31 columns of figures, then text
rows_readable() { sed -n '3,22p' "$TMP/pane" | awk 'length($0) > 0 { t = substr($0, 32); gsub(/[ +-]/, "", t); if (length(t) < 8) bad++ }
	END { exit bad > 0 }'; }
T new-session -d -s b -x 80 -y 24 "env XDG_CACHE_HOME=$XDG_CACHE_HOME HOME=$HOME TERM=screen $PERF_LOOPS report -i $TMP/rec.data; echo BROWSER-EXIT=\$?; sleep 60"
wait_for "Samples: [0-9]* of event" 120
ok $? "the browser opens at 80x24"

hot=$(R --format=loops | grep '^ *[0-9]' | head -n 1 | sed 's/^ *[0-9.]*% *[0-9.]*% *[0-9]*  //; s/  (.*//')
keys L
wait_for "loop 1 of" 20
status | grep -q "^$hot   \[loop 1 of"
ok $? "L selects the hottest loop, $hot (--format=loops' first)"
grep -q "  [-+ ] \(\[[0-9]*\] \)\?$hot\( \|\$\)" "$TMP/pane"
ok $? "... its row shows its whole label at 80 columns"
rows_readable
ok $? "... and every row on the screen shows its label (indentation capped, depth in brackets)"
grep -q "\[[0-9][0-9]*\] " "$TMP/pane"
ok $? "... deep rows say their depth"

# H: the statement with the most samples of its own
best=$(awk '/^ *[0-9.]+% +[0-9.]+% +[0-9]+  +[^ ]+:[0-9]+ *$/ { s = $2; sub("%", "", s); if (s + 0 > m + 0) m = s } END { print m }' "$TMP/stdio")
keys H
wait_for "the hottest entry" 20
status | grep -q "\[the hottest entry: $best% of its own\]"
ok $? "H selects the hottest entry: $best% of its own (--stdio's largest statement Self): $(status)"
label=$(status | sed 's/   \[.*//')
grep -q "  [-+ ] \(\[[0-9]*\] \)\?$label *$" "$TMP/pane"
ok $? "... its row, $label, shows on the screen"
rows_readable
ok $? "... every row on the screen shows its label"

# the loops view: search finds a loop by its procedure (the row's context)
proc=$(R --format=loops | grep '^ *[0-9]' | sed -n 2p | sed 's/.*  (\([^ ]*\) .*/\1/')
keys v v
wait_for "^perf loops: loops" 20
keys /
keys -l "$proc"
keys Enter
_i=0
while screen && status | grep -q "^search:" && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
R --format=loops | grep '^ *[0-9]' | grep "  ($proc " | sed 's/^ *[0-9.]*% *[0-9.]*% *[0-9]*  //; s/  (.*//' >"$TMP/of"
grep -qxF "$(status)" "$TMP/of"
ok $? "/$proc in the loops view: one of $proc's loops selected (search reads the whole row): $(status)"
keys q
wait_for "BROWSER-EXIT=0" 20
ok $? "q quits, exit 0"
done_testing
