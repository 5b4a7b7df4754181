#!/bin/sh
# gdb-data.sh - `structure -data [-json] [LOCATION]` in real GDB (the
# accesses of an instruction through the C module's Module.accesses), on
# tests/fixtures/data_layout.c built with gcc and clang -O2: without a
# process, every instruction of the fixture's procedures must give what
# `loopscope lookup --data --json` gives, field by field (an instruction
# without an access: nothing, or the last access before it in its block,
# marked "before"); on a live process stopped at
# sum_grid's last access through gr that is not a bit-field (cells[].q
# with clang, n with gcc), the text names gr->FIELD and struct grid +OFF,
# where GDB itself (its own DWARF reader) says gr is a `const struct grid
# *` and &((struct grid *)0)->FIELD (cells[0].q) is OFF.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/gdb-lib.sh"
gdb_need_ptrace
[ -x "$LOOPSCOPE" ] || skip_all "loopscope CLI not built"

out=$(gdb_run -ex 'help structure' -ex 'complete structure -da')
echo "$out" | grep -q 'Usage: structure \[-json\] \[-data\] \[LOCATION\]' && echo "$out" | grep -q '^structure -data$'
ok $? "help structure names -data; completion offers it"

for cc in $(gdb_compilers); do
	bin="$TMP/data-$cc"
	if ! build_fixture "$cc" -O2 data_layout.c "$bin"; then
		fail "$cc: build the fixture"; continue
	fi
	# every instruction of the fixture's procedures, link-time (no process: runtime = link)
	objdump -d --no-show-raw-insn "$bin" | awk '
		/^[0-9a-f]+ <(sum_grid|fill_global|stack_array)>:/ { on = 1; next }
		/^$/ { on = 0 }
		on && /^ +[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' >"$TMP/addrs"
	set -- $(cat "$TMP/addrs")
	n=$#
	exs=""
	for a in "$@"; do
		exs="$exs -ex 'structure -data -json *$a'"
	done
	eval gdb_run "\"$bin\"" $exs | grep '^{' >"$TMP/gdb.json"
	"$LOOPSCOPE" lookup --data --json "$bin" "$@" >"$TMP/cli.json"
	python3 - "$TMP/gdb.json" "$TMP/cli.json" >"$TMP/cmp" <<'EOF'
import json, sys
g = [json.loads(l) for l in open(sys.argv[1])]
c = [json.loads(l) for l in open(sys.argv[2])]
bad, named, before = [], 0, 0
if len(g) != len(c):
    bad.append("%d GDB answers, %d CLI answers" % (len(g), len(c)))
for x, y in zip(g, c):
    if x["addr"] != y["addr"] or x["module"] != y["module"]:
        bad.append("%s: addr/module %s %s" % (y["addr"], x["module"], y["module"]))
    elif y["accesses"]:
        if x["accesses"] != y["accesses"]:
            bad.append("%s: GDB %s, CLI %s" % (y["addr"], x["accesses"], y["accesses"]))
        named += sum(1 for a in y["accesses"] if a["variable"])
    else:
        before += len(x["accesses"])
        if any(not a.get("before") for a in x["accesses"]):
            bad.append("%s: an access without one in the CLI: %s" % (y["addr"], x["accesses"]))
print("named=%d before=%d" % (named, before))
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
EOF
	ok_show $? "$cc, no process: structure -data -json on $n instructions equals lookup --data --json ($(head -1 "$TMP/cmp"))" "$TMP/cmp"

	# the last access through gr in sum_grid that is not a bit-field, from the CLI
	q=$(python3 -c '
import json, sys
hit = None
for l in open(sys.argv[1]):
    o = json.loads(l)
    for a in o["accesses"]:
        if a["variable"] == "gr" and a["field"] and not a["bitfield"]:
            hit = "%s %d %s %s" % (o["addr"], a["offset"], a["field"], a["field_type"])
print(hit or "")' "$TMP/cli.json")
	if [ -z "$q" ]; then
		fail "$cc: lookup --data finds an access through gr in sum_grid"; continue
	fi
	set -- $q
	addr=$1 off=$2 field=$3
	shift 3
	ftype="$*"
	cfield=$(echo "$field" | sed 's/\[\]/[0]/g')
	# A PIE runs elsewhere: break at sum_grid+OFFSET, not at the link-time address.
	base=$(nm "$bin" | awk '$3 == "sum_grid" { print $1 }')
	rel=$(printf '%d' $((addr - 0x$base)))
	out=$(gdb_run "$bin" -ex "break *(sum_grid + $rel)" -ex 'run 3' -ex 'structure -data' \
		-ex "python f = gdb.newest_frame(); exec('while f.name() != \"sum_grid\": f = f.older()'); f.select()" \
		-ex 'whatis gr' -ex "print (long)&((struct grid *)0)->$cfield" -ex kill)
	echo "$out" | grep -qF "gr->$field  struct grid +$off ($field: $ftype"
	ok $? "$cc, live at sum_grid+$rel: structure -data names gr->$field, struct grid +$off"
	if echo "$out" | grep -q '^type = const struct grid \*$' && echo "$out" | grep -q "^\$1 = $off\$"; then
		pass "$cc, live: GDB's own whatis gr (const struct grid *) and offset of $cfield ($off)"
	else
		fail "$cc, live: GDB's own whatis gr (const struct grid *) and offset of $cfield ($off)"
		diag "$out"
	fi
done

# Bad input: no debug information, and an address outside any procedure.
bin="$TMP/data-stripped"
if build_fixture gcc -O2 data_layout.c "$bin" && strip -o "$bin.s" "$bin"; then
	a=0x$(nm "$bin" | awk '$3 == "sum_grid" { print $1 }')
	out=$(gdb_run "$bin.s" -ex "structure -data *$a" -ex 'structure -data *0x10')
	if echo "$out" | grep -q "structure -data: .*data-stripped.s: no debug information" &&
		! echo "$out" | grep -q Traceback; then
		pass "no DWARF: structure -data says so, naming the file; no Python traceback"
	else
		fail "no DWARF: structure -data says so, naming the file; no Python traceback"
		diag "$out"
	fi
fi
done_testing
