//! The futility rule of `--runs auto` (`decide::unresolvable`) against
//! simulated candidates of known effect on memory: how often it stops one
//! that would have settled within `--max-runs` had it kept running, and the
//! rounds it saves. `cargo test --release --lib futility -- --nocapture`
//! prints the table docs/statistics.md quotes ("Futility").

use super::*;
use crate::analyze::interval::log_ratio;
use crate::rng::SplitMix64;

const MAX_RUNS: u32 = 20;
const THRESHOLD: f64 = 0.97;
const TRIALS: usize = 1000;

fn normal(rng: &mut SplitMix64) -> f64 {
    let u = |r: &mut SplitMix64| ((r.next_u64() >> 11) as f64 / (1u64 << 53) as f64).max(1e-300);
    let (u1, u2) = (u(rng), u(rng));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One simulated candidate over `MAX_RUNS` rounds, judged at `--runs
/// auto`'s per-look level from `FIRST_LOOK`: the round its memory side
/// settled without the rule (if it did), and the round the rule stopped it
/// (if it did, before settling).
fn trial(rng: &mut SplitMix64, ratio: f64, sigma: f64) -> (Option<u32>, Option<u32>) {
    let t = Thresholds::from_percent(3.0, 5.0, sequential_alpha(MAX_RUNS));
    let (mut cand, mut base) = (Vec::new(), Vec::new());
    for round in 1..=MAX_RUNS {
        base.push((round, 100.0 * (sigma * normal(rng)).exp()));
        cand.push((round, 100.0 * ratio * (sigma * normal(rng)).exp()));
    }
    let mut stopped = None;
    for round in FIRST_LOOK..=MAX_RUNS {
        let k = round as usize;
        let memory = log_ratio(&cand[..k], &base[..k]).expect("data");
        // Performance the same in every round: within the budget.
        let perf = log_ratio(&base[..k], &base[..k]).expect("data");
        let s = standing(Some(&memory), Some(&perf), t);
        if !s.is_open() {
            return (Some(round), stopped);
        }
        if stopped.is_none() && unresolvable(&s, round, MAX_RUNS) {
            stopped = Some(round);
        }
    }
    (None, stopped)
}

/// Candidates at, just beyond and well beyond the 3% threshold, on either
/// side (the distance in standard deviations of one round's log
/// difference, `sigma` per run): the rule may stop one that would have
/// settled within the cap in at most 2% of experiments, and 1% where nearly
/// all settle (1.5 sd); it stops most of those on the threshold.
#[test]
fn futility_rarely_stops_a_candidate_that_would_settle_within_max_runs() {
    println!("futility, --max-runs {MAX_RUNS}, {TRIALS} experiments a row");
    for sigma in [0.03, 0.10] {
        for distance in [0.0, 0.5, 0.66, 1.0, 1.5, -0.66, -1.0, -1.5] {
            let ratio = THRESHOLD * (distance * sigma * 2f64.sqrt()).exp();
            let mut rng =
                SplitMix64::new(0xF00D + (sigma * 1e3) as u64 + (distance * 1e2) as i64 as u64);
            let (mut settled, mut stops, mut lost, mut saved) = (0, 0, 0, 0);
            for _ in 0..TRIALS {
                let (settles, stop) = trial(&mut rng, ratio, sigma);
                settled += usize::from(settles.is_some());
                if let Some(stop) = stop {
                    stops += 1;
                    lost += usize::from(settles.is_some());
                    saved += settles.unwrap_or(MAX_RUNS) - stop;
                }
            }
            let pct = |n: usize| 100.0 * n as f64 / TRIALS as f64;
            println!(
                "noise {:>2.0}%, true ratio {ratio:.3} ({distance:+.2} sd): settles within the cap \
                 {:>5.1}%, stopped {:>5.1}%, stopped though it would have settled {:>4.1}%, \
                 rounds saved {:.1} a candidate",
                sigma * 100.0,
                pct(settled),
                pct(stops),
                pct(lost),
                f64::from(saved) / TRIALS as f64
            );
            assert!(pct(lost) <= 2.0, "{ratio}: {lost}");
            if distance.abs() >= 1.5 {
                assert!(pct(lost) <= 1.0, "{ratio}: {lost}");
            }
            if distance == 0.0 {
                assert!(pct(stops) >= 70.0, "on the threshold: stopped {stops}");
            }
        }
    }
}
