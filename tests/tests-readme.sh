#!/bin/sh
# tests/tests-readme.sh - tests/README.md's table of tests is the registries'
# list: every test registered in tests/*.mk (in a variable ending in TESTS:
# X_TESTS, X_UNIT_TESTS, X_SLOW_TESTS, or TESTS itself) has exactly one row,
# with its registry and its tier (slow when the variable is a *SLOW_TESTS),
# and every row is a registered test; each row has its seconds, CPU seconds
# and oracle; the "Sums" paragraph's counts and sums are the columns'.
# The oracle is the registries themselves, read here from the .mk text (not
# from make), so that a test added without its row fails the fast tier.
# shellcheck disable=SC2016 # the backquotes are the table's, not the shell's
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
README="$top_srcdir/tests/README.md"
[ -f "$README" ] || fail_all "no $README"

# "name registry tier" for each registered test: continuation lines joined,
# then the tests/ words of each assignment to a *TESTS variable.
for mk in "$top_srcdir"/tests/*.mk; do
	reg=$(basename "$mk" .mk)
	awk -v reg="$reg" '
		{ line = line $0 }
		/\\$/ { sub(/\\$/, " ", line); next }
		{ if (match(line, /^[A-Z_]*TESTS[ \t]*\+?=/)) {
			var = line; sub(/[ \t]*\+?=.*/, "", var)
			tier = (var ~ /SLOW/) ? "slow" : "fast"
			n = split(substr(line, RLENGTH + 1), w, /[ \t]+/)
			for (i = 1; i <= n; i++)
				if (w[i] ~ /^tests\//) { sub(/^tests\//, "", w[i]); print w[i], reg, tier }
		  }
		  line = "" }' "$mk"
done | sort >"$TMP/registered"
[ -s "$TMP/registered" ] || fail_all "no test found in $top_srcdir/tests/*.mk"

# The table's rows: | `name` | registry | tier | s | cpu s | oracle |
sed -n 's/^| `\([^`]*\)` | \([a-z]*\) | \(fast\|slow\) |.*/\1 \2 \3/p' "$README" | sort >"$TMP/rows"
check_eq "$(diff "$TMP/registered" "$TMP/rows" | grep '^[<>]' | sed 's/^</registered, no row:/; s/^>/row, not registered:/' | tr '\n' ';')" "" \
	"every registered test has its row (name, registry, tier), every row is a registered test"
check_eq "$(uniq -d "$TMP/rows" | tr '\n' ';')" "" "no test has two rows"
check_eq "$(cut -d' ' -f1 "$TMP/registered" | uniq -d | tr '\n' ';')" "" "no test is in two registries"

# Each registered test exists: the script, or a unit test's C source.
missing=
while read -r name reg tier; do
	[ -f "$top_srcdir/tests/$name" ] || [ -f "$top_srcdir/tests/$name.c" ] || missing="$missing $name"
done <"$TMP/registered"
check_eq "$missing" "" "every registered test's file exists"

# Every row: whole seconds, CPU seconds, an oracle.
bad=$(grep '^| `[^`]*` | [a-z]* | \(fast\|slow\) |' "$README" |
	awk -F'|' '$5 !~ /^ *[0-9]+ *$/ || $6 !~ /^ *[0-9]+ *$/ || $7 ~ /^ *$/ { print $2 }' | tr -d ' ' | tr '\n' ';')
check_eq "$bad" "" "every row has its seconds, CPU seconds and oracle"

# The sums paragraph against the columns.
for tier in fast slow; do
	want=$(grep '^| `[^`]*` | [a-z]* | '"$tier"' |' "$README" |
		awk -F'|' '{ n++; s += $5; c += $6 } END { printf "%d tests %d s (%d s of CPU)", n, s, c }')
	got=$(tr '\n' ' ' <"$README" | sed 's/  */ /g' | sed -n "s/.*the $tier tier's \([0-9]* tests [0-9]* s ([0-9]* s of CPU)\).*/\1/p")
	check_eq "$got" "$want" "Sums: the $tier tier's count and sums are the table's"
done
done_testing
