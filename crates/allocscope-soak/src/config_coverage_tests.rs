//! Coverage evidence for the configuration figures: a candidate whose
//! replicas sit at 0.8 of the baseline's level, each replica's level off
//! its configuration's by a log-normal 3% (where its plateau landed), each
//! a simulated 4-hour instance as in `coverage_tests.rs` with AR(1) noise
//! of 10-minute correlation time. `cargo test --release -p allocscope-soak
//! coverage -- --nocapture` prints the table docs/statistics.md quotes.

use crate::config::{combine, separation};
use crate::instance::{summarize, InstanceSeries, InstanceSummary};
use crate::simulate::{normal, series, Noise, Shape, LEVEL};
use allocscope_core::rng::SplitMix64;

const TRUE_RATIO: f64 = 0.8;
const REPLICA_SPREAD: f64 = 0.03;
const SIMS: usize = 300;
const SEED: u64 = 0xC0F1_6500;
/// As in `coverage_tests.rs`: 2.7 standard errors below 95% at 400 runs,
/// a little more at 300.
const MIN_COVERAGE: f64 = 0.91;

/// One replica of a configuration at `scale` of `LEVEL`.
fn replica(shape: Shape, scale: f64, rng: &mut SplitMix64) -> InstanceSummary {
    let noise = Noise {
        sd: 0.01 * LEVEL,
        tau_s: 600.0,
    };
    let own = scale * (REPLICA_SPREAD * normal(rng)).exp();
    let memory: Vec<(f64, f64)> = series(shape, noise, 5.0, 4.0 * 3600.0, rng)
        .noisy
        .iter()
        .map(|&(t, v)| (t, v * own))
        .collect();
    let instance = InstanceSeries {
        memory: &memory,
        live_heap: &[],
        allocator_free: &[],
        cpu: &[],
        restart_s: None,
    };
    summarize(&instance).expect("summary")
}

fn within(x: f64, low: f64, high: f64) -> bool {
    low <= x && x <= high
}

#[test]
fn coverage_of_replicas_combined_and_of_the_plateau_ratio() {
    println!("| shape, replicas | plateau ratio | combined growth | growth difference | plateaus separated |");
    println!("| --- | --- | --- | --- | --- |");
    for (i, shape) in [Shape::Flat, Shape::Linear(0.03)].into_iter().enumerate() {
        for replicas in [2, 3] {
            let mut rng = SplitMix64::new(SEED + (10 * i + replicas) as u64);
            let true_rate = shape.growth_per_hour(0.0);
            let mut covered = [0usize; 4];
            for _ in 0..SIMS {
                let candidate: Vec<_> = (0..replicas)
                    .map(|_| replica(shape, TRUE_RATIO, &mut rng))
                    .collect();
                let baseline: Vec<_> = (0..replicas)
                    .map(|_| replica(shape, 1.0, &mut rng))
                    .collect();
                let combined = combine(&candidate).expect("combined").growth;
                let s = separation(&candidate, &baseline, 4.0 * 3600.0).expect("separation");
                let r = s.plateau_ratio;
                let d = s.growth_difference;
                covered[0] += usize::from(within(TRUE_RATIO, r.ci_low, r.ci_high));
                covered[1] += usize::from(within(
                    true_rate * TRUE_RATIO,
                    combined.ci_low,
                    combined.ci_high,
                ));
                covered[2] +=
                    usize::from(within(true_rate * (TRUE_RATIO - 1.0), d.ci_low, d.ci_high));
                covered[3] += usize::from(s.levels_separate);
            }
            let share = |c: usize| c as f64 / SIMS as f64;
            let label = format!("{}, {replicas}", shape.label());
            println!(
                "| {label} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
                100.0 * share(covered[0]),
                100.0 * share(covered[1]),
                100.0 * share(covered[2]),
                100.0 * share(covered[3])
            );
            for (what, &count) in ["ratio", "combined growth", "growth difference"]
                .iter()
                .zip(&covered)
            {
                assert!(
                    share(count) >= MIN_COVERAGE,
                    "{label}: {what} covered {}",
                    share(count)
                );
            }
        }
    }
}
