//! Recordings side by side: per recording its figures and steady state
//! (`steady`), and the level of each at the same elapsed times as the
//! first one, the baseline ("4.8 GiB against 10 GiB after two months").

use super::steady::{level_at, steady_state, SteadyState};
use allocscope_core::recorded::{Recording, RecordingInfo};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct RecordingSummary {
    pub info: RecordingInfo,
    /// Raw samples behind the stored points.
    pub samples: u64,
    pub peak_rss_bytes: u64,
    pub last_rss_bytes: Option<u64>,
    pub last_pss_bytes: Option<u64>,
    /// Of the RSS (per-point means), `None` with too few points.
    pub steady: Option<SteadyState>,
}

/// Every recording's RSS level at one elapsed time (`None` where a
/// recording has no point that early).
#[derive(Debug, Clone, Serialize)]
pub struct SameTime {
    pub at_s: f64,
    pub rss_bytes: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecordingsAnalysis {
    pub summaries: Vec<RecordingSummary>,
    /// A quarter, half and all of the shortest recording's elapsed time.
    pub same_time: Vec<SameTime>,
    /// The recordings themselves, for the plots.
    #[serde(skip)]
    pub recordings: Vec<Recording>,
}

pub fn analyze_recordings(recordings: Vec<Recording>) -> RecordingsAnalysis {
    // Each recording's RSS means as `(t_s, bytes)`, at the middle of their span.
    let rss_series = |r: &Recording| -> Vec<(f64, f64)> {
        (r.points.iter())
            .map(|p| (p.t_s + p.span_s / 2.0, p.rss_mean_bytes as f64))
            .collect()
    };
    let series: Vec<Vec<(f64, f64)>> = recordings.iter().map(rss_series).collect();
    let summaries = recordings
        .iter()
        .zip(&series)
        .map(|(r, s)| RecordingSummary {
            info: r.info.clone(),
            samples: r.points.iter().map(|p| p.samples).sum(),
            peak_rss_bytes: r.points.iter().map(|p| p.rss_max_bytes).max().unwrap_or(0),
            last_rss_bytes: r.points.last().map(|p| p.rss_mean_bytes),
            last_pss_bytes: r.points.iter().rev().find_map(|p| p.pss_mean_bytes),
            steady: steady_state(s),
        })
        .collect();
    let common = series
        .iter()
        .map(|s| s.last().map_or(0.0, |p| p.0))
        .fold(f64::INFINITY, f64::min);
    let same_time = if common.is_finite() && common > 0.0 {
        [0.25, 0.5, 1.0]
            .iter()
            .map(|share| {
                let at_s = common * share;
                SameTime {
                    at_s,
                    rss_bytes: series.iter().map(|s| level_at(s, at_s)).collect(),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    RecordingsAnalysis {
        summaries,
        same_time,
        recordings,
    }
}
