#!/usr/bin/env python3
# drive a worker (pkbench worker or a language worker) by hand: setup a fan_out_<N>, run it R times
import subprocess, sys, time, os
exe = sys.argv[1].split()
contender, n, reps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
open('/tmp/fan2/input','wb').write(b"processkit small \n0123456789\nab\n")
p = subprocess.Popen(exe, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
print("pid", p.pid, flush=True)
def ask(line):
    t=time.monotonic(); p.stdin.write(line+"\n"); p.stdin.flush(); a=p.stdout.readline().strip()
    print(f"{time.monotonic()-t:8.2f}s {line[:40]} -> {a[:300]}", flush=True); return a
print(p.stdout.readline().strip())
ask(f"setup contender={contender} scenario=fan_out_{n} kind=fan_out program=cat program_path=/usr/bin/cat children={n} input_file=/tmp/fan2/input input_bytes=32 expect_bytes=32 expect_lines=3")
for i in range(reps): ask("run 1")
ask("teardown")
t=time.monotonic(); p.stdin.write("quit\n"); p.stdin.flush(); p.wait(); print(f"{time.monotonic()-t:8.2f}s quit -> exit {p.returncode}")
