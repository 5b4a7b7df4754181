#!/bin/sh
# perf-progress.sh - the first report's progress meter (issue 23): with an
# empty structure cache the report analyzes the procedures the samples land
# in, binary by binary, on demand (libc.so.6, with libc6-dbg's DWARF, is in
# every chain of a fixture, and so is the dynamic loader); on a terminal's
# stderr (tmux) with stdout into a file, a line names the binary being
# analyzed and how far (its procedures analyzed so far, of all), then is
# cleared; with stderr not a terminal, or -q, nothing.  PERF_LOOPS_PROGRESS_DELAY=0 shows it from the start
# (by default after a second, which a fast machine may not take).
. "$top_srcdir/tests/lib.sh"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
[ -x "$PERF_LOOPS" ] || skip_all "perf-loops not built"
command -v gcc >/dev/null 2>&1 || skip_all "gcc not installed"
export HOME="$TMP/home"
mkdir -p "$HOME"
build_fixture gcc -O2 perf/split_loops.c "$TMP/split" -fno-omit-frame-pointer || fail_all "gcc builds the fixture"
perf record -q -N -e cpu-clock --call-graph=fp -o "$TMP/rec.data" "$TMP/split" 3 >/dev/null 2>"$TMP/err" ||
	skip_all "perf record does not work here: $(head -n 1 "$TMP/err")"
libc=$("$PERF_LOOPS" report -i "$TMP/rec.data" --stdio 2>/dev/null | grep -o '\[libc[^]]*\]' | head -n 1 | tr -d '[]')
[ -n "$libc" ] || skip_all "no libc frame in the recording"

# a tmux server per run: a new session on the socket of a server being
# killed can find it gone ("server exited unexpectedly")
. "$top_srcdir/tests/tmux.sh"
pane=p
run() { # run CACHE-DIR ARGS: the first report on the tmux pane's stderr, stdout into a file
	T kill-server 2>/dev/null
	sock="$TMP/tmux-${1##*/}.sock"
	T new-session -d -s p -x 150 -y 20 "env XDG_CACHE_HOME=$1 PERF_LOOPS_PROGRESS_DELAY=0 TERM=screen $PERF_LOOPS report -i $TMP/rec.data --stdio $2 >$TMP/out; echo REPORT-EXIT=\$?; sleep 60"
}
run "$TMP/cold1" ""
# which binary the meter names depends on which sample is first and how
# fast the machine is (the meter is written every 0.1 s at most)
wait_for "perf-loops: analyzing [^ ]*: [0-9]* of [0-9]* procedures" 60
ok $? "a terminal's stderr, stdout into a file, cold cache: 'perf-loops: analyzing BINARY: N of M procedures'"
wait_for "REPORT-EXIT=0" 120 && ! grep -q "analyzing" "$TMP/pane" && grep -q "^# Samples: [1-9]" "$TMP/out" &&
	! grep -q "analyzing" "$TMP/out"
ok $? "... the line cleared at the end, the report whole in its file, without it"
run "$TMP/cold2" "-q"
wait_for "REPORT-EXIT=0" 120 && ! grep -q "analyzing" "$TMP/pane"
ok $? "-q: no meter"
XDG_CACHE_HOME="$TMP/cold3" PERF_LOOPS_PROGRESS_DELAY=0 "$PERF_LOOPS" report -i "$TMP/rec.data" --stdio >/dev/null 2>"$TMP/err"
[ -z "$(without_fp_note "$TMP/err")" ]
st=$?
ok $st "stderr not a terminal: no meter, no line (but the note on fp chains)"
[ $st -eq 0 ] || without_fp_note "$TMP/err" | head -5 | sed 's/^/# stderr: /'
done_testing
