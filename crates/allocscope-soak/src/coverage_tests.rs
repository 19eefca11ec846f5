//! Coverage evidence for the soak's intervals: simulated instances with a
//! known truth (docs/statistics.md, "Growth over time", quotes the table).
//! `cargo test --release -p allocscope-soak coverage -- --nocapture`.
//!
//! A 4-hour segment sampled every 5 s (2,880 samples; the recent window is
//! the last 2 hours), memory at 1 GB with AR(1) noise of 1% of it, whose
//! correlation time is 1 or 10 minutes.

use crate::blocks::{block_medians, MAX_BLOCKS};
use crate::growth::{Settling, SETTLED_SHARE_PER_HOUR};
use crate::instance::{summarize, InstanceSeries};
use crate::projection::{project, HORIZONS_S};
use crate::simulate::{series, Noise, Shape, LEVEL};
use crate::theil_sen::{theil_sen, Z975};
use crate::window::from;
use allocscope_analyze::stats::median;
use allocscope_core::rng::SplitMix64;

const STEP_S: f64 = 5.0;
const DURATION_S: f64 = 4.0 * 3600.0;
const SEED: u64 = 0x50A4_C0DE;

const SHAPES: [Shape; 5] = [
    Shape::Flat,
    Shape::Linear(0.005),
    Shape::Linear(0.03),
    Shape::Steps {
        share: 0.02,
        every_s: 1200.0,
    },
    Shape::LevelsOff {
        share_per_hour: 0.1,
        until_s: 1.5 * 3600.0,
    },
];
const TAUS_S: [f64; 2] = [60.0, 600.0];

/// What one cell of simulations found, as shares of its simulations.
#[derive(Debug, Default)]
struct Cell {
    sims: usize,
    growth_covered: usize,
    naive_covered: usize,
    plateau_covered: usize,
    projection_covered: usize,
    plateau: usize,
    grows: usize,
    /// Each growth interval's half-width, as a share of the level an hour.
    half_widths: Vec<f64>,
}

impl Cell {
    fn share(&self, count: usize) -> f64 {
        count as f64 / self.sims as f64
    }

    fn row(&self, label: &str) -> String {
        let pct = |c: usize| format!("{:.1}%", 100.0 * self.share(c));
        format!(
            "| {label} | {} | {} | {} | {} | {} | {} | {:.2}%/h |",
            pct(self.growth_covered),
            pct(self.naive_covered),
            pct(self.plateau_covered),
            pct(self.projection_covered),
            pct(self.plateau),
            pct(self.grows),
            100.0 * median(&self.half_widths).unwrap_or(f64::NAN)
        )
    }
}

fn within(x: f64, low: f64, high: f64) -> bool {
    low <= x && x <= high
}

/// `sims` simulated instances of `shape` under AR(1) noise of `tau_s`.
fn simulate_cell(shape: Shape, tau_s: f64, sims: usize, seed: u64) -> Cell {
    let mut rng = SplitMix64::new(seed);
    let noise = Noise {
        sd: 0.01 * LEVEL,
        tau_s,
    };
    let mut cell = Cell {
        sims,
        ..Cell::default()
    };
    for _ in 0..sims {
        let sim = series(shape, noise, STEP_S, DURATION_S, &mut rng);
        let instance = InstanceSeries {
            memory: &sim.noisy,
            live_heap: &[],
            allocator_free: &[],
            cpu: &[],
            restart_s: None,
        };
        let Some(summary) = summarize(&instance) else {
            continue;
        };
        let true_growth = shape.growth_per_hour(summary.end_s);
        let g = summary.growth;
        cell.growth_covered += usize::from(within(true_growth, g.ci_low, g.ci_high));
        // Naive: a fixed MAX_BLOCKS blocks, read as independent.
        let naive = theil_sen(
            &block_medians(from(&sim.noisy, summary.window_start_s), MAX_BLOCKS),
            Z975,
        )
        .expect("naive fit");
        cell.naive_covered +=
            usize::from(within(true_growth / 3600.0, naive.ci_low, naive.ci_high));
        let truth_window: Vec<f64> = from(&sim.truth, summary.window_start_s)
            .iter()
            .map(|p| p.1)
            .collect();
        let true_plateau = median(&truth_window).expect("truth");
        cell.plateau_covered += usize::from(within(
            true_plateau,
            summary.plateau.ci_low,
            summary.plateau.ci_high,
        ));
        let day = project(
            &summary.plateau,
            summary.plateau_at_s,
            &g,
            summary.start_s + HORIZONS_S[0],
        );
        let true_day = shape.value(summary.start_s + HORIZONS_S[0], sim.phase_s);
        cell.projection_covered += usize::from(within(true_day, day.ci_low, day.ci_high));
        cell.plateau += usize::from(summary.settling == Settling::Plateau);
        cell.grows += usize::from(summary.settling.grows());
        cell.half_widths.push((g.ci_high - g.ci_low) / 2.0 / LEVEL);
    }
    cell
}

/// Lowest coverage a cell of 400 may show for a 95% interval: 2.7
/// standard errors (1.1 points) below it.
const MIN_COVERAGE: f64 = 0.92;
/// Highest rate of a wrong "grows" or "plateau" a cell may show: one-sided
/// errors of a 95% interval beyond the threshold.
const MAX_WRONG_CALLS: f64 = 0.025;

#[test]
fn coverage_of_growth_plateau_and_projection_on_simulated_instances() {
    println!("| shape, AR(1) correlation time | growth | growth, fixed {MAX_BLOCKS} blocks | plateau | 24 h projection | plateau said | grows said | growth half-width |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (i, &shape) in SHAPES.iter().enumerate() {
        for (j, &tau_s) in TAUS_S.iter().enumerate() {
            let cell = simulate_cell(shape, tau_s, 400, SEED + (10 * i + j) as u64);
            let label = format!("{}, {:.0} min", shape.label(), tau_s / 60.0);
            println!("{}", cell.row(&label));
            for (what, count) in [
                ("growth", cell.growth_covered),
                ("plateau", cell.plateau_covered),
                ("projection", cell.projection_covered),
            ] {
                assert!(
                    cell.share(count) >= MIN_COVERAGE,
                    "{label}: {what} covered {}",
                    cell.share(count)
                );
            }
            // Growth is under the threshold (1%/h) except at 3%/h and on the
            // staircase (6%/h), where a plateau is the wrong call.
            let true_growth = shape.growth_per_hour(DURATION_S) / LEVEL;
            let wrong = if true_growth < SETTLED_SHARE_PER_HOUR {
                cell.grows
            } else {
                cell.plateau
            };
            assert!(
                cell.share(wrong) <= MAX_WRONG_CALLS,
                "{label}: wrong calls {}",
                cell.share(wrong)
            );
        }
    }
}
