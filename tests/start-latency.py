#!/usr/bin/env python3
"""How long a child takes from its spawn to its first byte of output: the gap an inactivity limit
(or a deadline that must come after the first line) sees first. The commands are interleaved (one
of each per round, so a burst of load lands on all alike), N rounds. Prints per command the
median, p90 and max in ms, and how many starts took 1 s or more.

usage: tests/start-latency.py N 'CMD ARG...' ['CMD ARG...' ...]   (each command split as sh would)

e.g. tests/start-latency.py 60 "sh -c 'echo partial output; exec sleep 0'" \
         'build/asan/tests/pk_tests --helper say-then-sleep 0'
(reports/notes/2026-12-05-tests-under-load.md)
"""
import shlex
import subprocess
import sys
import time

n = int(sys.argv[1])
cmds = [shlex.split(c) for c in sys.argv[2:]]
lat = [[] for _ in cmds]
for _ in range(n):
    for k, cmd in enumerate(cmds):
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        p.stdout.read(1)
        lat[k].append((time.monotonic() - t0) * 1e3)
        p.wait()
for k, cmd in enumerate(cmds):
    l = sorted(lat[k])
    print("%-70s n=%d median %6.1f ms  p90 %6.1f  max %6.1f  >=1s: %d"
          % (" ".join(cmd)[-70:], n, l[n // 2], l[int(n * .9)], l[-1], sum(x >= 1000 for x in l)))
