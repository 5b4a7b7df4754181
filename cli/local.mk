# The loopscope command: one file per subcommand.
bin_PROGRAMS += loopscope
loopscope_SOURCES = cli/loopscope.c cli/cli.h cli/cmd-struct.c cli/cmd-lookup.c cli/lookup-data.c cli/lookup-blame.c cli/cmd-decode.c cli/decode.h cli/decode-log.c cli/decode-code.c cli/cmd-cache.c cli/cmd-unwind.c cli/cmd-probes.c
loopscope_LDADD = libloopscope.la libloopscope-json.la
