// small.cpp - the example of Mellor-Crummey and Krentel's slides: a loop in
// an inlined callee (do_work's loop, through addToVector and push_back),
// called from inside a loop of main.
#include <cstdio>
#include <vector>
using namespace std;
vector<int> v;
inline static void addToVector(int i) {
	v.push_back(i);
}
void do_work(int num) {
	v.clear();
	for (int i = 0; i < num; i++) {
		addToVector(i);
	}
}
int main(int argc, char **argv) {
	int len = 1000;
	int num, k;
	if (argc < 2 || sscanf(argv[1], "%d", &num) < 1) {
		num = 20;
	}
	num *= len;
	for (k = 0; k < num; k++) {
		do_work(len);
	}
	return 0;
}
