#!/bin/sh
# tests/lib-file.sh - the public ls_file_* calls (build-id, sections, file
# offset to address, function symbol at an address) against readelf and nm,
# on a fixture, a shared library, a .o, and libc when it is there.
. "$top_srcdir/tests/lib.sh"
INFO="$top_builddir/tests/file-info"
command -v readelf >/dev/null || skip_all "readelf not found"

build_fixture gcc -O2 loops.c "$TMP/loops" || { fail "gcc -O2 loops.c"; done_testing; }
build_fixture gcc -O2 shlib.c "$TMP/shlib.so" -shared -fPIC || { fail "gcc shlib.so"; done_testing; }
build_fixture gcc -O2 inline_deep.c "$TMP/inline_deep.o" -c || { fail "gcc -c inline_deep.c"; done_testing; }
files="$TMP/loops $TMP/shlib.so $TMP/inline_deep.o"
libc=/lib/x86_64-linux-gnu/libc.so.6
[ -f "$libc" ] && files="$files $libc"

for f in $files; do
	b=$(basename "$f")
	# build-id: readelf -n's "Build ID: HEX" (none in a plain .o)
	want=$(readelf -n "$f" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1)
	check_eq "$("$INFO" "$f" build-id)" "$want" "$b: build-id bytes as readelf -n"

	# sections: name, address, size, offset of each, in order
	readelf -SW "$f" | sed -n 's/^ *\[ *[0-9]*\] //p' |
		awk '$1 != "NULL" { print $1, $3, $5, $4 }' |
		sed 's/ 0*\([0-9a-f]\)/ \1/g' >"$TMP/want"
	"$INFO" "$f" sections | awk '{ print $1, $2, $3, $4 }' >"$TMP/got"
	if [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want"; then pass "$b: $(wc -l <"$TMP/got") sections as readelf -S (name, address, size, offset)"
	else fail "$b: sections as readelf -S"; diff "$TMP/got" "$TMP/want" | head -n 10 | sed 's/^/# /'; fi

	# offsets: inside each PT_LOAD (first byte, middle, last) and just past its file part
	readelf -lW "$f" | awk '$1 == "LOAD" { print $2, $3, $5 }' >"$TMP/loads"
	: >"$TMP/offs"; : >"$TMP/want"
	while read -r off vaddr filesz; do
		o=$((off)); v=$((vaddr)); n=$((filesz))
		[ "$n" -gt 0 ] || continue
		for d in 0 $((n / 2)) $((n - 1)); do
			echo $((o + d)) >>"$TMP/offs"; printf '%x\n' $((v + d)) >>"$TMP/want"
		done
	done <"$TMP/loads"
	if [ -s "$TMP/offs" ]; then
		# a later segment may map the same page: the first segment wins, as readelf's order
		"$INFO" "$f" offset $(cat "$TMP/offs") >"$TMP/got"
		if cmp -s "$TMP/got" "$TMP/want"; then pass "$b: $(wc -l <"$TMP/offs") file offsets map through PT_LOAD as readelf -l says"
		else fail "$b: file offsets through PT_LOAD"; paste "$TMP/offs" "$TMP/got" "$TMP/want" | head | sed 's/^/# /'; fi
	else
		check_eq "$("$INFO" "$f" offset 0 64)" "$(printf -- '-\n-')" "$b: no PT_LOAD, no offset maps"
	fi
done

# symbols: every defined function of the fixture, at its start and last byte,
# against nm (readelf -s for the sizes); one address past a sized function's
# end is not in it.
nm -S --defined-only "$TMP/loops" | awk 'tolower($3) == "t" && $2 != "" { print $1, $2, $4 }' |
	sort -u -k1,1 >"$TMP/funcs"
: >"$TMP/addrs"; : >"$TMP/want"
while read -r a s name; do
	[ $((0x$s)) -gt 0 ] || continue
	printf '0x%s\n0x%x\n' "$a" $((0x$a + 0x$s - 1)) >>"$TMP/addrs"
	printf '%s %x %d\n%s %x %d\n' "$name" $((0x$a)) $((0x$s)) "$name" $((0x$a)) $((0x$s)) >>"$TMP/want"
done <"$TMP/funcs"
"$INFO" "$TMP/loops" symbol $(cat "$TMP/addrs") >"$TMP/got"
if [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want"; then pass "loops: $(wc -l <"$TMP/funcs") functions at their first and last byte as nm -S"
else fail "loops: functions as nm -S"; diff "$TMP/got" "$TMP/want" | head | sed 's/^/# /'; fi
check_eq "$("$INFO" "$TMP/loops" symbol 0)" "-" "loops: no function at address 0"

# errors are values naming the file
"$INFO" "$TMP/nope" build-id >/dev/null 2>"$TMP/err"; st=$?
check_eq "$st $(cat "$TMP/err")" "1 file-info: $TMP/nope: No such file or directory (code 6)" "a missing file: LS_ERR_NOT_FOUND"
echo "not ELF" >"$TMP/text"
"$INFO" "$TMP/text" build-id >/dev/null 2>"$TMP/err"; st=$?
check_eq "$st $(cat "$TMP/err")" "1 file-info: $TMP/text: not an ELF file (code 2)" "a text file: LS_ERR_NOT_ELF"
done_testing
