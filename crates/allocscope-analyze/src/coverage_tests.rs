//! Coverage evidence for every interval the reports label 95%: simulated
//! experiments with noise like real machines, at every run count the tool
//! allows. `cargo test --release --lib coverage -- --nocapture` prints the
//! table that docs/statistics.md quotes.
//!
//! Noise model per run: log-normal spread sigma (1%, 5%, 20%); optionally a
//! slow drift of the machine shared by every configuration of a round (+15%
//! from the first round to the last, plus a round-level wobble of sigma); and
//! optionally outlier runs (each run 3% likely to be 1.5-3x slower). The truth
//! is the ratio (or median) of the outlier-free distributions: an outlier is
//! noise the interval must absorb, not a property of the allocator.

use super::interval::{
    has_interval, log_ratio, log_ratio_without, median_estimate, robust_log_ratio_without,
    MIN_RUNS_FOR_MEDIAN_CI,
};
use super::stats::bootstrap_ratio_ci_with;
use allocscope_core::rng::SplitMix64;

const RUN_COUNTS: [usize; 5] = [2, 3, 5, 10, 20];
const SIGMAS: [f64; 3] = [0.01, 0.05, 0.20];
const TRUE_RATIO: f64 = 0.85;

struct Noise {
    sigma: f64,
    drift: bool,
    outliers: bool,
}

impl Noise {
    fn label(&self) -> String {
        format!(
            "sigma {:>2.0}%{}{}",
            self.sigma * 100.0,
            if self.drift { " + drift" } else { "" },
            if self.outliers { " + outliers" } else { "" }
        )
    }
}

fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = uniform(rng).max(1e-300);
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One run's value: `centre` times the round's state times its own noise.
fn run_value(rng: &mut SplitMix64, centre: f64, round_state: f64, noise: &Noise) -> f64 {
    let mut v = centre * round_state * (noise.sigma * normal(rng)).exp();
    if noise.outliers && uniform(rng) < 0.03 {
        v *= 1.5 + 1.5 * uniform(rng);
    }
    v
}

/// A simulated experiment: (candidate, baseline) values keyed by round.
type Rounds = Vec<(u32, f64)>;

fn experiment(rng: &mut SplitMix64, n: usize, noise: &Noise) -> (Rounds, Rounds) {
    let (mut cand, mut base) = (Vec::new(), Vec::new());
    for k in 0..n {
        let state = if noise.drift {
            (0.15 * k as f64 / (n.max(2) - 1) as f64 + noise.sigma * normal(rng)).exp()
        } else {
            1.0
        };
        let round = k as u32 + 1;
        base.push((round, run_value(rng, 100.0, state, noise)));
        cand.push((round, run_value(rng, 100.0 * TRUE_RATIO, state, noise)));
    }
    (cand, base)
}

/// Share of `reps` simulated experiments whose interval covers the truth,
/// for the paired t interval of the log ratio.
fn paired_coverage(n: usize, noise: &Noise, reps: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let covered = (0..reps)
        .filter(|_| {
            let (cand, base) = experiment(&mut rng, n, noise);
            let r = log_ratio(&cand, &base).expect("data").ratio();
            r.ci_low <= TRUE_RATIO && TRUE_RATIO <= r.ci_high
        })
        .count();
    covered as f64 / reps as f64
}

/// The same for the method used before: a percentile bootstrap of the ratio
/// of medians, groups resampled independently.
fn old_bootstrap_coverage(n: usize, noise: &Noise, reps: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let covered = (0..reps)
        .filter(|_| {
            let (cand, base) = experiment(&mut rng, n, noise);
            let values = |v: &Rounds| v.iter().map(|&(_, x)| x).collect::<Vec<f64>>();
            let r =
                bootstrap_ratio_ci_with(&values(&cand), &values(&base), 400, 0.95).expect("data");
            r.ci_low <= TRUE_RATIO && TRUE_RATIO <= r.ci_high
        })
        .count();
    covered as f64 / reps as f64
}

/// Median intervals of one configuration (no drift: a drifting machine has
/// no single true median); the truth is the outlier-free median, 100.
fn median_coverage(n: usize, noise: &Noise, reps: usize, seed: u64) -> Option<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut covered = 0;
    for _ in 0..reps {
        let values: Vec<f64> = (0..n)
            .map(|_| run_value(&mut rng, 100.0, 1.0, noise))
            .collect();
        let e = median_estimate(&values).expect("data");
        if e.ci_low.is_nan() {
            return None;
        }
        covered += usize::from(e.ci_low <= 100.0 && 100.0 <= e.ci_high);
    }
    Some(covered as f64 / reps as f64)
}

fn models() -> Vec<Noise> {
    SIGMAS
        .iter()
        .flat_map(|&sigma| {
            [(false, false), (true, false), (false, true), (true, true)]
                .into_iter()
                .map(move |(drift, outliers)| Noise {
                    sigma,
                    drift,
                    outliers,
                })
        })
        .collect()
}

#[test]
fn coverage_paired_log_ratio_holds_95_percent_at_every_run_count() {
    let mut worst = 1.0f64;
    println!("paired t on log ratios: coverage of the true ratio (2000 experiments each)");
    println!(
        "{:<32} {}",
        "noise",
        RUN_COUNTS.map(|n| format!("n={n:<3}")).join("  ")
    );
    for (i, noise) in models().iter().enumerate() {
        let row: Vec<f64> = RUN_COUNTS
            .iter()
            .map(|&n| paired_coverage(n, noise, 2000, 0xC0FE + i as u64 * 31 + n as u64))
            .collect();
        worst = row.iter().copied().fold(worst, f64::min);
        println!(
            "{:<32} {}",
            noise.label(),
            row.iter()
                .map(|c| format!("{:>5.1}%", c * 100.0))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    assert!(worst >= 0.93, "worst coverage {worst}");
}

#[test]
fn coverage_median_order_statistic_interval_holds_95_percent_from_six_runs() {
    println!("median order-statistic interval: coverage (2000 experiments each)");
    for (i, noise) in models().iter().filter(|m| !m.drift).enumerate() {
        for n in RUN_COUNTS {
            let c = median_coverage(n, noise, 2000, 0xBEEF + i as u64 * 7 + n as u64);
            match c {
                None => assert!(n < MIN_RUNS_FOR_MEDIAN_CI, "n={n} has no interval"),
                Some(c) => {
                    println!("{:<24} n={n:<3} {:>5.1}%", noise.label(), c * 100.0);
                    assert!(c >= 0.93, "{} n={n}: {c}", noise.label());
                }
            }
        }
    }
}

#[test]
fn coverage_of_the_old_bootstrap_falls_short_at_small_counts() {
    // Printed for docs/statistics.md; asserted only where it clearly fails,
    // which is why it was replaced.
    let plain = Noise {
        sigma: 0.05,
        drift: false,
        outliers: false,
    };
    let row: Vec<f64> = RUN_COUNTS
        .iter()
        .map(|&n| old_bootstrap_coverage(n, &plain, 400, 0xAB + n as u64))
        .collect();
    println!(
        "old percentile bootstrap of a ratio of medians, {}: {}",
        plain.label(),
        row.iter()
            .map(|c| format!("{:.1}%", c * 100.0))
            .collect::<Vec<_>>()
            .join(" ")
    );
    assert!(row[0] < 0.85 && row[1] < 0.93, "{row:?}");
    let one = log_ratio(&[(1, 1.0)], &[(1, 2.0)]).expect("one").ratio();
    assert!(!has_interval(&one), "one run has no interval");
}

/// A simulated experiment on a machine with a bursty neighbour: each run is
/// `share` likely to have the neighbour beside it, measured (its round is
/// returned) and 1.3-2x slower. Sigma 5%, slow drift.
fn disturbed_experiment(rng: &mut SplitMix64, n: usize, share: f64) -> (Rounds, Rounds, Vec<u32>) {
    let noise = Noise {
        sigma: 0.05,
        drift: true,
        outliers: false,
    };
    let (mut cand, mut base) = experiment(rng, n, &noise);
    let mut disturbed = Vec::new();
    for side in [&mut cand, &mut base] {
        for (round, v) in side.iter_mut() {
            if uniform(rng) < share {
                *v *= 1.3 + 0.7 * uniform(rng);
                disturbed.push(*round);
            }
        }
    }
    (cand, base, disturbed)
}

/// Coverage and median interval width (ratio high / low) of the paired
/// interval with every round, and without the disturbed rounds.
fn disturbed_coverage(n: usize, share: f64, reps: usize, seed: u64) -> [(f64, f64); 2] {
    let mut rng = SplitMix64::new(seed);
    let mut out = [(0usize, Vec::new()), (0usize, Vec::new())];
    for _ in 0..reps {
        let (cand, base, disturbed) = disturbed_experiment(&mut rng, n, share);
        let all = log_ratio(&cand, &base).expect("data").ratio();
        let kept = log_ratio_without(&cand, &base, &disturbed)
            .expect("data")
            .ratio();
        for (slot, r) in out.iter_mut().zip([all, kept]) {
            slot.0 += usize::from(r.ci_low <= TRUE_RATIO && TRUE_RATIO <= r.ci_high);
            slot.1.push(r.ci_high / r.ci_low);
        }
    }
    out.map(|(covered, widths)| {
        let width = super::stats::median(&widths).unwrap_or(f64::NAN);
        (covered as f64 / reps as f64, width)
    })
}

#[test]
fn coverage_holds_with_disturbed_rounds_left_out_and_the_interval_narrows() {
    println!(
        "paired t with a bursty neighbour (sigma 5% + drift; a disturbed run 1.3-2x slower), \
         2000 experiments: coverage, median interval width (high/low)"
    );
    for share in [0.1, 0.25] {
        for n in [3, 5, 10, 20] {
            let [all, kept] = disturbed_coverage(n, share, 2000, 0xD157 + n as u64);
            println!(
                "{:>3.0}% of runs disturbed, n={n:<3} every round {:>5.1}% x{:.3}   \
                 disturbed left out {:>5.1}% x{:.3}",
                share * 100.0,
                all.0 * 100.0,
                all.1,
                kept.0 * 100.0,
                kept.1
            );
            assert!(kept.0 >= 0.93, "share {share} n={n}: {kept:?}");
            if n >= 5 {
                assert!(kept.1 < all.1, "share {share} n={n}: {kept:?} vs {all:?}");
            }
        }
    }
}

/// Makes a simulated experiment of n rounds.
type MakeExperiment = dyn Fn(&mut SplitMix64, usize) -> (Rounds, Rounds);

/// Coverage and median width (high / low) of the robust paired ratio
/// (`robust_log_ratio_without`, nothing left out) against the paired t
/// interval, at two-sided level `1 - alpha`, on `make`'s experiments.
fn robust_coverage(
    n: usize,
    alpha: f64,
    reps: usize,
    seed: u64,
    make: &MakeExperiment,
) -> [(f64, f64); 2] {
    let mut rng = SplitMix64::new(seed);
    let mut out = [(0usize, Vec::new()), (0usize, Vec::new())];
    for _ in 0..reps {
        let (cand, base) = make(&mut rng, n);
        let mean = log_ratio(&cand, &base).expect("data").ratio_at(alpha);
        let robust = robust_log_ratio_without(&cand, &base, &[])
            .expect("data")
            .ratio_at(alpha);
        for (slot, r) in out.iter_mut().zip([mean, robust]) {
            slot.0 += usize::from(r.ci_low <= TRUE_RATIO && TRUE_RATIO <= r.ci_high);
            slot.1.push(r.ci_high / r.ci_low);
        }
    }
    out.map(|(covered, widths)| {
        let width = super::stats::median(&widths).unwrap_or(f64::NAN);
        (covered as f64 / reps as f64, width)
    })
}

/// The robust performance ratio (Hodges-Lehmann with the signed-rank
/// interval from 12 pairs at 95%, 16 at the per-look level of
/// `--max-runs 20`; the mean's t interval below) holds its level under
/// every noise model, with drift and outliers, and with a bursty neighbour
/// whose runs are not left out (undetected: 10% or 25% of runs 1.3-2x
/// slower); where a neighbour disturbs runs its interval is narrower than
/// the t interval's. The test fails below 93% at 95%, or below 98.5% at
/// the per-look level 99.25%.
#[test]
fn coverage_of_the_robust_performance_ratio_holds_and_a_disturbed_pair_moves_it_little() {
    let looking = super::decide::sequential_alpha(20);
    println!(
        "robust paired ratio (Hodges-Lehmann, signed-rank interval) against the paired t: \
         coverage, median width (high/low), 2000 experiments"
    );
    let mut cases: Vec<(String, Box<MakeExperiment>)> = Vec::new();
    for noise in models().into_iter().filter(|m| m.sigma >= 0.05) {
        let label = noise.label();
        cases.push((label, Box::new(move |rng, n| experiment(rng, n, &noise))));
    }
    for share in [0.1, 0.25] {
        cases.push((
            format!("sigma  5% + drift, {:.0}% disturbed, kept", share * 100.0),
            Box::new(move |rng, n| {
                let (c, b, _) = disturbed_experiment(rng, n, share);
                (c, b)
            }),
        ));
    }
    for (i, (label, make)) in cases.iter().enumerate() {
        for n in [5, 12, 20] {
            for alpha in [0.05, looking] {
                let seed = 0x7B05 + i as u64 * 97 + n as u64 + (alpha * 1e4) as u64;
                let [mean, robust] = robust_coverage(n, alpha, 2000, seed, make.as_ref());
                println!(
                    "{label:<42} n={n:<3} {:>5.2}%: t {:>5.1}% x{:.3}   robust {:>5.1}% x{:.3}",
                    (1.0 - alpha) * 100.0,
                    mean.0 * 100.0,
                    mean.1,
                    robust.0 * 100.0,
                    robust.1
                );
                let floor = if alpha == 0.05 { 0.93 } else { 0.985 };
                assert!(robust.0 >= floor, "{label} n={n} alpha {alpha}: {robust:?}");
                if label.contains("disturbed") && n == 20 && alpha == 0.05 {
                    assert!(robust.1 < mean.1, "{label} n={n}: {robust:?} vs {mean:?}");
                }
            }
        }
    }
}

/// One simulated candidate judged on its performance as `--runs auto`
/// judges it (`--max-runs 20`): memory saved beyond doubt, its performance
/// ratio robust (`robust_log_ratio_without`), looked at from round 3 at
/// the per-look level, stopped by the futility rule, and judged at 95%
/// when the rounds end. `share` of the runs have an undetected neighbour
/// (1.3-2x slower). Returns (recommended, rounds run).
fn performance_trial(rng: &mut SplitMix64, ratio: f64, sigma: f64, share: f64) -> (bool, u32) {
    use super::decide::{sequential_alpha, standing, unresolvable, Thresholds, FIRST_LOOK};
    const MAX_RUNS: u32 = 20;
    let (mut cand, mut base) = (Vec::new(), Vec::new());
    let memory: Vec<(u32, f64)> = (1..=MAX_RUNS).map(|k| (k, 50.0)).collect();
    let hundred: Vec<(u32, f64)> = (1..=MAX_RUNS).map(|k| (k, 100.0)).collect();
    let slowed = |v: f64, rng: &mut SplitMix64| {
        if uniform(rng) < share {
            v * (1.3 + 0.7 * uniform(rng))
        } else {
            v
        }
    };
    let judge = |k: usize, cand: &Rounds, base: &Rounds, alpha: f64| {
        // Memory: 0.5 with a little spread, settled from round 2.
        let spread: Vec<(u32, f64)> = memory[..k]
            .iter()
            .map(|&(r, v)| (r, v * (1.0 + 0.001 * f64::from(r % 3))))
            .collect();
        let m = log_ratio(&spread, &hundred[..k]);
        let p = robust_log_ratio_without(cand, base, &[]);
        standing(
            m.as_ref(),
            p.as_ref(),
            Thresholds::from_percent(3.0, 5.0, alpha),
        )
    };
    let looking = sequential_alpha(MAX_RUNS);
    for round in 1..=MAX_RUNS {
        let b = 100.0 * (sigma * normal(rng)).exp();
        let c = 100.0 * ratio * (sigma * normal(rng)).exp();
        base.push((round, slowed(b, rng)));
        cand.push((round, slowed(c, rng)));
        let k = round as usize;
        if round < FIRST_LOOK {
            continue;
        }
        let s = judge(k, &cand, &base, looking);
        if !s.is_open() || unresolvable(&s, round, MAX_RUNS) || round == MAX_RUNS {
            return (judge(k, &cand, &base, 0.05).qualifies(), round);
        }
    }
    unreachable!("the cap ends every trial")
}

/// The error rates of the performance side as `--runs auto` settles it,
/// with the robust ratio and the futility stop: a candidate truly over the
/// 5% budget (1.06-1.10x) is recommended in at most 5% of experiments, at
/// 5% and 15% noise per run, with and without a neighbour beside 10% of
/// the runs that the foreign CPU missed. The rates and rounds go to
/// docs/statistics.md.
#[test]
fn coverage_of_the_adaptive_performance_side_with_futility_keeps_its_error_rate() {
    println!(
        "adaptive performance side (robust ratio, futility stop, --max-runs 20), \
         1000 experiments a row: recommended, median rounds"
    );
    for sigma in [0.05, 0.15] {
        for share in [0.0, 0.1] {
            for ratio in [0.95, 1.00, 1.03, 1.05, 1.06, 1.08, 1.10] {
                let seed =
                    0xF00D + (sigma * 1e3) as u64 + (share * 1e2) as u64 + (ratio * 1e3) as u64;
                let mut rng = SplitMix64::new(seed);
                let (mut recommended, mut rounds) = (0usize, Vec::new());
                for _ in 0..1000 {
                    let (r, n) = performance_trial(&mut rng, ratio, sigma, share);
                    recommended += usize::from(r);
                    rounds.push(f64::from(n));
                }
                let rate = recommended as f64 / 1000.0;
                let median = super::stats::median(&rounds).unwrap_or(f64::NAN);
                println!(
                    "noise {:>2.0}%, {:>2.0}% disturbed, true ratio {ratio:.2}: recommended \
                     {:>5.1}%, median {median:.0} rounds",
                    sigma * 100.0,
                    share * 100.0,
                    rate * 100.0
                );
                if ratio > 1.05 {
                    assert!(rate <= 0.05, "{sigma} {share} {ratio}: {rate}");
                }
            }
        }
    }
}
