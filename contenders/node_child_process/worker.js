// node_child_process — a Node contender as a worker (contenders/README.md): what a Node user
// writes with child_process.spawn. Small capture: stdin and stdout piped, stdin.end(bytes), the
// stdout 'data' chunks collected until 'close'. Streaming: readline over the child's stdout, every
// line consumed (for await) while Node writes stdin, then 'close'. Fan-out: Promise.all over one
// small capture per child. Spawn-only: the child inheriting our streams, until 'close'. The program
// is named as a user would ("cat", searched in PATH per spawn). Each iteration is timed with
// process.hrtime.bigint() (monotonic) around exactly the work; the protocol is the rest of the
// file. Node raises its soft RLIMIT_NOFILE to the hard limit at start, so a fan-out at scale (two
// pipe ends per child in flight) needs nothing here (tests/test_languages.c starts it low).
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const readline = require('node:readline');

const KINDS = ['capture', 'stream', 'fan_out', 'spawn_only'];

// The end of a child: its exit code (a signal counts as a failure), once its streams closed.
function closed(child) {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code === 0 ? 0 : 1));
  });
}

async function capture(program, input) {
  const child = spawn(program, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const done = closed(child);
  let bytes = 0, lines = 0;
  child.stdout.on('data', (chunk) => {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  });
  child.stdin.end(input);
  const failures = await done;
  return { bytes, lines, children: 1, failures };
}

async function stream(program, input) {
  const child = spawn(program, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const done = closed(child);
  child.stdin.end(input);
  let bytes = 0, lines = 0;
  const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
  for await (const line of rl) {
    bytes += Buffer.byteLength(line) + 1;
    lines++;
  }
  const failures = await done;
  return { bytes, lines, children: 1, failures };
}

async function fanOut(program, input, n) {
  const all = await Promise.all(Array.from({ length: n }, () => capture(program, input)));
  return all.reduce((t, c) => ({
    bytes: t.bytes + c.bytes, lines: t.lines + c.lines,
    children: t.children + c.children, failures: t.failures + c.failures,
  }), { bytes: 0, lines: 0, children: 0, failures: 0 });
}

async function spawnOnly(program) {
  const failures = await closed(spawn(program, [], { stdio: 'inherit' }));
  return { bytes: 0, lines: 0, children: 1, failures };
}

function iterate(s) {
  switch (s.kind) {
    case 'capture': return capture(s.program, s.input);
    case 'stream': return stream(s.program, s.input);
    case 'fan_out': return fanOut(s.program, s.input, s.children);
    default: return spawnOnly(s.program);
  }
}

const openFds = () => fs.readdirSync('/proc/self/fd').length;

async function probeFds(s) {
  s.idleFds = openFds();
  const children = Array.from({ length: s.children },
    () => spawn(s.program, [], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const done = children.map(closed);
  s.peakFds = openFds();
  for (const c of children) {
    c.stdout.resume();
    c.stdin.end(s.input);
  }
  await Promise.all(done);
}

// ---- the protocol --------------------------------------------------------------------------

// Node has no getrusage of children: their CPU is the reaped children's cutime + cstime from
// /proc/self/stat, in clock ticks (so a batch's is exact to a tick, 10 ms at CLK_TCK 100).
const TICK_NS = 1e9 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);
function childrenCpuNs() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * TICK_NS; // fields 16 and 17 of proc(5)
}
const selfCpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
function vmHwmKib() {
  const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}

function parseSetup(line) {
  const f = {};
  for (const word of line.split(' ').slice(1)) {
    const eq = word.indexOf('=');
    if (eq > 0) f[word.slice(0, eq)] = decodeURIComponent(word.slice(eq + 1));
  }
  if (!KINDS.includes(f.kind)) throw new Error(`unknown kind ${f.kind}`);
  const children = Number(f.children);
  if (!Number.isInteger(children) || children < 1) throw new Error(`children=${f.children}`);
  const input = f.input_file && f.input_file !== '-' ? fs.readFileSync(f.input_file) : Buffer.alloc(0);
  return { kind: f.kind, program: f.program, children, input, idleFds: 0, peakFds: 0 };
}

async function batch(s, k) {
  if (s.kind === 'fan_out') {
    try { fs.writeFileSync('/proc/self/clear_refs', '5'); } catch (e) { /* VmHWM not reset */ }
  }
  const c0 = childrenCpuNs(), s0 = selfCpuNs();
  let ns = 0n;
  const t = { bytes: 0, lines: 0, children: 0, failures: 0 };
  for (let i = 0; i < k; i++) {
    const t0 = process.hrtime.bigint();
    const c = await iterate(s);
    ns += process.hrtime.bigint() - t0;
    t.bytes += c.bytes; t.lines += c.lines; t.children += c.children; t.failures += c.failures;
  }
  const c1 = childrenCpuNs(), s1 = selfCpuNs();
  let line = `done ${k} ns=${ns > 0n ? ns : 1n} bytes=${t.bytes} lines=${t.lines} ` +
    `children=${t.children} failures=${t.failures} cpu_children_ns=${Math.round(c1 - c0)} ` +
    `cpu_self_ns=${Math.round(s1 - s0)}`;
  if (s.kind === 'fan_out') line += ` peak_rss_kib=${vmHwmKib()} idle_fds=${s.idleFds} peak_fds=${s.peakFds}`;
  return line;
}

async function main() {
  const say = (text) => process.stdout.write(text + '\n');
  say(`pkw 1 name=node_child_process runtime=node-${process.version} kinds=${KINDS.join(',')}`);
  let setup = null;
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const word = line.split(' ', 1)[0];
    try {
      if (word === 'setup') {
        setup = null;
        const s = parseSetup(line);
        if (s.kind === 'fan_out') await probeFds(s);
        setup = s;
        say('ok');
      } else if (word === 'run') {
        const k = Number(line.slice(4));
        if (setup === null) throw new Error('run before setup');
        if (!Number.isInteger(k) || k < 1) throw new Error(`bad request: ${line}`);
        say(await batch(setup, k));
      } else if (word === 'teardown') {
        setup = null;
        say('ok');
      } else if (word === 'quit') {
        process.exit(0);
      } else {
        throw new Error(`unknown request: ${line}`);
      }
    } catch (e) {
      say('error ' + String(e && e.message ? e.message : e).replace(/\n/g, ' '));
    }
  }
}

main();
