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

int main(void)
{
	printf("1..7\n");
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
