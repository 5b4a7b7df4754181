/* unit-strtab.c - the interned strings (libloopscope/support/strtab.c):
 * equal strings give the same pointer and different ones different
 * pointers, across the table's growth, for lengths around the hash's
 * eight-byte steps (0-40 bytes), strings that differ only in their last
 * byte or only in length, a long shared prefix (C++ mangled names), and
 * a string that is a prefix of another.  The oracle: strcmp over a plain
 * list of everything interned.  Prints TAP. */
#include "support/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"

#define N 6000

/* The I-th test string: a shared prefix (0, 7, 8 or 64 bytes of
 * "_ZN4llvm..."), then I's digits, then up to 17 bytes of padding. */
static void make(char *buf, size_t size, int i)
{
	static const char prefix[] = "_ZN4llvm13DenseMapBaseINS_8DenseMapIPKNS_5ValueEjNS_12DenseMapInfo";
	size_t plen = (size_t[]){ 0, 7, 8, 64 }[i % 4];
	snprintf(buf, size, "%.*s%d%.*s", (int)plen, prefix, i / 4, i % 18, "xxxxxxxxxxxxxxxxxx");
}

int main(void)
{
	struct ls_strtab t = { 0 };
	static char str[N][128];
	static const char *ptr[N];
	for (int i = 0; i < N; i++) {
		make(str[i], sizeof str[i], i);
		ptr[i] = ls_intern(&t, str[i]);
	}
	/* the strings of different lengths sharing a prefix, and the empty one */
	const char *empty = ls_intern(&t, "");
	const char *a7 = ls_intern(&t, "abcdefg"), *a8 = ls_intern(&t, "abcdefgh"), *a9 = ls_intern(&t, "abcdefghi");
	int distinct = 0, same_ptr_for_equal = 1, wrong = 0;
	for (int i = 0; i < N; i++) {
		int first = 1;
		for (int j = 0; j < i && first; j++)
			if (strcmp(str[i], str[j]) == 0) {
				first = 0;
				same_ptr_for_equal &= ptr[i] == ptr[j];
			}
		distinct += first;
		wrong += strcmp(ptr[i], str[i]) != 0 || ptr[i] == str[i];
	}
	int collide = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < i; j++)
			collide += ptr[i] == ptr[j] && strcmp(str[i], str[j]) != 0;
	ok(wrong == 0, "every interned copy reads as its string, and is a copy (%d wrong)", wrong);
	ok(same_ptr_for_equal, "equal strings give the same pointer");
	ok(collide == 0, "different strings give different pointers (%d shared)", collide);
	ok(t.count == (size_t)distinct + 4, "the table holds each string once: %zu of %d", t.count, distinct + 4);
	ok(t.nslots >= 2 * t.count, "the table grew to keep half its slots free (%zu slots)", t.nslots);
	int again = 1;
	for (int i = 0; i < N; i++) {
		char copy[128];
		strcpy(copy, str[i]);
		again &= ls_intern(&t, copy) == ptr[i];
	}
	ok(again, "interning every string again, from another buffer, gives the first pointers");
	ok(*empty == 0 && ls_intern(&t, "") == empty, "the empty string is interned once");
	ok(a7 != a8 && a8 != a9 && a7 != a9 && strcmp(a8, "abcdefgh") == 0,
	   "prefixes of one another across the eight-byte step are different strings");
	ok(ls_intern(&t, "abcdefgi") != a8 && ls_intern(&t, "abcdefgh") == a8, "a string differing in its last byte is another");
	ok(ls_intern(&t, NULL) == NULL, "NULL interns as NULL");
	ls_strtab_free(&t);
	ok(t.slots == NULL && t.hashes == NULL && t.count == 0, "freed");

	/* reserving: room made ahead, in an empty table and after strings,
	 * keeps every earlier pointer and needs no growth for what it said */
	struct ls_strtab u = { 0 };
	ls_strtab_reserve(&u, N / 2);
	size_t first = u.nslots;
	for (int i = 0; i < N / 2; i++)
		ptr[i] = ls_intern(&u, str[i]);
	int kept = u.nslots == first;
	ls_strtab_reserve(&u, N - N / 2);
	size_t second = u.nslots;
	for (int i = 0; i < N / 2; i++)
		kept &= ls_intern(&u, str[i]) == ptr[i];
	for (int i = N / 2; i < N; i++)
		ptr[i] = ls_intern(&u, str[i]);
	int same = 1;
	for (int i = 0; i < N; i++)
		same &= ls_intern(&u, str[i]) == ptr[i] && strcmp(ptr[i], str[i]) == 0;
	ok(first >= 2 * (N / 2) && second >= 2 * (size_t)distinct && u.nslots == second && kept && same &&
	   u.count == (size_t)distinct,
	   "reserved room: %zu then %zu slots, no growth while interning %d strings, every pointer kept", first, second,
	   distinct);
	ls_strtab_free(&u);
	return done_testing();
}
