/* perf-loops.c - `perf loops`: perf runs dashed commands found on PATH or in
 * its exec path, so `perf loops report` runs `perf-loops report`.  This file
 * dispatches to one file per subcommand (cmd-record.c, cmd-report.c). */
#include "report.h"
#include "stat.h"
#include "search.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: perf loops record [perf record options] -- COMMAND\n"
	"       perf loops report [-i perf.data] [--stdio] [--format=tree|flat|loops|folded|json|pprof] [-o FILE]\n"
	"                         [perf report options: -s, -g, -G, -S, -F, -n, --tid, --time, ...]\n"
	"       perf loops annotate [-i perf.data] [--stdio|--tui] [--asm] [SYMBOL]\n"
	"       perf loops stat [--loop LOOP]... [--hot N [-i perf.data]] [--all-edges] [--trace | --burst]\n"
	"                       [--json] (-- COMMAND | -p PID [--duration S])\n"
	"       perf loops search [--threshold HYP=PCT]... [--count N] [--json] (-- COMMAND | -p PID [--duration S])\n"
	"       perf loops --version\n"
	"\n"
	"Where the time of optimized code goes: procedures, inlined calls, loops, statements.\n"
	"perf loops report -h: its options;  man perf-loops (perf loops --help): the manual.\n";

int main(int argc, char **argv)
{
	pl_quiet_sigpipe();
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("perf-loops (loopscope) %s\n", LS_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 1, argv + 1);
	if (!strcmp(argv[1], "search"))
		return cmd_search(argc - 1, argv + 1);
	if (!strcmp(argv[1], "__run")) /* stat-run.c: perf stat runs the program through it */
		return stat_run_child(argc - 1, argv + 1);
	if (!strcmp(argv[1], "__calibrate")) /* stat-calibrate.c: run by perf loops stat */
		return stat_calibrate_child(argc - 1, argv + 1);
	if (!strcmp(argv[1], "annotate"))
		return cmd_annotate(argc - 1, argv + 1);
	fprintf(stderr, "perf-loops: unknown command '%s'\n%s", argv[1], usage);
	return 2;
}
