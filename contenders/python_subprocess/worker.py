"""python_subprocess — a Python contender as a worker (contenders/README.md): what a Python user
writes with the subprocess module. Small capture: subprocess.run(input=..., stdout=PIPE).
Streaming: Popen with stdin and stdout piped, a thread writing stdin while the loop iterates over
the child's stdout line by line, then wait(). Fan-out: a thread per child, each a small capture.
Spawn-only: subprocess.run with the child inheriting our streams. The program is named as a user
would ("cat", searched in PATH per run). Each iteration is timed with time.perf_counter_ns around
exactly the work.
"""
import os
import platform
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pkw"))
import pkw  # noqa: E402


def capture(program, data):
    r = subprocess.run([program], input=data, stdout=subprocess.PIPE)
    return pkw.captured(r.stdout, r.returncode)


def stream(program, data):
    p = subprocess.Popen([program], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed():
        with p.stdin:
            p.stdin.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    c = pkw.Counts()
    with p.stdout:
        for line in p.stdout:
            c.bytes += len(line)
            c.lines += 1
    writer.join()
    c.children, c.failures = 1, 1 if p.wait() != 0 else 0
    return c


def fan_out(program, data, n):
    results = [None] * n

    def one(i):
        results[i] = capture(program, data)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = pkw.Counts()
    for r in results:
        if r is None:
            raise RuntimeError("a fan-out thread failed")
        total.add(r)
    return total


def spawn_only(program):
    return pkw.Counts(0, 0, 1, 1 if subprocess.run([program]).returncode != 0 else 0)


def iterate(s):
    if s.kind == "capture":
        return capture(s.program, s.input)
    if s.kind == "stream":
        return stream(s.program, s.input)
    if s.kind == "fan_out":
        return fan_out(s.program, s.input, s.children)
    return spawn_only(s.program)


def run(s, k):
    ns, total = 0, pkw.Counts()
    clock = time.perf_counter_ns
    for _ in range(k):
        t0 = clock()
        c = iterate(s)
        ns += clock() - t0
        total.add(c)
    return ns, total


def probe_fds(s):
    s.idle_fds = pkw.open_fds()
    procs = [subprocess.Popen([s.program], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(s.children)]
    s.peak_fds = pkw.open_fds()
    for p in procs:
        p.communicate(s.input)


if __name__ == "__main__":
    pkw.serve("python_subprocess", "python-" + platform.python_version(), run, probe_fds)
