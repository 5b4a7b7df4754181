# scripts/build-copy.sh - sourced by the scripts that build the tree a second
# time with other compilers or flags (check-sanitizers, fuzz-ci), each in a
# copy of its own so that the normal in-tree build is not disturbed.
#
#   . scripts/build-copy.sh
#   sync_tree CHECKOUT DIR       DIR/src becomes CHECKOUT's sources as they are now
#   configure_once LOG ARGS...   in the current directory (a synced copy)

# sync_tree CHECKOUT DIR: copy the sources of the git checkout CHECKOUT as
# they are now (tracked and new files, not the build products of the normal
# build) to DIR/src.  Only files that changed are replaced, so make rebuilds
# only what they touch.  (From CHECKOUT's top whatever the current directory:
# git ls-files lists only what is below it.)
sync_tree() {
	mkdir -p "$2/src" "$2/new"
	(cd "$1" && git ls-files -z --cached --others --exclude-standard |
		tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$2/new"
	(cd "$2/new" && find . -type f) | while read -r f; do
		cmp -s "$2/new/$f" "$2/src/$f" 2>/dev/null ||
			{ mkdir -p "$(dirname "$2/src/$f")"; cp "$2/new/$f" "$2/src/$f"; }
	done
	rm -rf "$2/new"
}

# configure_once LOG ARGS...: autoreconf and ./configure --quiet ARGS in the
# current directory, unless its Makefile is newer than configure.ac; a
# failure shows the log (LOG) and returns 1.
configure_once() {
	_log=$1
	shift
	[ -f Makefile ] && [ ! configure.ac -nt Makefile ] && return 0
	autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed in $PWD"; return 1; }
	./configure --quiet "$@" >"$_log" 2>&1 || { cat "$_log"; return 1; }
}
