//! The sampler on this test process and short-lived children: what a tick
//! reads, how the budget spaces out PSS passes, vanished and zombie pids.

use super::counters::Counters;
use super::pss::{exited, PssReader};
use super::pss_estimate::Live;
use super::*;
use std::process::{Command, Stdio};
use std::time::Duration;

fn own_pid() -> i32 {
    std::process::id() as i32
}

/// A child that exits at once, left for the caller to reap.
fn spawn_true() -> std::process::Child {
    Command::new("true")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn true")
}

#[test]
fn first_sample_always_reads_pss() {
    let mut sampler = Sampler::new(0.0);
    let sample = sampler.sample(&[own_pid()], 0.0);
    assert_eq!(sample.processes, 1);
    assert!(sample.rss_bytes > 0 && sample.vsz_bytes >= sample.rss_bytes);
    assert!(sample.threads >= 1);
    let pss = sample.pss_bytes.expect("first call reads PSS");
    // A process's PSS is at most its RSS; other tests in this process
    // allocate between the tick's status and the rollup, so against the
    // larger of it and the status read just after the rollup.
    let after = sampler.processes()[0].rss.total_bytes();
    assert!(pss > 0 && pss <= sample.rss_bytes.max(after) + 1024 * 1024);
    assert!(sample.uss_bytes.is_some() && sample.swap_bytes.is_some());
    assert_eq!(sampler.pss_reads(), 1);
    assert_eq!(sample.pss_estimated_processes, 0);
    // A zero budget allows no further reads: PSS is estimated.
    std::thread::sleep(Duration::from_millis(5));
    let estimated = sampler.sample(&[own_pid()], 0.1);
    assert_eq!(estimated.pss_estimated_processes, 1);
    assert_eq!(estimated.uss_bytes, None);
    let est = estimated.pss_bytes.expect("estimated PSS");
    // Other tests in this process allocate meanwhile: only bounds hold.
    assert!(est > 0 && est <= estimated.rss_bytes, "{est} against {pss}");
    assert_eq!(sampler.pss_reads(), 1);
    assert!(sampler.cpu_seconds() > 0.0);
    assert_eq!(sampler.ticks(), 2);
}

#[test]
fn a_tick_reads_the_trees_cpu_time_and_it_only_grows() {
    let mut sampler = Sampler::new(0.0);
    let before = sampler.sample(&[own_pid()], 0.0).cpu_s.expect("read");
    // Spin this thread for 50 ms of its own CPU.
    let spin = std::time::Instant::now();
    let mut x = 0u64;
    while spin.elapsed() < Duration::from_millis(50) {
        x = std::hint::black_box(x.wrapping_add(1));
    }
    let after = sampler.sample(&[own_pid()], 0.1).cpu_s.expect("read");
    // Clock ticks of 10 ms; other tests' threads add their own.
    assert!(after - before >= 0.03, "{before} then {after}");
    assert_eq!(
        sampler.sample(&[], 0.2).cpu_s,
        None,
        "no process, no figure"
    );
}

#[test]
fn budget_spaces_out_pss_reads() {
    // 0.1% of a core: a read costing >= 10 µs waits >= 10 ms.
    let mut sampler = Sampler::new(0.001);
    let mut with_pss = 0;
    for i in 0..20 {
        let sample = sampler.sample(&[own_pid()], f64::from(i));
        assert!(sample.pss_bytes.is_some());
        if sample.pss_estimated_processes == 0 {
            with_pss += 1;
        }
    }
    assert_eq!(with_pss, sampler.pss_reads());
    assert!(sampler.pss_reads() < 20, "read PSS on every tick");
}

#[test]
fn charged_cpu_counts_against_the_budget() {
    // After the first pass, the bucket holds the next one with a
    // millisecond to spare for the tick's cheap reads, and the floor
    // nothing: a tick reads PSS unless the caller charged more than
    // that (a tree walk) in between.
    let next_tick = |charged_s: f64| {
        let mut sampler = Sampler::new(0.001);
        sampler.sample(&[own_pid()], 0.0);
        assert_eq!(sampler.budget.floor_tokens_s, 0.0);
        sampler.budget.tokens_s = 2.0 * sampler.budget.last_pass_s + 0.001;
        sampler.charge(charged_s);
        let sample = sampler.sample(&[own_pid()], 0.1);
        (sampler.pss_reads(), sample.pss_estimated_processes)
    };
    assert_eq!(next_tick(0.0), (2, 0), "the bucket held a pass");
    assert_eq!(next_tick(1.0), (1, 1), "the charge did not defer the pass");
}

#[test]
fn generous_budget_reads_pss_when_due() {
    let mut sampler = Sampler::new(1.0);
    sampler.sample(&[own_pid()], 0.0);
    std::thread::sleep(Duration::from_millis(20));
    let sample = sampler.sample(&[own_pid()], 0.02);
    assert!(sample.pss_bytes.is_some() && sample.uss_bytes.is_some());
    assert_eq!(sampler.pss_reads(), 2);
}

#[test]
fn vanished_pids_are_skipped_not_errors() {
    let mut sampler = Sampler::new(0.01);
    let sample = sampler.sample(&[own_pid(), i32::MAX], 0.0);
    assert_eq!(sample.processes, 1);
    assert!(sample.pss_bytes.is_some());
    let empty = sampler.sample(&[i32::MAX], 1.0);
    assert_eq!((empty.processes, empty.rss_bytes), (0, 0));
}

#[test]
fn zombie_counts_as_process_without_spoiling_pss() {
    let mut child = spawn_true();
    let pid = child.id() as i32;
    // Not yet reaped: wait until it is a zombie.
    for _ in 0..200 {
        if proc::read_stat(pid).is_some_and(|s| s.state == 'Z') {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let sample = Sampler::new(0.01).sample(&[own_pid(), pid], 0.0);
    let _ = child.wait();
    assert_eq!(sample.processes, 2);
    assert!(sample.pss_bytes.is_some());
}

#[test]
fn a_process_that_exits_during_a_pass_is_left_out_not_a_failed_read() {
    let mut child = spawn_true();
    let gone = child.id() as i32;
    let _ = child.wait();
    assert!(exited(gone));
    assert!(!exited(own_pid()));
    let status = |pid: i32| {
        proc::read_status_memory(pid)
            .and_then(|m| m.rss_parts)
            .unwrap_or_default()
    };
    let me = Live {
        pid: own_pid(),
        ppid: 1,
        family: 1,
        rss: status(own_pid()),
    };
    // The tick's status read saw both; by the pass one had exited.
    let tree = [me, Live { pid: gone, ..me }];
    let (mut reader, mut counters) = (PssReader::default(), Counters::default());
    let (pss, _, _) = reader
        .read_pss_totals(&mut counters, &tree, true)
        .expect("a sum");
    let alone = proc::read_smaps_rollup(own_pid()).expect("own rollup");
    assert!(pss.abs_diff(alone.pss_bytes) < alone.pss_bytes / 10);
    assert_eq!(reader.processes.len(), 1);
    // A pass that found every process gone has no sum.
    assert!(reader
        .read_pss_totals(&mut counters, &tree[1..], true)
        .is_none());
}

#[test]
fn without_the_heap_probe_a_sample_has_no_breakdown() {
    let mut sampler = Sampler::new(0.01);
    let sample = sampler.sample(&[own_pid()], 0.0);
    assert!(sample.rss_bytes > 0);
    assert_eq!((sample.breakdown, sample.heapless_processes), (None, 0));
}
