//! The table's heap block (`compare --heap`): per configuration, the probe's
//! mode, the median live heap (time-weighted mean and peak), the overhead
//! ratio RSS / live heap, the most arenas and the probe threads' CPU time.

use allocscope_analyze::heap::HeapSummary;
use allocscope_analyze::types::Analysis;
use allocscope_core::units::{ColumnUnit, Unit};
use std::fmt::Write;

const TITLE: &str = "heap probe (medians)";

pub(crate) fn heap_block(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
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
    // One unit per column, the same for every configuration.
    let column = |unit: Unit, pick: fn(&HeapSummary) -> Option<f64>| {
        let unit = ColumnUnit::for_values(unit, analysis.heap.iter().filter_map(pick));
        move |h: &HeapSummary| pick(h).map_or("-".to_string(), |v| unit.show(v))
    };
    let mean_live = column(Unit::Bytes, |h| h.mean_live_heap_bytes);
    let peak_live = column(Unit::Bytes, |h| h.peak_live_heap_bytes);
    let probe_cpu = column(Unit::Seconds, |h| h.probe_cpu_s);
    for (config, h) in analysis.experiment.configs.iter().zip(&analysis.heap) {
        let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
        let line = format!(
            "  {:<width$}  {:<10}  {:>10}  {:>10}  {:>9}  {:>6}  {:>9}",
            config.config.name,
            h.probe_mode.as_deref().unwrap_or("-"),
            mean_live(h),
            peak_live(h),
            cell(h.mean_overhead_ratio, &|r| format!("{r:.2}x")),
            cell(h.arenas_max, &|a| format!("{a:.0}")),
            probe_cpu(h),
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_analyze::analyze;
    use allocscope_core::fixture;

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
            .enumerate()
            .map(|(i, _)| HeapSummary {
                probe_mode: Some("stats".into()),
                runs: 3,
                peak_live_heap_bytes: Some(160.0 * 1048576.0),
                // The second holds under 1 MiB: still in the column's MiB.
                mean_live_heap_bytes: Some(if i == 1 {
                    900.0 * 1024.0
                } else {
                    137.0 * 1048576.0
                }),
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
        assert!(lines[2].ends_with(" 22.7 ms"), "{out}");
        assert!(
            lines[2].contains(" 137 MiB ")
                && lines[2].contains(" 160 MiB ")
                && lines[2].contains(" 16 "),
            "{out}"
        );
        assert!(lines[3].contains(" 0.879 MiB "), "{out}");
        Ok(())
    }
}
