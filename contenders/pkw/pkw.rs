//! pkw — the worker protocol (contenders/README.md, "The worker protocol"), the Rust workers'
//! side: the greeting, the requests read from stdin and the answers written to stdout, the
//! setup's fields, and what surrounds a batch of iterations (the CPU of this process and of its
//! children from getrusage, the peak resident memory of a fan-out). A worker supplies only its
//! iterations (`Worker::run`), each timed with `Instant` around exactly the work.
#![allow(dead_code)] // each worker uses the helpers it needs

use std::fs;
use std::io::{self, BufRead, Write};
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Capture,
    Stream,
    FanOut,
    SpawnOnly,
}

/// One series, as `setup` describes it; `input` is every child's stdin, read once.
pub struct Setup {
    pub kind: Kind,
    pub program: String,
    pub children: usize,
    pub input: Vec<u8>,
}

/// What iterations saw, summed.
#[derive(Default, Clone, Copy)]
pub struct Counts {
    pub bytes: u64,
    pub lines: u64,
    pub children: u64,
    pub failures: u64,
}

impl Counts {
    pub fn add(&mut self, o: Counts) {
        self.bytes += o.bytes;
        self.lines += o.lines;
        self.children += o.children;
        self.failures += o.failures;
    }
}

/// A batch: the iterations' summed wall time and counts.
#[derive(Default)]
pub struct Batch {
    pub ns: u128,
    pub counts: Counts,
}

pub trait Worker {
    /// A new series: whatever the worker keeps for it (untimed).
    fn prepare(&mut self, _s: &Setup) -> Result<(), String> {
        Ok(())
    }
    /// `k` iterations back to back, each timed around exactly the work.
    fn run(&mut self, s: &Setup, k: u64) -> Result<Batch, String>;
    /// The descriptors open before a fan-out, and with all its children started (untimed).
    fn probe_fds(&mut self, s: &Setup) -> Result<(u64, u64), String>;
}

/// Times one iteration of a batch: adds its wall time and counts.
pub fn timed<F: FnOnce() -> Result<Counts, String>>(b: &mut Batch, work: F) -> Result<(), String> {
    let t0 = Instant::now();
    let c = work()?;
    b.ns += t0.elapsed().as_nanos();
    b.counts.add(c);
    Ok(())
}

/// Newlines in a buffer: the lines of a captured output.
pub fn count_lines(data: &[u8]) -> u64 {
    data.iter().filter(|&&b| b == b'\n').count() as u64
}

/// A value of the protocol, percent-decoded (%XX is the byte XX).
fn decode(v: &str) -> String {
    let b = v.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(' ').skip(1).find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn setup_of(line: &str) -> Result<Setup, String> {
    let need = |k: &str| field(line, k).map(decode).ok_or_else(|| format!("setup lacks {}=", k));
    let kind = match need("kind")?.as_str() {
        "capture" => Kind::Capture,
        "stream" => Kind::Stream,
        "fan_out" => Kind::FanOut,
        "spawn_only" => Kind::SpawnOnly,
        other => return Err(format!("unknown kind {}", other)),
    };
    let children: usize = need("children")?.parse().map_err(|_| "children= is not a count")?;
    let file = need("input_file")?;
    let input = if file == "-" {
        Vec::new()
    } else {
        fs::read(&file).map_err(|e| format!("reading {}: {}", file, e))?
    };
    Ok(Setup { kind, program: need("program")?, children, input })
}

fn rusage_ns(who: libc::c_int) -> u128 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u128 * 1_000_000_000 + t.tv_usec as u128 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn vm_hwm_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Open descriptors of this process.
pub fn open_fds() -> u64 {
    fs::read_dir("/proc/self/fd").map(|d| d.count() as u64).unwrap_or(0)
}

fn one_line(msg: &str) -> String {
    msg.replace('\n', " ")
}

fn run_batch(w: &mut dyn Worker, s: &Setup, k: u64, fds: (u64, u64)) -> Result<String, String> {
    if s.kind == Kind::FanOut {
        let _ = fs::write("/proc/self/clear_refs", "5"); // VmHWM from here on
    }
    let (c0, s0) = (rusage_ns(libc::RUSAGE_CHILDREN), rusage_ns(libc::RUSAGE_SELF));
    let b = w.run(s, k)?;
    let (c1, s1) = (rusage_ns(libc::RUSAGE_CHILDREN), rusage_ns(libc::RUSAGE_SELF));
    let mut line = format!(
        "done {} ns={} bytes={} lines={} children={} failures={} cpu_children_ns={} cpu_self_ns={}",
        k,
        b.ns.max(1),
        b.counts.bytes,
        b.counts.lines,
        b.counts.children,
        b.counts.failures,
        c1 - c0,
        s1 - s0
    );
    if s.kind == Kind::FanOut {
        line += &format!(" peak_rss_kib={} idle_fds={} peak_fds={}", vm_hwm_kib(), fds.0, fds.1);
    }
    Ok(line)
}

/// Raises the soft RLIMIT_NOFILE to the hard limit, as pkbench's own worker does: a fan-out at
/// scale holds two pipe ends per child in flight, 8,192 for 4,096 children, past the soft limit
/// of 1,024 many systems start a process with. (Go's os package and Node raise it themselves at
/// start; Rust's std does not.)
fn raise_nofile() {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 && rl.rlim_cur < rl.rlim_max {
            rl.rlim_cur = rl.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
        }
    }
}

/// Greets, then answers requests until `quit` or the end of stdin.
pub fn serve(name: &str, runtime: &str, w: &mut dyn Worker) {
    raise_nofile();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let say = |out: &mut io::StdoutLock, s: &str| {
        let _ = writeln!(out, "{}", s);
        let _ = out.flush();
    };
    say(&mut out, &format!("pkw 1 name={} runtime={} kinds=capture,stream,fan_out,spawn_only", name, runtime));
    let mut setup: Option<(Setup, (u64, u64))> = None;
    for line in io::stdin().lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(_) => break,
        };
        let word = line.split(' ').next().unwrap_or("");
        let answer = match word {
            "setup" => match setup_of(&line) {
                Ok(s) => {
                    let fds = w.prepare(&s).and_then(|_| {
                        if s.kind == Kind::FanOut { w.probe_fds(&s) } else { Ok((0, 0)) }
                    });
                    match fds {
                        Ok(f) => {
                            setup = Some((s, f));
                            Ok("ok".to_string())
                        }
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e),
            },
            "run" => match (&setup, line[3..].trim().parse::<u64>()) {
                (Some((s, fds)), Ok(k)) if k > 0 => run_batch(w, s, k, *fds),
                (None, _) => Err("run before setup".to_string()),
                _ => Err(format!("bad request: {}", line)),
            },
            "teardown" => {
                setup = None;
                Ok("ok".to_string())
            }
            "quit" => break,
            _ => Err(format!("unknown request: {}", line)),
        };
        match answer {
            Ok(a) => say(&mut out, &a),
            Err(e) => say(&mut out, &format!("error {}", one_line(&e))),
        }
    }
}
