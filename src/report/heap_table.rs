//! The table's heap block (`compare --heap`): per configuration, the probe's
//! mode, the median live heap (time-weighted mean and peak), the overhead
//! ratio RSS / live heap, the most arenas and the probe's CPU time.

use super::format::{duration, size};
use crate::analyze::types::Analysis;
use std::fmt::Write;

pub fn heap_block(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    if analysis.heap.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{:<w$}  {:<10}  {:>10}  {:>10}  {:>9}  {:>6}  {:>9}",
        "heap probe (medians)",
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
        writeln!(
            out,
            "  {:<w$}  {:<10}  {:>10}  {:>10}  {:>9}  {:>6}  {:>9}",
            config.config.name,
            h.probe_mode.as_deref().unwrap_or("-"),
            cell(h.mean_live_heap_bytes, &size),
            cell(h.peak_live_heap_bytes, &size),
            cell(h.mean_overhead_ratio, &|r| format!("{r:.2}x")),
            cell(h.arenas_max, &|a| format!("{a:.0}")),
            cell(h.probe_cpu_s, &duration),
            w = width
        )?;
    }
    writeln!(out)
}
