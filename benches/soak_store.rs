//! What a week-long soak of 10 instances costs in store size, as plain
//! `name key=value` lines: each instance a recording of its own, sampled
//! every second for `DAYS` (default 7) with every column a launched
//! instance fills (the breakdown, the live heap, the cgroup's figures), and
//! appended through `Store::append_samples` with its roll-up into minute
//! and hour buckets, as the soak's `Appender` does. The samples go in a
//! simulated minute at a time per instance (the roll-up is the same, and the
//! week takes minutes, not hours). The store lives in `$ALLOCSCOPE_BENCH_DIR`
//! (default /dev/shm). Printed: the store's size on disk (database plus WAL)
//! after a day and at the end, against the 100 MiB a week may take; and
//! what the live page (`--html`, rewritten every `--report-every`) costs at
//! the week's end: the CPU time of one rewrite from the store (the median of
//! `PAGE_RENDERS`), as a share of a core at the default 1 min period,
//! against the 1% it may take.

use allocscope_core::model::{Breakdown, CgroupSample, Sample};
use allocscope_core::sample::machine_cpu::rusage_cpu_seconds;
use allocscope_core::store::{Ending, NewRecording, Store};
use simulated::{own_memory_kib, simulated};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "common/simulated.rs"]
mod simulated;

const INSTANCES: usize = 10;
const BUDGET_MIB: f64 = 100.0;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    let days: u64 = std::env::var("DAYS")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(7);
    let base = std::env::var_os("ALLOCSCOPE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm"));
    let dir = tempfile::tempdir_in(base)?;
    let path = dir.path().join("soak.db");
    let mut store = Store::open(&path)?;
    let (soak, _) = store.begin_soak(&["soak".into(), "--".into(), "./service".into()])?;
    let mut ids = Vec::with_capacity(INSTANCES);
    for i in 1..=INSTANCES {
        let new = NewRecording {
            name: format!("soak glibc#{i}"),
            config: "glibc".into(),
            env: vec![],
            command: Some(vec!["./service".into()]),
            target_pid: i as i32,
            target_start: 1,
            interval_ms: 1000,
            hostname: "bench".into(),
            soak_id: Some(soak),
        };
        ids.push(store.begin_recording(&new)?.0);
    }
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for minute in 0..days * 1440 {
        for &id in &ids {
            let samples: Vec<Sample> = (minute * 60..(minute + 1) * 60)
                .map(|t| launched(simulated(t, &mut rng)))
                .collect();
            store.append_samples(id, &samples)?;
        }
        if minute + 1 == 1440 {
            report(&path, "soak_store_24h_10x1s");
        }
    }
    let ending = Ending {
        status: "complete",
        exit_code: None,
        signal: None,
        message: None,
    };
    for &id in &ids {
        store.finish_recording(id, &ending)?;
    }
    report(&path, &format!("soak_store_{days}d_10x1s"));
    page_cost(
        &store,
        soak,
        dir.path(),
        &format!("soak_live_page_{days}d_10x1s"),
    )
}

/// Rewrites of the live page timed at the week's end.
const PAGE_RENDERS: usize = 5;
/// The live page's default period (`soak --report-every`).
const PAGE_EVERY_S: f64 = 60.0;

/// The CPU time of rewriting soak `soak`'s live page, as the soak does it
/// every `--report-every` (load from the store, judge, render, write).
fn page_cost(store: &Store, soak: i64, dir: &Path, name: &str) -> anyhow::Result<()> {
    let page = dir.join("soak.html");
    let mut cpu_s = Vec::with_capacity(PAGE_RENDERS);
    for _ in 0..PAGE_RENDERS {
        let before = rusage_cpu_seconds(libc::RUSAGE_SELF);
        allocscope_soak::live::write_page(store, soak, &page, Some(Duration::from_secs(60)))?;
        cpu_s.push(rusage_cpu_seconds(libc::RUSAGE_SELF) - before);
    }
    cpu_s.sort_by(f64::total_cmp);
    let median = cpu_s[PAGE_RENDERS / 2];
    let share_pct = 100.0 * median / PAGE_EVERY_S;
    println!(
        "{name} page_cpu_ms={:.1} page_kib={:.0} share_of_core_at_1m_pct={share_pct:.3} \
         budget_pct=1 within_budget={}",
        1e3 * median,
        std::fs::metadata(&page).map_or(0, |m| m.len()) as f64 / 1024.0,
        share_pct < 1.0
    );
    Ok(())
}

/// The sample with what a launched instance adds: its breakdown and live
/// heap from the heap probe, its cgroup's charge and working set.
fn launched(sample: Sample) -> Sample {
    let rss = sample.rss_bytes;
    Sample {
        live_heap_bytes: Some(rss / 2),
        breakdown: Some(Breakdown {
            live_heap_bytes: rss / 2,
            allocator_free_bytes: rss / 4,
            allocator_metadata_bytes: rss / 64,
            other_anon_bytes: rss / 8,
            file_bytes: rss / 16,
            ..Breakdown::default()
        }),
        cgroup: Some(CgroupSample {
            charge_bytes: rss + (rss >> 4),
            working_set_bytes: rss,
            anon_bytes: rss - (rss >> 4),
            file_bytes: rss >> 4,
            ..CgroupSample::default()
        }),
        ..sample
    }
}

fn report(path: &Path, name: &str) {
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let mib = (size(path) + size(&wal)) as f64 / 1048576.0;
    let (rss_kib, _) = own_memory_kib();
    println!(
        "{name} store_mib={mib:.2} budget_mib={BUDGET_MIB} within_budget={} bench_rss_mib={:.1}",
        mib < BUDGET_MIB,
        rss_kib / 1024.0
    );
}
