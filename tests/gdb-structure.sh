#!/bin/sh
# gdb-structure.sh - `structure`, `info loops` and $_loop_depth() in real GDB,
# on the gdb fixture built with gcc and clang at -O2, without a process and
# on a live one; `structure` must give the chain `loopscope lookup --json`
# gives, field by field.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"

IB=$(line_of inner-body); IL=$(line_of inner-loop); IE=$(line_of inner-end)
OL=$(line_of outer-loop); OE=$(line_of outer-end); CALL=$(line_of call-sum-row)
NL=$(line_of init-loop); NE=$(line_of init-end)

# check_structure LABEL BIN OUTPUT: every JSON line of OUTPUT against the CLI and the fixture.
check_structure() {
	_label=$1 _bin=$2 _out=$3
	echo "$_out" | grep '^{' >"$TMP/json" || true
	if [ ! -s "$TMP/json" ]; then
		fail "$_label: structure -json printed a chain"; diag "$_out"; return
	fi
	pass "$_label: structure -json printed a chain"
	_n=0
	while IFS= read -r _j; do
		_n=$((_n + 1))
		_addr=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["addr"])' "$_j")
		_cli=$("$LOOPSCOPE" lookup --json "$_bin" "$_addr")
		$CHECK compare "$_j" "$_cli"
		ok $? "$_label: location $_n ($_addr) equals loopscope lookup --json field by field"
		$CHECK shape "$_j" "$CALL" "$IB" "$OL" "$OE" "$IL" "$IE"
		ok $? "$_label: location $_n is main > outer loop > inlined sum_row (line $CALL) > inner loop > line $IB"
	done <"$TMP/json"
}

# Help and completion (the commands' user interface).
bin="$TMP/loops-help"
if build_fixture gcc -O2 gdb/loops.c "$bin"; then
	out=$(gdb_run "$bin" -ex 'help structure' -ex 'help info loops' -ex 'help loop-finish' \
		-ex 'help function _loop_depth' -ex 'complete structure mai' -ex 'complete info loops sca' \
		-ex 'complete loop-fin')
	for want in 'Usage: structure \[-json\] \[-data\] \[LOCATION\]' 'Usage: info loops \[FUNCTION\]' \
	            'Usage: loop-finish \[-count\]' '_loop_depth(\[FRAME\])' \
	            '^structure main$' '^info loops scale$' '^loop-finish$'; do
		echo "$out" | grep -q "$want"
		ok $? "help and completion: /$want/"
	done
fi

for cc in $(gdb_compilers); do
	bin="$TMP/loops-$cc"
	if ! build_fixture "$cc" -O2 gdb/loops.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi

	# No process: LOCATION resolves through GDB's line table.
	out=$(gdb_run "$bin" -ex "structure -json loops.c:$IB")
	check_structure "$cc, no process" "$bin" "$out"

	out=$(gdb_run "$bin" -ex "structure loops.c:$IB")
	echo "$out" | grep -q "inline  sum_row  called at loops.c:$CALL"
	ok $? "$cc, no process: text output names the inlined call and its call site"
	check_eq "$(echo "$out" | grep -c '^  loop ')" 2 "$cc, no process: text output shows both loops, and no other"

	# Live process, stopped in the inner loop: the default location is $pc.
	out=$(gdb_run "$bin" -ex "break loops.c:$IB" -ex run -ex "structure -json" \
		-ex 'print $_loop_depth()' -ex 'python print("nloops=%d" % len([s for s in __import__("json").loads(gdb.execute("structure -json", to_string=True))["chain"] if s["kind"] == "loop"]))' \
		-ex kill)
	check_structure "$cc, live" "$bin" "$out"
	depth=$(echo "$out" | sed -n 's/^\$1 = //p')
	nloops=$(echo "$out" | sed -n 's/^nloops=//p')
	check_eq "$depth:$nloops" 2:2 "$cc, live: \$_loop_depth() is the number of loops around \$pc (2), as the chain has"
	# The stop is shown in PIE runtime addresses; the chain in link-time ones.
	echo "$out" | grep '^{' | python3 -c '
import json, sys
o = json.loads(sys.stdin.readline())
sys.exit(0 if int(o["pc"], 16) != int(o["addr"], 16) else 1)'
	ok $? "$cc, live: runtime pc was mapped to a different link-time address (PIE load bias)"

	# info loops main, with and without a process.
	gdb_run "$bin" -ex "info loops main" >"$TMP/info"
	$CHECK info-loops "$TMP/info" "$CALL" "$NL" "$NE" "$OL" "$OE" "$IL" "$IE"
	ok_show $? "$cc, no process: info loops main lists the loops with their lines and nesting" "$TMP/info"
	gdb_run "$bin" -ex "break loops.c:$IB" -ex run -ex "info loops" -ex kill >"$TMP/info"
	$CHECK info-loops "$TMP/info" "$CALL" "$NL" "$NE" "$OL" "$OE" "$IL" "$IE"
	ok_show $? "$cc, live: info loops (the current function) lists main's loops" "$TMP/info"
done
done_testing
