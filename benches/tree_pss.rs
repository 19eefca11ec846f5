//! Tree PSS between full reads, as plain `name key=value` lines.
//!
//! A forked tree (this binary re-run with `--tree`): the root maps 64 MiB
//! shared and touches it, then forks `CHILDREN` children; child `i` touches
//! part of the shared mapping and grows private memory by `i + 1` MiB every
//! 50 ms up to a ceiling, frees it in steps, and starts again, so children
//! change at different rates. The sampler runs at 20 ms with the budget
//! `compare` uses; after every tick, every process's smaps_rollup is read in
//! full for the reference. Printed: the error of the tree's PSS series
//! against the reference, for the sampler's estimate ("after") and for the
//! interpolation of the PSS/RSS ratio between full reads that the analysis
//! used before ("before"): mean PSS error and the largest error of any one
//! sample, in percent. Goal: mean within 3%, every sample within 10%.
//!
//! With `TREE_PSS_POSTGRES=1`, the same comparison on PostgreSQL under
//! pgbench per allocator instead (see `tree_pss/postgres.rs`).

#[path = "tree_pss/breakdown.rs"]
mod breakdown;
#[path = "tree_pss/postgres.rs"]
mod postgres;

use allocscope_core::sample::{descendants, Sampler, DEFAULT_BUDGET};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: usize = 1024 * 1024;
const CHILDREN: usize = 6;
const SHARED_MIB: usize = 64;
const RUN_FOR: Duration = Duration::from_secs(8);
const INTERVAL: Duration = Duration::from_millis(20);

fn main() {
    let result = if std::env::args().any(|a| a == "--tree") {
        tree();
        Ok(())
    } else if std::env::var_os("TREE_PSS_POSTGRES").is_some_and(|v| v == "1") {
        postgres::run()
    } else {
        run()
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Anonymous memory, touched: shared with forked children or private.
fn map(bytes: usize, shared: bool) -> *mut u8 {
    let flags = libc::MAP_ANONYMOUS
        | if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
    // SAFETY: a fresh anonymous mapping; checked for failure below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        std::process::exit(2);
    }
    ptr as *mut u8
}

fn touch(ptr: *mut u8, bytes: usize) {
    for offset in (0..bytes).step_by(4096) {
        // SAFETY: `offset` is inside the mapping of `bytes` at `ptr`.
        unsafe { ptr.add(offset).write_volatile(1) };
    }
}

/// The tree's root: shared mapping, then forked children.
fn tree() {
    let shared = map(SHARED_MIB * MIB, true);
    touch(shared, SHARED_MIB * MIB / 4);
    for i in 0..CHILDREN {
        // SAFETY: this process is single-threaded; the child only touches
        // memory and calls mmap/munmap/nanosleep before exiting.
        if unsafe { libc::fork() } == 0 {
            child(i, shared);
        }
    }
    std::thread::sleep(RUN_FOR + Duration::from_secs(1));
}

fn child(i: usize, shared: *mut u8) -> ! {
    // Each child touches a different amount of the shared mapping.
    touch(shared, SHARED_MIB * MIB * (i + 1) / (CHILDREN + 1));
    let step = (i + 1) * MIB;
    let ceiling = 12 * step;
    let start = Instant::now();
    let mut held: Vec<*mut u8> = Vec::new();
    let mut growing = true;
    while start.elapsed() < RUN_FOR {
        if growing {
            let block = map(step, false);
            touch(block, step);
            held.push(block);
            growing = held.len() * step < ceiling;
        } else if let Some(block) = held.pop() {
            // SAFETY: `block` was mapped above with `step` bytes.
            unsafe { libc::munmap(block as *mut libc::c_void, step) };
        } else {
            growing = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: ends the forked child without running the parent's exit path.
    unsafe { libc::_exit(0) }
}

fn run() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut root = Command::new(exe)
        .arg("--tree")
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(300));
    let me = std::process::id() as i32;
    let mut sampler = Sampler::new(DEFAULT_BUDGET);
    let mut breakdown = breakdown::Breakdown::new("forked");
    let mut bracket: Vec<(bool, f64)> = Vec::new();
    // (t, rss, sampler's pss, read in full by the sampler, reference pss)
    let mut rows: Vec<(f64, u64, u64, bool, u64)> = Vec::new();
    let start = Instant::now();
    while start.elapsed() < RUN_FOR - Duration::from_millis(500) {
        let pids = descendants(me);
        let t_s = start.elapsed().as_secs_f64();
        breakdown.before(&pids);
        let sample = sampler.sample(&pids, t_s);
        if sample.processes as usize == CHILDREN + 1 && sample.pss_bytes.is_some() {
            if let Some(tick) = breakdown.tick(t_s, sampler.processes()) {
                let read = sample.pss_estimated_processes == 0;
                rows.push((t_s, sample.rss_bytes, tick.estimated, read, tick.reference));
                bracket.push((read, tick.bracket_error_pct));
            }
        }
        std::thread::sleep(INTERVAL);
    }
    let _ = root.kill();
    let _ = root.wait();
    let reads = rows.iter().filter(|r| r.3).count();
    println!(
        "tree_pss processes={} ticks={} full_reads={} sampler_cpu_pct={:.2}",
        CHILDREN + 1,
        rows.len(),
        reads,
        100.0 * sampler.cpu_seconds() / start.elapsed().as_secs_f64()
    );
    let after: Vec<u64> = rows.iter().map(|r| r.2).collect();
    let before = interpolated(&rows);
    let reference: Vec<u64> = rows.iter().map(|r| r.4).collect();
    for (name, series) in [("before", &before), ("after", &after)] {
        let (mean_err, worst) = errors(series, &reference);
        let ok = mean_err.abs() <= 3.0 && worst <= 10.0;
        println!(
            "tree_pss {name} mean_pss_error_pct={mean_err:+.2} worst_sample_error_pct={worst:.2} \
             meets_goal={ok}"
        );
    }
    print_bracketed("tree_pss after", &bracket);
    breakdown.print("tree_pss breakdown");
    Ok(())
}

/// What the analysis did before estimates: RSS times the PSS/RSS ratio
/// interpolated linearly between the ticks that read PSS in full.
fn interpolated(rows: &[(f64, u64, u64, bool, u64)]) -> Vec<u64> {
    let reads: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.3 && r.1 > 0)
        .map(|r| (r.0, (r.2 as f64 / r.1 as f64).min(1.0)))
        .collect();
    rows.iter()
        .map(|r| {
            if r.3 {
                return r.2;
            }
            let after = reads.partition_point(|&(t, _)| t <= r.0);
            let ratio = match (after.checked_sub(1).map(|i| reads[i]), reads.get(after)) {
                (Some((t0, r0)), Some(&(t1, r1))) if t1 > t0 => {
                    r0 + (r1 - r0) * (r.0 - t0) / (t1 - t0)
                }
                (Some((_, r0)), _) => r0,
                (None, Some(&(_, r1))) => r1,
                (None, None) => 1.0,
            };
            (r.1 as f64 * ratio).round() as u64
        })
        .collect()
}

/// (error of the mean in %, largest error of one sample in %).
fn errors(series: &[u64], reference: &[u64]) -> (f64, f64) {
    let mean = |v: &[u64]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
    let mean_err = 100.0 * (mean(series) - mean(reference)) / mean(reference).max(1.0);
    let worst = series
        .iter()
        .zip(reference)
        .map(|(&s, &r)| 100.0 * (s as f64 - r as f64).abs() / (r as f64).max(1.0))
        .fold(0.0, f64::max);
    (mean_err, worst)
}

/// The worst error outside the range read just before and just after each
/// tick, over estimated ticks and over ticks the sampler read in full.
pub fn print_bracketed(prefix: &str, ticks: &[(bool, f64)]) {
    let worst = |read: bool| {
        ticks
            .iter()
            .filter(|t| t.0 == read)
            .map(|t| t.1)
            .fold(0.0, f64::max)
    };
    let (estimated, read) = (worst(false), worst(true));
    println!(
        "{prefix} worst_estimated_sample_outside_bracket_pct={estimated:.2} \
         worst_read_sample_outside_bracket_pct={read:.2} meets_goal={}",
        estimated.max(read) <= 10.0
    );
}
