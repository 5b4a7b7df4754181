#!/bin/sh
# cli-options.sh - loopscope's one option parser (argp): --help, --usage,
# -h and -V for the command and each subcommand print and exit 0; an unknown
# option, a missing value and a stray argument exit 2 with a line naming the
# problem; and every long option a subcommand takes is in man loopscope(1)
# and in the bash completion.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
MAN="$top_srcdir/man/loopscope.1"
COMPLETION="$top_srcdir/man/completion/loopscope"
# The version the sources say (configure.ac's AC_INIT, the one place it is
# written), not what the program prints.
version=$(sed -n 's/^AC_INIT(\[loopscope\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")

for sub in "" struct lookup decode cache unwind; do
	name="loopscope${sub:+ $sub}"
	for opt in --help -h --usage; do
		# shellcheck disable=SC2086
		"$LOOPSCOPE" $sub $opt >"$TMP/out" 2>"$TMP/err"
		rc=$?
		if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] && head -n 1 "$TMP/out" | grep -q "^Usage: $name "; then
			pass "$name $opt: exit 0, \"Usage: $name ...\" on stdout"
		else
			fail "$name $opt: exit 0, \"Usage: $name ...\" on stdout"
			diag "exit $rc; out: $(head -c 300 "$TMP/out"); err: $(head -c 300 "$TMP/err")"
		fi
	done
	for opt in -V --version; do
		# shellcheck disable=SC2086
		"$LOOPSCOPE" $sub $opt >"$TMP/out" 2>"$TMP/err"
		check_eq "$?:$(cat "$TMP/out")" "0:loopscope $version" "$name $opt prints the version, exit 0"
	done
	# shellcheck disable=SC2086
	"$LOOPSCOPE" $sub --no-such-option >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] &&
	   grep -q "^$name: unrecognized option '--no-such-option'" "$TMP/err"; then
		pass "$name --no-such-option: exit 2, the message names the option"
	else
		fail "$name --no-such-option: exit 2, the message names the option"
		diag "exit $rc; err: $(head -c 300 "$TMP/err")"
	fi
	[ -z "$sub" ] && continue
	# Every long option of the subcommand is documented and completed.
	# shellcheck disable=SC2086
	opts=$("$LOOPSCOPE" $sub --usage | grep -o -- '--[a-z][a-z0-9-]*' | sort -u |
		grep -vx -- '--help\|--usage\|--version')
	missing=""
	completed=$(sed -n "s/^	$sub) opts=\"\(.*\)\" ;;$/\1/p" "$COMPLETION")
	for o in $opts; do
		sed 's/\\-/-/g' "$MAN" | grep -q -- "$o\b" || missing="$missing man:$o"
		echo " $completed " | grep -q -- " $o[ =]" || missing="$missing completion:$o"
	done
	check_eq "${missing:-none}" none "$name: its $(echo $opts | wc -w) long options are in loopscope(1) and the completion"
done

# Usage errors name what is wrong, and exit 2.
usage_error() { # usage_error "ARGS" "MESSAGE" DESCRIPTION
	# shellcheck disable=SC2086
	"$LOOPSCOPE" $1 </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$2" "$TMP/err"; then
		pass "$3: exit 2, says \"$2\""
	else
		fail "$3: exit 2, says \"$2\""
		diag "exit $rc; err: $(head -c 300 "$TMP/err")"
	fi
}
usage_error "" "Usage: loopscope [OPTION...] COMMAND" "no command"
usage_error "frobnicate" "loopscope: unknown command 'frobnicate'" "an unknown command"
usage_error "struct" "loopscope struct: no binary given" "struct without a binary"
usage_error "struct a b" "loopscope struct: one binary at a time ('b' is extra)" "struct with two binaries"
usage_error "struct --format" "option '--format' requires an argument" "--format without its value"
usage_error "struct --format=yaml a" "unknown format 'yaml'" "an unknown format"
usage_error "struct -j x a" "bad number of jobs: x" "-j x"
usage_error "lookup" "loopscope lookup: no binary given" "lookup without a binary"
usage_error "decode stray" "loopscope decode: unknown argument 'stray'" "decode with an argument"
usage_error "decode -r 1 --vmlinux v" "-r and --vmlinux are alternatives" "decode -r and --vmlinux"
usage_error "cache" "say what to do: --list, --prune or --clear" "cache without an action"
usage_error "cache --list --clear" "one of --list, --prune and --clear at a time" "cache with two actions"
usage_error "cache --prune --max-size=12X" "bad size '12X'" "cache --max-size=12X"

# The forms every option takes: --name=value, --name value, -n value, -nvalue.
build_fixture gcc -O1 loops.c "$TMP/loops" || { fail "build loops.c"; done_testing; }
"$LOOPSCOPE" struct --no-cache --format=json "$TMP/loops" >"$TMP/want" 2>/dev/null
for form in "--format json -o $TMP/got" "-j1 --format=json --output=$TMP/got" "--format=json -j 1 -o$TMP/got" \
	"--jobs=2 --format json --output $TMP/got"; do
	rm -f "$TMP/got"
	# shellcheck disable=SC2086
	"$LOOPSCOPE" struct --no-cache $form "$TMP/loops" 2>"$TMP/err"
	rc=$?
	cmp -s "$TMP/got" "$TMP/want"
	check_eq "$rc:$?" "0:0" "struct $form: the same JSON"
done
# lookup: options before the binary only; what follows it is addresses.
"$LOOPSCOPE" lookup --no-cache --json "$TMP/loops" main -v >"$TMP/out" 2>"$TMP/err"
rc=$?
check_eq "$rc:$(grep -c '"addr":' "$TMP/out"):$(grep -c '"error":"-v: ' "$TMP/out")" "0:2:1" \
	"lookup BINARY main -v: two lookups, -v is an address (and not one)"
done_testing
