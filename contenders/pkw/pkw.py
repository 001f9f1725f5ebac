"""pkw — the worker protocol (contenders/README.md, "The worker protocol"), the Python workers'
side: the greeting, the requests read from stdin and the answers written to stdout, the setup's
fields, and what surrounds a batch of iterations (this process's and its children's CPU from
getrusage, the peak resident memory of a fan-out). A worker supplies its batch function, which
times each iteration with time.perf_counter_ns (CLOCK_MONOTONIC) around exactly the work.
"""
import os
import resource
import sys
import urllib.parse

KINDS = ("capture", "stream", "fan_out", "spawn_only")


class Setup:
    """One series, as `setup` describes it; `input` is every child's stdin, read once."""

    def __init__(self, line):
        f = {}
        for word in line.split()[1:]:
            key, eq, value = word.partition("=")
            if eq:
                f[key] = urllib.parse.unquote(value)
        self.kind = f.get("kind", "")
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}")
        self.program = f.get("program", "")
        self.children = int(f.get("children", "1"))
        path = f.get("input_file", "-")
        self.input = b""
        if path != "-":
            with open(path, "rb") as fh:
                self.input = fh.read()
        self.idle_fds = self.peak_fds = 0


class Counts:
    __slots__ = ("bytes", "lines", "children", "failures")

    def __init__(self, nbytes=0, lines=0, children=0, failures=0):
        self.bytes, self.lines, self.children, self.failures = nbytes, lines, children, failures

    def add(self, o):
        self.bytes += o.bytes
        self.lines += o.lines
        self.children += o.children
        self.failures += o.failures


def captured(out, returncode):
    """The counts of one child whose whole stdout is `out`."""
    return Counts(len(out), out.count(b"\n"), 1, 1 if returncode != 0 else 0)


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def _rusage_ns(who):
    ru = resource.getrusage(who)
    return round((ru.ru_utime + ru.ru_stime) * 1e9)


def _vm_hwm_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _batch(setup, k, run):
    if setup.kind == "fan_out":
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")  # VmHWM from here on
        except OSError:
            pass
    c0, s0 = _rusage_ns(resource.RUSAGE_CHILDREN), _rusage_ns(resource.RUSAGE_SELF)
    ns, total = run(setup, k)
    c1, s1 = _rusage_ns(resource.RUSAGE_CHILDREN), _rusage_ns(resource.RUSAGE_SELF)
    line = (f"done {k} ns={max(ns, 1)} bytes={total.bytes} lines={total.lines} "
            f"children={total.children} failures={total.failures} "
            f"cpu_children_ns={max(c1 - c0, 0)} cpu_self_ns={max(s1 - s0, 0)}")
    if setup.kind == "fan_out":
        line += f" peak_rss_kib={_vm_hwm_kib()} idle_fds={setup.idle_fds} peak_fds={setup.peak_fds}"
    return line


def raise_nofile():
    """The soft RLIMIT_NOFILE raised to the hard limit, as pkbench's own worker does: a fan-out at
    scale holds two pipe ends per child in flight, 8,192 for 4,096 children, past the soft limit
    of 1,024 many systems start a process with (Python does not raise it itself)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (OSError, ValueError):
            pass  # the fan-out then fails with EMFILE, named in its error


def serve(name, runtime, run, probe_fds):
    """Greets, then answers requests until `quit` or the end of stdin. run(setup, k) returns the
    k iterations' summed ns and Counts; probe_fds(setup) sets setup.idle_fds and .peak_fds."""
    raise_nofile()
    out = sys.stdout

    def say(text):
        out.write(text + "\n")
        out.flush()

    say(f"pkw 1 name={name} runtime={runtime} kinds={','.join(KINDS)}")
    setup = None
    for line in sys.stdin:
        line = line.rstrip("\n")
        word = line.split(" ", 1)[0]
        try:
            if word == "setup":
                setup = None
                s = Setup(line)
                if s.kind == "fan_out":
                    probe_fds(s)
                setup = s
                say("ok")
            elif word == "run":
                k = int(line[3:])
                if setup is None:
                    raise ValueError("run before setup")
                if k < 1:
                    raise ValueError(f"bad request: {line}")
                say(_batch(setup, k, run))
            elif word == "teardown":
                setup = None
                say("ok")
            elif word == "quit":
                return
            else:
                raise ValueError(f"unknown request: {line}")
        except Exception as e:  # every failure is an answer, never the worker's end
            say("error " + f"{type(e).__name__}: {e}".replace("\n", " "))
