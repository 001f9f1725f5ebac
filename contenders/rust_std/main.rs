//! rust_std — the seed's `std_process` contender as a worker (contenders/README.md): what a Rust
//! user writes with the standard library. Small capture: `Command` with stdin and stdout piped,
//! the bytes written, `wait_with_output`. Streaming: a writer thread feeds stdin while
//! `BufRead::lines` consumes every line, then `wait`. Fan-out: one scoped thread per child, each
//! a small capture. Spawn-only: `status()`, the child inheriting our streams. The program is
//! named as a user would (`Command::new("cat")` searches PATH per spawn).

#[path = "../pkw/pkw.rs"]
mod pkw;

use pkw::{count_lines, open_fds, timed, Batch, Counts, Kind, Setup, Worker};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::thread;

fn start(program: &str) -> Result<Child, String> {
    Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawning {}: {}", program, e))
}

/// Feeds a started child its (small) stdin and collects its stdout.
fn finish(mut child: Child, input: &[u8]) -> Result<Counts, String> {
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin.write_all(input).map_err(|e| format!("writing stdin: {}", e))?;
    drop(stdin);
    let out = child.wait_with_output().map_err(|e| format!("waiting: {}", e))?;
    Ok(Counts {
        bytes: out.stdout.len() as u64,
        lines: count_lines(&out.stdout),
        children: 1,
        failures: !out.status.success() as u64,
    })
}

fn capture(program: &str, input: &[u8]) -> Result<Counts, String> {
    finish(start(program)?, input)
}

fn stream(program: &str, input: &[u8]) -> Result<Counts, String> {
    let mut child = start(program)?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let counts = thread::scope(|scope| {
        let writer = scope.spawn(move || stdin.write_all(input));
        let mut c = Counts::default();
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("reading a line: {}", e))?;
            c.bytes += line.len() as u64 + 1;
            c.lines += 1;
        }
        writer.join().expect("the writer thread").map_err(|e| format!("writing stdin: {}", e))?;
        Ok::<Counts, String>(c)
    })?;
    let status = child.wait().map_err(|e| format!("waiting: {}", e))?;
    Ok(Counts { children: 1, failures: !status.success() as u64, ..counts })
}

fn fan_out(program: &str, input: &[u8], n: usize) -> Result<Counts, String> {
    thread::scope(|scope| {
        let threads: Vec<_> = (0..n).map(|_| scope.spawn(|| capture(program, input))).collect();
        let mut total = Counts::default();
        for t in threads {
            total.add(t.join().expect("a fan-out thread")?);
        }
        Ok(total)
    })
}

fn spawn_only(program: &str) -> Result<Counts, String> {
    let status = Command::new(program).status().map_err(|e| format!("spawning {}: {}", program, e))?;
    Ok(Counts { children: 1, failures: !status.success() as u64, ..Counts::default() })
}

struct Std;

impl Worker for Std {
    fn run(&mut self, s: &Setup, k: u64) -> Result<Batch, String> {
        let mut b = Batch::default();
        for _ in 0..k {
            match s.kind {
                Kind::Capture => timed(&mut b, || capture(&s.program, &s.input))?,
                Kind::Stream => timed(&mut b, || stream(&s.program, &s.input))?,
                Kind::FanOut => timed(&mut b, || fan_out(&s.program, &s.input, s.children))?,
                Kind::SpawnOnly => timed(&mut b, || spawn_only(&s.program))?,
            }
        }
        Ok(b)
    }

    fn probe_fds(&mut self, s: &Setup) -> Result<(u64, u64), String> {
        let idle = open_fds();
        let children = (0..s.children).map(|_| start(&s.program)).collect::<Result<Vec<_>, _>>()?;
        let peak = open_fds();
        for c in children {
            finish(c, &s.input)?;
        }
        Ok((idle, peak))
    }
}

fn main() {
    let runtime = format!("rustc-{}", option_env!("PKB_RUSTC_VERSION").unwrap_or("unknown"));
    pkw::serve("rust_std", &runtime, &mut Std);
}
