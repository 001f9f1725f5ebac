//! rust_tokio — the seed's `tokio_process` contender as a worker (contenders/README.md): what a
//! Rust user writes with Tokio, on the runtime `#[tokio::main]` builds (multi-threaded, every
//! driver enabled), made once. Small capture: `tokio::process::Command` with stdin and stdout
//! piped, the bytes written, `wait_with_output().await`. Streaming: a task feeds stdin while an
//! async `BufReader::lines()` consumes every line, then `wait().await`. Fan-out: one task per
//! child, each a small capture, awaited in order. Spawn-only: `status().await`, the child
//! inheriting our streams. A batch runs inside one `block_on`, each iteration timed in it.

#[path = "../pkw/pkw.rs"]
mod pkw;

use pkw::{count_lines, open_fds, Batch, Counts, Kind, Setup, Worker};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::runtime::Runtime;

fn start(program: &str) -> Result<Child, String> {
    Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawning {}: {}", program, e))
}

async fn finish(mut child: Child, input: &[u8]) -> Result<Counts, String> {
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin.write_all(input).await.map_err(|e| format!("writing stdin: {}", e))?;
    drop(stdin);
    let out = child.wait_with_output().await.map_err(|e| format!("waiting: {}", e))?;
    Ok(Counts {
        bytes: out.stdout.len() as u64,
        lines: count_lines(&out.stdout),
        children: 1,
        failures: !out.status.success() as u64,
    })
}

async fn capture(program: Arc<str>, input: Arc<[u8]>) -> Result<Counts, String> {
    finish(start(&program)?, &input).await
}

async fn stream(program: &str, input: Arc<[u8]>) -> Result<Counts, String> {
    let mut child = start(program)?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let writer = tokio::spawn(async move { stdin.write_all(&input).await });
    let mut lines = BufReader::new(stdout).lines();
    let mut c = Counts::default();
    while let Some(line) = lines.next_line().await.map_err(|e| format!("reading a line: {}", e))? {
        c.bytes += line.len() as u64 + 1;
        c.lines += 1;
    }
    writer
        .await
        .map_err(|e| format!("the writer task: {}", e))?
        .map_err(|e| format!("writing stdin: {}", e))?;
    let status = child.wait().await.map_err(|e| format!("waiting: {}", e))?;
    Ok(Counts { children: 1, failures: !status.success() as u64, ..c })
}

async fn fan_out(program: &Arc<str>, input: &Arc<[u8]>, n: usize) -> Result<Counts, String> {
    let tasks: Vec<_> =
        (0..n).map(|_| tokio::spawn(capture(program.clone(), input.clone()))).collect();
    let mut total = Counts::default();
    for t in tasks {
        total.add(t.await.map_err(|e| format!("a fan-out task: {}", e))??);
    }
    Ok(total)
}

async fn spawn_only(program: &str) -> Result<Counts, String> {
    let status =
        Command::new(program).status().await.map_err(|e| format!("spawning {}: {}", program, e))?;
    Ok(Counts { children: 1, failures: !status.success() as u64, ..Counts::default() })
}

struct Tokio {
    rt: Runtime,
    program: Arc<str>,
    input: Arc<[u8]>,
}

impl Worker for Tokio {
    fn prepare(&mut self, s: &Setup) -> Result<(), String> {
        self.program = Arc::from(s.program.as_str());
        self.input = Arc::from(s.input.as_slice());
        Ok(())
    }

    fn run(&mut self, s: &Setup, k: u64) -> Result<Batch, String> {
        let (program, input) = (self.program.clone(), self.input.clone());
        self.rt.block_on(async move {
            let mut b = Batch::default();
            for _ in 0..k {
                let t0 = Instant::now();
                let c = match s.kind {
                    Kind::Capture => capture(program.clone(), input.clone()).await?,
                    Kind::Stream => stream(&program, input.clone()).await?,
                    Kind::FanOut => fan_out(&program, &input, s.children).await?,
                    Kind::SpawnOnly => spawn_only(&program).await?,
                };
                b.ns += t0.elapsed().as_nanos();
                b.counts.add(c);
            }
            Ok(b)
        })
    }

    fn probe_fds(&mut self, s: &Setup) -> Result<(u64, u64), String> {
        let (program, input) = (self.program.clone(), self.input.clone());
        self.rt.block_on(async move {
            let idle = open_fds();
            let children =
                (0..s.children).map(|_| start(&program)).collect::<Result<Vec<_>, _>>()?;
            let peak = open_fds();
            for c in children {
                finish(c, &input).await?;
            }
            Ok((idle, peak))
        })
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let runtime = format!(
        "rustc-{}+tokio-{}",
        option_env!("PKB_RUSTC_VERSION").unwrap_or("unknown"),
        option_env!("PKB_TOKIO_VERSION").unwrap_or("1")
    );
    let mut w = Tokio { rt, program: Arc::from(""), input: Arc::from(Vec::new().as_slice()) };
    pkw::serve("rust_tokio", &runtime, &mut w);
}
