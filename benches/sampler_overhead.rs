//! What sampling costs and how accurate it is, as plain `name key=value`
//! lines.
//!
//! 1. Overhead: a tree of 10 worker processes (this binary re-run with
//!    `--worker`), each holding 20 MiB in 40 mappings with 2 threads busy
//!    part-time, sampled at 10 ms and 100 ms for ~5 s each with the budget
//!    `compare` uses (`DEFAULT_BUDGET`, tree walks charged to it). Prints the sampling thread's CPU time as a fraction of one core
//!    (tree walk + sample), PSS passes per second and mean cost per tick,
//!    with the tree found by `descendants` (a full /proc scan on kernels
//!    without children files) and by the caching `TreeWalker`.
//! 2. Peak accuracy: one child (`--peak`) touches 200 MiB in 10 MiB steps,
//!    frees 150 MiB, and waits; sampled at 100 ms, the largest sampled RSS is
//!    compared with the kernel's VmHWM read just before the child exits.

use allocscope_core::sample::{
    descendants, proc, thread_cpu_seconds, Sampler, TreeWalker, DEFAULT_BUDGET,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const MIB: usize = 1024 * 1024;
const WORKERS: usize = 10;
const RUN_FOR: Duration = Duration::from_secs(5);
const PEAK_RUNS: u32 = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--worker") {
        worker();
    } else if args.iter().any(|a| a == "--peak") {
        peak_child();
    } else if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        workers.push(spawn(&exe, "--worker")?);
    }
    for worker in &mut workers {
        wait_ready(worker)?;
    }
    for (interval_ms, budget, cached_tree) in [
        (10u64, DEFAULT_BUDGET, false),
        (100, DEFAULT_BUDGET, false),
        (10, DEFAULT_BUDGET, true),
        (100, DEFAULT_BUDGET, true),
    ] {
        overhead(interval_ms, budget, cached_tree);
    }
    // Closing stdin tells the workers to exit.
    for mut worker in workers {
        drop(worker.stdin.take());
        let _ = worker.wait();
    }
    let mut shortfalls = Vec::new();
    for run in 1..=PEAK_RUNS {
        shortfalls.push(peak_accuracy(&exe, run)?);
    }
    let mean = shortfalls.iter().sum::<f64>() / shortfalls.len() as f64;
    let worst = shortfalls.iter().copied().fold(f64::MIN, f64::max);
    println!("peak_rss_shortfall_fraction_mean interval_ms=100 runs={PEAK_RUNS} value={mean:.4}");
    println!("peak_rss_shortfall_fraction_worst interval_ms=100 runs={PEAK_RUNS} value={worst:.4}");
    Ok(())
}

fn spawn(exe: &std::path::Path, mode: &str) -> Result<Child, String> {
    Command::new(exe)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawning {mode}: {e}"))
}

/// Waits for the child's next stdout line (`ready`, `done`).
fn wait_ready(child: &mut Child) -> Result<String, String> {
    let stdout = child.stdout.as_mut().ok_or("child without stdout")?;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).map_err(|e| e.to_string())? == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// Samples `descendants(own pid)` every `interval_ms` for `RUN_FOR`.
fn overhead(interval_ms: u64, budget: f64, cached_tree: bool) {
    let me = std::process::id() as i32;
    let interval = Duration::from_millis(interval_ms);
    let mut sampler = Sampler::new(budget);
    let mut walker = TreeWalker::new(me);
    let start = Instant::now();
    let cpu_start_s = thread_cpu_seconds();
    let mut tree_cpu_s = 0.0;
    let mut max_processes = 0;
    let mut next = start;
    while start.elapsed() < RUN_FOR {
        let tree_start_s = thread_cpu_seconds();
        let pids = if cached_tree {
            walker.walk()
        } else {
            descendants(me)
        };
        let walk_s = thread_cpu_seconds() - tree_start_s;
        tree_cpu_s += walk_s;
        // As the runner does: the walk counts against the sampler's budget.
        sampler.charge(walk_s);
        let sample = sampler.sample(&pids, start.elapsed().as_secs_f64());
        max_processes = max_processes.max(sample.processes);
        next += interval;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    let cpu_s = thread_cpu_seconds() - cpu_start_s;
    let ticks = sampler.ticks().max(1) as f64;
    let reads = sampler.pss_reads().max(1) as f64;
    let tag = format!(
        "interval_ms={interval_ms} processes={max_processes} budget={budget} tree={}",
        if cached_tree { "cached" } else { "scan" }
    );
    println!("sampler_cpu_fraction {tag} value={:.4}", cpu_s / wall_s);
    println!(
        "sample_call_cpu_fraction {tag} value={:.4}",
        sampler.cpu_seconds() / wall_s
    );
    println!(
        "tree_walk_cpu_fraction {tag} value={:.4}",
        tree_cpu_s / wall_s
    );
    println!(
        "pss_cpu_fraction {tag} value={:.4}",
        sampler.pss_cpu_seconds() / wall_s
    );
    println!(
        "pss_reads_per_second {tag} value={:.2}",
        sampler.pss_reads() as f64 / wall_s
    );
    println!("mean_tick_cost_us {tag} value={:.1}", cpu_s / ticks * 1e6);
    println!(
        "mean_tree_walk_cost_us {tag} value={:.1}",
        tree_cpu_s / ticks * 1e6
    );
    println!(
        "mean_pss_pass_cost_us {tag} value={:.1}",
        sampler.pss_cpu_seconds() / reads * 1e6
    );
    println!("ticks {tag} value={}", sampler.ticks());
}

/// One ramp-and-free child; returns 1 - sampled peak / VmHWM.
fn peak_accuracy(exe: &std::path::Path, run: u32) -> Result<f64, String> {
    let me = std::process::id() as i32;
    let mut child = spawn(exe, "--peak")?;
    let pid = child.id() as i32;
    let stdout = child.stdout.take().ok_or("child without stdout")?;
    // A reader thread reports `done` so the sampling loop never blocks.
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line == "done" {
                let _ = tx.send(());
            }
        }
    });
    let mut sampler = Sampler::new(DEFAULT_BUDGET);
    let start = Instant::now();
    let mut peak_rss_bytes = 0u64;
    let mut next = start;
    let hwm_bytes = loop {
        let sample = sampler.sample(&descendants(me), start.elapsed().as_secs_f64());
        peak_rss_bytes = peak_rss_bytes.max(sample.rss_bytes);
        if rx.try_recv().is_ok() {
            break proc::read_status_hwm(pid).ok_or("child gone before VmHWM was read")?;
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err("peak child never finished".into());
        }
        next += Duration::from_millis(100);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
    };
    drop(child.stdin.take());
    let _ = child.wait();
    let mib = |b: u64| b as f64 / MIB as f64;
    let shortfall = 1.0 - peak_rss_bytes as f64 / hwm_bytes.max(1) as f64;
    println!(
        "peak run={run} interval_ms=100 sampled_rss_mib={:.1} vmhwm_mib={:.1} shortfall_fraction={shortfall:.4}",
        mib(peak_rss_bytes),
        mib(hwm_bytes)
    );
    Ok(shortfall)
}

/// Touches every page so it is resident and private.
fn touched(bytes: usize) -> Vec<u8> {
    let mut block = vec![0u8; bytes];
    for page in block.chunks_mut(4096) {
        page[0] = 1;
    }
    block
}

/// Holds 20 MiB in 40 blocks (each its own mmap under glibc's default
/// threshold) and keeps 2 threads busy ~2 ms out of every 50 ms.
fn worker() {
    let blocks: Vec<Vec<u8>> = (0..40).map(|_| touched(MIB / 2)).collect();
    for _ in 0..2 {
        thread::spawn(|| {
            let mut scratch = touched(MIB);
            loop {
                let until = Instant::now() + Duration::from_millis(2);
                let mut i = 0usize;
                while Instant::now() < until {
                    scratch[i % MIB] = scratch[i % MIB].wrapping_add(1);
                    i += 4099;
                }
                thread::sleep(Duration::from_millis(48));
            }
        });
    }
    println!("ready");
    let _ = std::io::stdout().flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(blocks);
}

/// Ramps to 200 MiB in 10 MiB steps, frees 150 MiB, then waits on stdin.
fn peak_child() {
    let mut blocks = Vec::new();
    for _ in 0..20 {
        blocks.push(touched(10 * MIB));
        thread::sleep(Duration::from_millis(30));
    }
    blocks.truncate(5);
    thread::sleep(Duration::from_millis(300));
    println!("done");
    let _ = std::io::stdout().flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(blocks);
}
