/* tests/unit-names.c - perf loops' shortened C++ names (perf-plugin/names.c)
 * on demangled names whose short form is known, among them the ones that
 * once came out wrong: a clone's " (.part.0)" suffix after " const" made
 * the whole name "(...)" (an Eigen visitor in bench/perf-report.sh's eigen
 * recording). */
#include "report.h"
#include "tap.h"

#include <string.h>

static void check(const char *name, const char *want)
{
	char buf[512];
	const char *got = pl_short_name(name, buf, sizeof buf);
	ok(got && !strcmp(got, want), "%s -> %s (got %s)", name, want, got ? got : "NULL");
}

/* Every C++ operator as the demangler prints it in a member and in a
 * template of it: the short name keeps the operator whole. */
static const char *const operators[] = {
	"()", "[]", "->", "->*", "<=>", "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=",
	"<", ">", ",", " new", " new[]", " delete", " delete[]", " co_await", "\"\" _km",
};
#define NOPS (sizeof operators / sizeof *operators)

static void check_operators(void)
{
	char name[256], want[256];
	for (size_t i = 0; i < NOPS; i++) {
		snprintf(name, sizeof name, "ns::Acc<int, std::less<int> >::operator%s(ns::V<int> const&) const", operators[i]);
		snprintf(want, sizeof want, "ns::Acc<...>::operator%s(...)", operators[i]);
		check(name, want);
		/* a template operator: its own arguments apart ("operator< <int>") */
		snprintf(name, sizeof name, "bool ns::operator%s <int, 3>(ns::V<int> const&, int)", operators[i]);
		snprintf(want, sizeof want, "ns::operator%s <...>(...)", operators[i]);
		check(name, want);
	}
}

int main(void)
{
	printf("1..%zu\n", 20 + 2 * NOPS);
	check_operators();
	/* conversion operators: the type is the name, spaces and templates too */
	check("X::operator int() const", "X::operator int(...)");
	check("X::operator unsigned long() const", "X::operator unsigned long(...)");
	check("X::operator std::vector<int, std::allocator<int> >() const &", "X::operator std::vector<...>(...)");
	check("X::operator char const*() &&", "X::operator char const*(...)");
	/* the three, and free operators with a return type */
	check("Acc::operator()(double)", "Acc::operator()(...)");
	check("std::istream& operator>>(std::istream&, X&)", "operator>>(...)");
	check("X::operator->()", "X::operator->(...)");
	check("std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >"
	      "(std::basic_ostream<char, std::char_traits<char> >&, char const*)", "std::operator<< <...>(...)");
	check("main::{lambda(int)#1}::operator()(int) const", "main::{lambda(...)#1}::operator()(...)");
	check("operator_table_lookup(int)", "operator_table_lookup(...)"); /* an identifier, not the keyword */
	/* GCC's DWARF names a template operator without the space */
	check("ops::operator<<long, 2>(ops::Acc<long> const&, ops::Box<long, 2> const&)", "ops::operator< <...>(...)");
	check("ops::operator<<<long, 2>(ops::Box<long, 2>&, ops::Acc<long> const&)", "ops::operator<< <...>(...)");
	check("ops::operator><int>(int)", "ops::operator> <...>(...)");
	check("main", "main");
	check("double ns::f<double, std::map<int, int> >(std::vector<double> const&, int)", "ns::f<...>(...)");
	check("Eigen::Block<float, -1>::rows() const", "Eigen::Block<...>::rows(...)");
	check("void Eigen::DenseBase<Eigen::Block<float, -1> const>::visit<Eigen::internal::max_coeff_visitor<float, 0> >"
	      "(Eigen::internal::max_coeff_visitor<float, 0>&) const (.part.0)",
	      "Eigen::DenseBase<...>::visit<...>(...) const (.part.0)");
	check("foo(int) [clone .part.0]", "foo(...) [clone .part.0]");
	check("(anonymous namespace)::g(int)", "(anonymous namespace)::g(...)");
	check("std::vector<int, std::allocator<int> >::operator[](unsigned long)", "std::vector<...>::operator[](...)");
	return failed != 0;
}
