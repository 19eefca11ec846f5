//! The breakdown in the JSON and CSV exports: per run at its mean and peak,
//! per sample in the timeline and the samples CSV, with the part names of
//! `model::Breakdown`; absent (or empty cells) where a run had none.

use super::*;
use allocscope_analyze::analyze;
use allocscope_core::fixture;
use allocscope_core::model::{Breakdown, StoredExperiment};
use anyhow::{Context, Result};

const MIB: u64 = 1 << 20;

/// The fixture with a breakdown on every sample of the baseline's runs:
/// RSS split into 40% live, 10% free and the rest other anonymous memory,
/// with one process without allocator figures on the last sample.
fn with_breakdowns() -> StoredExperiment {
    let mut e = fixture::experiment();
    for run in &mut e.configs[0].runs {
        let n = run.record.samples.len();
        for (i, s) in run.record.samples.iter_mut().enumerate() {
            let (live, free) = (s.rss_bytes / 10 * 4, s.rss_bytes / 10);
            s.breakdown = Some(Breakdown {
                live_heap_bytes: live,
                allocator_free_bytes: free,
                other_anon_bytes: s.rss_bytes - live - free - MIB,
                file_bytes: MIB,
                ..Breakdown::default()
            });
            s.heapless_processes = u32::from(i + 1 == n);
        }
    }
    e
}

#[test]
fn json_gives_each_run_its_breakdown_at_mean_and_peak() -> Result<()> {
    let analysis = analyze(with_breakdowns(), "glibc")?;
    let bytes = JsonReporter {
        include_samples: true,
    }
    .render(&analysis)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)?;
    let run = &v["configs"][0]["runs"][0];
    let breakdown = &run["breakdown"];
    for at in ["mean", "peak"] {
        let parts = breakdown[at].as_object().context("an object")?;
        let mut keys: Vec<&str> = parts.keys().map(String::as_str).collect();
        let mut expected = Breakdown::KEYS.to_vec();
        keys.sort();
        expected.sort();
        assert_eq!(keys, expected, "{at}");
    }
    // The peak is the split of the peak tick; the mean adds up to the mean RSS.
    let sum = |at: &str| -> u64 {
        Breakdown::KEYS
            .iter()
            .filter_map(|k| breakdown[at][k].as_u64())
            .sum()
    };
    let timeline = run["timeline"].as_array().context("a timeline")?;
    let peak_tick = timeline
        .iter()
        .filter_map(|s| s["rss_bytes"].as_u64())
        .max();
    assert_eq!(Some(sum("peak")), peak_tick);
    let mean_rss = run["mean_rss_bytes"].as_u64().context("mean RSS")?;
    assert!(
        sum("mean").abs_diff(mean_rss) <= 8,
        "{} vs {mean_rss}",
        sum("mean")
    );
    assert_eq!(breakdown["heapless_processes"], 1);
    assert!(run["timeline"][0]["breakdown"]["live_heap_bytes"]
        .as_u64()
        .is_some());
    // A run without breakdowns has no key.
    assert!(v["configs"][1]["runs"][0].get("breakdown").is_none());
    Ok(())
}

#[test]
fn samples_csv_has_the_breakdown_columns_and_empty_cells_without_one() -> Result<()> {
    let analysis = analyze(with_breakdowns(), "glibc")?;
    let text = String::from_utf8(SamplesCsvReporter.render(&analysis)?)?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().context("a header")?.split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .context(name.to_string())
    };
    let (live, file, heapless) = (
        column("breakdown_live_heap_bytes")?,
        column("breakdown_file_bytes")?,
        column("heapless_processes")?,
    );
    assert_eq!(
        header
            .iter()
            .filter(|h| h.starts_with("breakdown_"))
            .count(),
        Breakdown::COUNT
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let first = &rows[0];
    let rss: u64 = first[3].parse()?;
    assert_eq!(first[live], (rss / 10 * 4).to_string());
    assert_eq!(
        (first[file], first[heapless]),
        (MIB.to_string().as_str(), "0")
    );
    let other = rows
        .iter()
        .find(|r| r[0] != "glibc")
        .context("another config")?;
    assert_eq!((other[live], other[heapless]), ("", ""));
    Ok(())
}

#[test]
fn summary_csv_has_the_median_runs_breakdown_at_mean_and_peak() -> Result<()> {
    let experiment = with_breakdowns();
    let (_, median) = allocscope_analyze::cause::median_run(&experiment.configs[0])
        .context("the baseline's runs have breakdowns")?;
    let analysis = analyze(experiment, "glibc")?;
    let text = String::from_utf8(CsvReporter.render(&analysis)?)?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().context("a header")?.split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .context(name.to_string())
    };
    let (mean_live, peak_file) = (
        column("breakdown_mean_live_heap_bytes")?,
        column("breakdown_peak_file_bytes")?,
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mean = median.breakdown_mean.context("a mean")?;
    assert_eq!(rows[0][mean_live], mean.live_heap_bytes.to_string());
    assert_eq!(rows[0][peak_file], MIB.to_string());
    assert_eq!((rows[1][mean_live], rows[1][peak_file]), ("", ""));
    Ok(())
}
