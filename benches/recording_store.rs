//! What a long recording costs in store size, allocscope memory and report
//! time, as plain `name key=value` lines.
//!
//! A simulated month of one-second samples of a 10-process tree (RSS climbing
//! from 1 GiB to 4.8 GiB over ten days, then level with noise; PSS on every
//! fifth sample) goes through exactly the storage path `record` uses:
//! `Store::append_samples` once per simulated second, each its own
//! transaction with the roll-up into minute and hour buckets. The store
//! lives in `$ALLOCSCOPE_BENCH_DIR` (default: /dev/shm, where fsync is free,
//! so the month takes minutes rather than hours; the SQL is the same).
//! Printed after 24 hours and after the month: the store's size on disk
//! (database plus WAL), this process's RSS and peak RSS (everything the
//! storage path keeps), and the time to load, analyse and render the
//! `report --recordings` text, SVG and PNG plots. `DAYS=N` shortens the month.

use allocscope_analyze::recordings::analyze_recordings;
use allocscope_core::store::{Ending, NewRecording, Store};
use allocscope_report::png;
use allocscope_report::recordings::render_text;
use allocscope_report::svg::recordings as plots;
use simulated::{own_memory_kib, simulated};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "common/simulated.rs"]
mod simulated;

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
        .unwrap_or(30);
    let base = std::env::var_os("ALLOCSCOPE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm"));
    let dir = tempfile::tempdir_in(base)?;
    let path = dir.path().join("month.db");
    let mut store = Store::open(&path)?;
    let new = NewRecording {
        name: "simulated".into(),
        config: "glibc".into(),
        env: vec![],
        command: Some(vec!["./service".into()]),
        target_pid: 1,
        target_start: 1,
        interval_ms: 1000,
        hostname: "bench".into(),
        soak_id: None,
    };
    let (id, _) = store.begin_recording(&new)?;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let start = Instant::now();
    for t in 0..days * 86400 {
        store.append_samples(id, &[simulated(t, &mut rng)])?;
        if t + 1 == 86400 {
            report(&store, &path, id, "recording_24h_1s_10proc", start)?;
        }
    }
    store.finish_recording(
        id,
        &Ending {
            status: "complete",
            exit_code: None,
            signal: None,
            message: None,
        },
    )?;
    report(
        &store,
        &path,
        id,
        &format!("recording_{days}d_1s_10proc"),
        start,
    )?;
    Ok(())
}

fn report(store: &Store, path: &Path, id: i64, name: &str, start: Instant) -> anyhow::Result<()> {
    let fed_s = start.elapsed().as_secs_f64();
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let (db_bytes, wal_bytes) = (size(path), size(&wal));
    let render_start = Instant::now();
    let analysis = analyze_recordings(vec![store.load_recording(id)?]);
    let text = render_text(&analysis);
    let svgs: Vec<String> = plots::all(&analysis).into_iter().map(|p| p.svg).collect();
    let text_svg_s = render_start.elapsed().as_secs_f64();
    for svg in &svgs {
        png::render(svg, 1.5)?;
    }
    let with_png_s = render_start.elapsed().as_secs_f64();
    let (rss_kib, hwm_kib) = own_memory_kib();
    println!(
        "{name} store_mib={:.2} db_mib={:.2} wal_mib={:.2} points={} allocscope_rss_mib={:.1} allocscope_peak_rss_mib={:.1} \
         report_text_svg_s={text_svg_s:.3} report_with_png_s={with_png_s:.3} feed_s={fed_s:.1}",
        (db_bytes + wal_bytes) as f64 / 1048576.0,
        db_bytes as f64 / 1048576.0,
        wal_bytes as f64 / 1048576.0,
        analysis.recordings[0].points.len(),
        rss_kib / 1024.0,
        hwm_kib / 1024.0,
    );
    if text.is_empty() {
        anyhow::bail!("the report is empty");
    }
    Ok(())
}
