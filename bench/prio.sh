#!/bin/bash
# prio.sh runs a command with the machine's cores as far as the kernel
# gives them: in a session of its own (start it with `setsid -w
# bench/prio.sh CMD ...`) whose autogroup has nice -20, then at nice -20
# within it. With sched_autogroup_enabled=1 the scheduler shares the CPU
# between sessions first, so plain `nice` only orders the processes of one
# session and does not shield a benchmark from another session's load.
# Needs root (a negative nice).
set -eu
if [ -w /proc/self/autogroup ]; then
  echo -20 > /proc/self/autogroup
fi
exec nice -n -20 "$@"
