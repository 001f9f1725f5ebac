"""python_asyncio — a Python contender as a worker (contenders/README.md): what a Python user
writes with asyncio, on one event loop made once. Small capture: create_subprocess_exec with stdin
and stdout piped, communicate(input). Streaming: a task writes stdin (write, drain, close) while
readline() consumes every line, then wait(). Fan-out: gather() over one small capture per child.
Spawn-only: create_subprocess_exec with the child inheriting our streams, then wait(). A batch
runs in one run_until_complete, each iteration timed in it with time.perf_counter_ns.
"""
import asyncio
import os
import platform
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pkw"))
import pkw  # noqa: E402

PIPE = asyncio.subprocess.PIPE


async def capture(program, data):
    p = await asyncio.create_subprocess_exec(program, stdin=PIPE, stdout=PIPE)
    out, _ = await p.communicate(data)
    return pkw.captured(out, p.returncode)


async def stream(program, data):
    p = await asyncio.create_subprocess_exec(program, stdin=PIPE, stdout=PIPE)

    async def feed():
        p.stdin.write(data)
        await p.stdin.drain()
        p.stdin.close()

    writer = asyncio.create_task(feed())
    c = pkw.Counts()
    while line := await p.stdout.readline():
        c.bytes += len(line)
        c.lines += 1
    await writer
    c.children, c.failures = 1, 1 if await p.wait() != 0 else 0
    return c


async def fan_out(program, data, n):
    total = pkw.Counts()
    for r in await asyncio.gather(*(capture(program, data) for _ in range(n))):
        total.add(r)
    return total


async def spawn_only(program):
    p = await asyncio.create_subprocess_exec(program)
    return pkw.Counts(0, 0, 1, 1 if await p.wait() != 0 else 0)


async def batch(s, k):
    ns, total = 0, pkw.Counts()
    clock = time.perf_counter_ns
    for _ in range(k):
        t0 = clock()
        if s.kind == "capture":
            c = await capture(s.program, s.input)
        elif s.kind == "stream":
            c = await stream(s.program, s.input)
        elif s.kind == "fan_out":
            c = await fan_out(s.program, s.input, s.children)
        else:
            c = await spawn_only(s.program)
        ns += clock() - t0
        total.add(c)
    return ns, total


async def probe(s):
    s.idle_fds = pkw.open_fds()
    procs = [await asyncio.create_subprocess_exec(s.program, stdin=PIPE, stdout=PIPE)
             for _ in range(s.children)]
    s.peak_fds = pkw.open_fds()
    for p in procs:
        await p.communicate(s.input)


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    pkw.serve("python_asyncio", "python-" + platform.python_version(),
              lambda s, k: loop.run_until_complete(batch(s, k)),
              lambda s: loop.run_until_complete(probe(s)))
