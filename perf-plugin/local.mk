# perf-loops, run by perf as `perf loops`.
