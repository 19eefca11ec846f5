//! The table's heap block (`compare --heap`): per configuration, the probe's
//! mode, the median live heap (time-weighted mean and peak), the overhead
//! ratio RSS / live heap, the most arenas and the probe threads' CPU time.

use super::format::{duration, size};
use crate::analyze::types::Analysis;
use std::fmt::Write;

const TITLE: &str = "heap probe (medians)";

pub fn heap_block(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    if analysis.heap.is_empty() {
        return Ok(());
    }
    // The title heads the name column, which widens for a long title.
    let width = width.max(TITLE.len().saturating_sub(2));
    writeln!(out)?;
    writeln!(
        out,
        "{TITLE:<w$}  {:<10}  {:>10}  {:>10}  {:>9}  {:>6}  {:>9}",
        "mode",
        "mean live",
        "peak live",
        "RSS/live",
        "arenas",
        "probe CPU",
        w = width + 2
    )?;
    for (config, h) in analysis.experiment.configs.iter().zip(&analysis.heap) {
        let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
        let line = format!(
            "  {:<width$}  {:<10}  {:>10}  {:>10}  {:>9}  {:>6}  {:>9}",
            config.config.name,
            h.probe_mode.as_deref().unwrap_or("-"),
            cell(h.mean_live_heap_bytes, &size),
            cell(h.peak_live_heap_bytes, &size),
            cell(h.mean_overhead_ratio, &|r| format!("{r:.2}x")),
            cell(h.arenas_max, &|a| format!("{a:.0}")),
            cell(h.probe_cpu_s, &duration),
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::heap::HeapSummary;
    use crate::analyze::{analyze, fixture};

    #[test]
    fn heap_block_shows_mode_live_heap_ratio_and_arenas_per_config() -> anyhow::Result<()> {
        let experiment = fixture::experiment();
        let baseline = experiment.configs[0].config.name.clone();
        let mut analysis = analyze(experiment, &baseline)?;
        let mut out = String::new();
        heap_block(&mut out, &analysis, 12)?;
        assert!(out.is_empty(), "no heap block without the probe: {out}");
        analysis.heap = analysis
            .experiment
            .configs
            .iter()
            .map(|_| HeapSummary {
                probe_mode: Some("stats".into()),
                runs: 3,
                peak_live_heap_bytes: Some(160.0 * 1048576.0),
                mean_live_heap_bytes: Some(137.0 * 1048576.0),
                mean_overhead_ratio: Some(2.69),
                arenas_max: Some(16.0),
                arenas_process: Some("db_bench 4321".into()),
                probe_cpu_s: Some(0.0227),
            })
            .collect();
        heap_block(&mut out, &analysis, 12)?;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "");
        assert!(lines[1].starts_with("heap probe (medians)  mode"), "{out}");
        assert_eq!(lines.len(), 2 + analysis.experiment.configs.len());
        assert!(
            lines[2].contains("stats") && lines[2].contains("2.69x"),
            "{out}"
        );
        assert!(
            lines[2].contains("137.0 MiB") && lines[2].contains(" 16 "),
            "{out}"
        );
        Ok(())
    }
}
