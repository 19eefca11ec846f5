//! The figures a soak's exports show, one row per instance and one per
//! configuration (its replicas combined): level, growth (slope) with its
//! interval, settled or when it would, projections to a day and a week, the
//! live heap's and the allocator's free memory's growth, and for a
//! configuration its plateau against the baseline's. One list of named
//! columns, which the CSV and the JSON both read.

use crate::config::combine;
use crate::growth::{Growth, Settling};
use crate::instance::InstanceSummary;
use crate::projection::{horizons, Basis, Horizon, Reach, HORIZONS_S};
use crate::verdict::{combined, Verdict};
use allocscope_analyze::figures::{Estimate, Ratio};

/// A column's value: a number (absent when unknown) or a word.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Number(Option<f64>),
    Text(String),
}

/// One row: the configuration, the instance (`None` for the configuration's
/// row) and its figures.
pub struct Row {
    pub config: String,
    pub instance: Option<String>,
    pub figures: Figures,
}

/// One instance's or configuration's figures.
pub struct Figures {
    pub replicas: usize,
    pub level: Estimate,
    pub level_at_s: f64,
    /// Its segment's first and last sample times (a configuration: the
    /// replicas' means).
    pub start_s: f64,
    pub end_s: f64,
    /// Where its growth window starts (after the warm-up).
    pub window_start_s: f64,
    pub growth: Growth,
    pub settling: Settling,
    pub settles_after_s: Option<f64>,
    pub live_heap: Option<Growth>,
    pub allocator_free: Option<Growth>,
    /// A configuration's plateau over the baseline's.
    pub ratio: Option<Ratio>,
    /// CPU time per second over its growth window, in cores (a
    /// configuration: its replicas' mean).
    pub cpu_cores: Option<f64>,
    /// A configuration's CPU time over the baseline's.
    pub cpu_ratio: Option<Ratio>,
    /// Its load's figures (`--metric`): an instance's median reading over
    /// its growth window, a configuration's the mean of its replicas' with
    /// its ratio to the baseline's.
    pub load: Vec<LoadColumn>,
}

/// One load figure of a row.
pub struct LoadColumn {
    pub name: String,
    pub value: f64,
    pub ratio: Option<Ratio>,
}

impl Figures {
    /// Flat at least since its recent window began, when on a plateau.
    pub fn settled_at_s(&self) -> Option<f64> {
        (self.settling == Settling::Plateau).then_some(self.window_start_s - self.start_s)
    }

    /// The projections to a day and a week, each `None` once reached.
    pub fn projections(&self) -> [Option<Horizon>; 2] {
        let at = horizons(&Basis {
            level: self.level,
            level_at_s: self.level_at_s,
            growth: self.growth,
            settling: self.settling,
            start_s: self.start_s,
            window_start_s: self.window_start_s,
            end_s: self.end_s,
        });
        HORIZONS_S.map(|h| at.iter().find(|p| p.age_s == h).copied())
    }
}

/// The rows of `groups` (each configuration's instances, named, with their
/// summaries): per configuration its row, then its instances'.
pub fn rows(
    groups: &[(String, Vec<(String, InstanceSummary)>)],
    verdict: Option<&Verdict>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (label, instances) in groups {
        let summaries: Vec<InstanceSummary> = instances.iter().map(|i| i.1.clone()).collect();
        if let Some(c) = combine(&summaries) {
            let judged = verdict.and_then(|v| v.configs.iter().find(|c| &c.label == label));
            rows.push(Row {
                config: label.clone(),
                instance: None,
                figures: Figures {
                    replicas: c.replicas,
                    level: c.level,
                    level_at_s: c.level_at_s,
                    start_s: c.start_s,
                    end_s: c.end_s,
                    window_start_s: c.window_start_s,
                    growth: c.growth,
                    settling: c.settling,
                    settles_after_s: c.settles_after_s,
                    live_heap: combined(&summaries, |r| r.live_heap_growth),
                    allocator_free: combined(&summaries, |r| r.allocator_free_growth),
                    ratio: judged
                        .and_then(|j| j.separation.as_ref())
                        .map(|s| s.plateau_ratio),
                    cpu_cores: judged.and_then(|j| j.cpu.as_ref()).map(|c| c.cores),
                    cpu_ratio: judged.and_then(|j| j.cpu.as_ref()).and_then(|c| c.ratio),
                    load: (judged.map_or(&[][..], |j| &j.load).iter())
                        .map(|l| LoadColumn {
                            name: l.name.clone(),
                            value: l.value,
                            ratio: l.ratio,
                        })
                        .collect(),
                },
            });
        }
        for (name, s) in instances {
            rows.push(Row {
                config: label.clone(),
                instance: Some(name.clone()),
                figures: Figures {
                    replicas: 1,
                    level: s.plateau,
                    level_at_s: s.plateau_at_s,
                    start_s: s.start_s,
                    end_s: s.end_s,
                    window_start_s: s.window_start_s,
                    growth: s.growth,
                    settling: s.settling,
                    settles_after_s: s.settles_after_s,
                    live_heap: s.live_heap_growth,
                    allocator_free: s.allocator_free_growth,
                    ratio: None,
                    cpu_cores: s.cpu_cores,
                    cpu_ratio: None,
                    load: (s.load.iter())
                        .map(|f| LoadColumn {
                            name: f.name.clone(),
                            value: f.median,
                            ratio: None,
                        })
                        .collect(),
                },
            });
        }
    }
    rows
}

impl Row {
    /// Its named columns, in order: what the CSV and the JSON show.
    pub fn columns(&self) -> Vec<(&'static str, Cell)> {
        let of = &self.figures;
        let n = |v: f64| Cell::Number(Some(v));
        let opt = Cell::Number;
        let mut out = vec![
            ("replicas", n(of.replicas as f64)),
            ("level_bytes", n(of.level.median)),
            ("level_ci_low_bytes", n(of.level.ci_low)),
            ("level_ci_high_bytes", n(of.level.ci_high)),
            ("slope_bytes_per_h", n(of.growth.per_hour)),
            ("slope_ci_low_bytes_per_h", n(of.growth.ci_low)),
            ("slope_ci_high_bytes_per_h", n(of.growth.ci_high)),
            ("settling", Cell::Text(of.settling.word().into())),
            ("settled_at_s", opt(of.settled_at_s())),
            ("settles_after_s", opt(of.settles_after_s)),
        ];
        // Each a value with its interval, or three blanks; beside it how
        // far it reaches and why a blank is blank.
        let horizons = of.projections();
        for (h, names) in horizons
            .iter()
            .zip([PROJECTION_24H_REACH, PROJECTION_7D_REACH])
        {
            out.push((names[0], Cell::Text(reach_word(*h).into())));
            out.push((names[1], opt(h.map(|h| h.factor))));
        }
        out.push(("growth_estimated_from_s", n(of.end_s - of.window_start_s)));
        let [day, week] = horizons.map(|h| match h.map(|h| h.reach) {
            Some(Reach::Projected(p)) => Some([p.value, p.ci_low, p.ci_high]),
            _ => None,
        });
        let slope = |g: Option<Growth>| g.map(|g| [g.per_hour, g.ci_low, g.ci_high]);
        for (names, values) in [
            (PROJECTION_24H, day),
            (PROJECTION_7D, week),
            (LIVE_HEAP, slope(of.live_heap)),
            (ALLOCATOR_FREE, slope(of.allocator_free)),
        ] {
            let values = values.map_or([None; 3], |v| v.map(Some));
            out.extend(names.into_iter().zip(values.map(opt)));
        }
        out.extend(PLATEAU_RATIO.into_iter().zip(ratio_cells(of.ratio)));
        out.push(("cpu_cores", opt(of.cpu_cores)));
        out.extend(CPU_RATIO.into_iter().zip(ratio_cells(of.cpu_ratio)));
        out
    }

    /// Its load figures' columns for `names` (`load_names` of every row, so
    /// that each row has the same): `load_NAME` and, on a configuration's
    /// row, its ratio to the baseline's with the bounds; blank where it has
    /// none.
    pub fn load_columns(&self, names: &[String]) -> Vec<(String, Cell)> {
        let mut out = Vec::new();
        for name in names {
            let figure = self.figures.load.iter().find(|l| &l.name == name);
            out.push((
                format!("load_{name}"),
                Cell::Number(figure.map(|l| l.value)),
            ));
            let cells = ratio_cells(figure.and_then(|l| l.ratio));
            for (suffix, cell) in ["ratio", "ratio_ci_low", "ratio_ci_high"]
                .into_iter()
                .zip(cells)
            {
                out.push((format!("load_{name}_{suffix}"), cell));
            }
        }
        out
    }
}

/// A ratio and its bounds as three cells, a bound blank where it is not
/// finite (one replica a side), all three blank without a ratio.
fn ratio_cells(r: Option<Ratio>) -> [Cell; 3] {
    let finite = |v: f64| Some(v).filter(|v| v.is_finite());
    [
        Cell::Number(r.map(|r| r.value)),
        Cell::Number(r.and_then(|r| finite(r.ci_low))),
        Cell::Number(r.and_then(|r| finite(r.ci_high))),
    ]
}

/// The load figures any of `rows` has, in the order first met.
pub fn load_names(rows: &[Row]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for load in rows.iter().flat_map(|r| &r.figures.load) {
        if !names.contains(&load.name) {
            names.push(load.name.clone());
        }
    }
    names
}

/// `projected`, `too_far` (beyond `projection::MAX_FACTOR`), `not_growing`
/// (judged by its level) or `reached` (the soak ran past the horizon).
pub fn reach_word(horizon: Option<Horizon>) -> &'static str {
    match horizon.map(|h| h.reach) {
        Some(Reach::Projected(_)) => "projected",
        Some(Reach::TooFar) => "too_far",
        Some(Reach::Slowing) => "slowing",
        Some(Reach::NotGrowing) => "not_growing",
        None => "reached",
    }
}

const PLATEAU_RATIO: [&str; 3] = [
    "plateau_ratio",
    "plateau_ratio_ci_low",
    "plateau_ratio_ci_high",
];
const CPU_RATIO: [&str; 3] = ["cpu_ratio", "cpu_ratio_ci_low", "cpu_ratio_ci_high"];
const PROJECTION_24H_REACH: [&str; 2] = ["projection_24h", "projection_24h_factor"];
const PROJECTION_7D_REACH: [&str; 2] = ["projection_7d", "projection_7d_factor"];
const PROJECTION_24H: [&str; 3] = [
    "projection_24h_bytes",
    "projection_24h_ci_low_bytes",
    "projection_24h_ci_high_bytes",
];
const PROJECTION_7D: [&str; 3] = [
    "projection_7d_bytes",
    "projection_7d_ci_low_bytes",
    "projection_7d_ci_high_bytes",
];
const LIVE_HEAP: [&str; 3] = [
    "live_heap_slope_bytes_per_h",
    "live_heap_slope_ci_low_bytes_per_h",
    "live_heap_slope_ci_high_bytes_per_h",
];
const ALLOCATOR_FREE: [&str; 3] = [
    "allocator_free_slope_bytes_per_h",
    "allocator_free_slope_ci_low_bytes_per_h",
    "allocator_free_slope_ci_high_bytes_per_h",
];
