//! The futility rule of `--runs auto` (`decide::unresolvable`) against
//! simulated candidates of known effect on memory: how often it stops one
//! that would have settled had it kept running (at a look within
//! `--max-runs`, or in the 95% verdict at the cap), and the rounds it saves.
//! `cargo test --release --lib futility -- --nocapture` prints the table
//! docs/statistics.md quotes ("Futility").

use super::*;
use crate::interval::log_ratio;
use allocscope_core::rng::SplitMix64;

const MAX_RUNS: u32 = 20;
const THRESHOLD: f64 = 0.97;
const TRIALS: usize = 1000;

fn normal(rng: &mut SplitMix64) -> f64 {
    let u = |r: &mut SplitMix64| ((r.next_u64() >> 11) as f64 / (1u64 << 53) as f64).max(1e-300);
    let (u1, u2) = (u(rng), u(rng));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// What one simulated candidate came to over `MAX_RUNS` rounds.
struct Trial {
    /// Settled without the rule: at a look (per-look level, from
    /// `FIRST_LOOK`) or in the 95% verdict at the cap.
    settles: bool,
    /// The look that settled it, if one did.
    settled_at: Option<u32>,
    /// The round the rule stopped it after, if it did before it settled,
    /// and whether the 95% verdict on those rounds left it open.
    stopped: Option<(u32, bool)>,
}

/// `cap`: the rounds the experiment can run, `MAX_RUNS` or fewer when
/// `--max-time` leaves fewer (the looks keep `--max-runs`'s level).
fn trial(rng: &mut SplitMix64, ratio: f64, sigma: f64, cap: u32) -> Trial {
    let (mut cand, mut base) = (Vec::new(), Vec::new());
    for round in 1..=cap {
        base.push((round, 100.0 * (sigma * normal(rng)).exp()));
        cand.push((round, 100.0 * ratio * (sigma * normal(rng)).exp()));
    }
    let at = |round: u32, alpha: f64| {
        let k = round as usize;
        let memory = log_ratio(&cand[..k], &base[..k]).expect("data");
        // Performance the same in every round: within the budget.
        let perf = log_ratio(&base[..k], &base[..k]).expect("data");
        standing(
            Some(&memory),
            Some(&perf),
            Thresholds::from_percent(3.0, 5.0, alpha),
        )
    };
    let looking = sequential_alpha(MAX_RUNS);
    let settled_at = (FIRST_LOOK..=cap).find(|&k| !at(k, looking).is_open());
    let stopped = (FIRST_LOOK..cap)
        .take_while(|&k| settled_at.is_none_or(|s| k < s))
        .find(|&k| unresolvable(&at(k, looking), k, cap))
        .map(|k| (k, at(k, 0.05).is_open()));
    Trial {
        settles: settled_at.is_some() || !at(cap, 0.05).is_open(),
        settled_at,
        stopped,
    }
}

/// Candidates at, just beyond and well beyond the 3% threshold, on either
/// side (the distance in standard deviations of one round's log
/// difference, `sigma` per run): the rule may stop one that would have
/// settled, and leave it open, in at most 1% of experiments; and it stops
/// a third or more of those on the threshold. The same under a cap of 10
/// rounds (`--max-time` leaving half of `--max-runs 20`), where the rule
/// counts the rounds the time leaves.
#[test]
fn futility_rarely_stops_a_candidate_that_would_settle_within_max_runs() {
    for cap in [MAX_RUNS, 10] {
        futility_under(cap);
    }
}

fn futility_under(cap: u32) {
    println!(
        "futility, --max-runs {MAX_RUNS}, {cap} rounds the caps leave, {TRIALS} experiments a row"
    );
    for sigma in [0.03, 0.10] {
        for distance in [0.0, 0.3, 0.5, 0.66, 1.0, 1.5, -0.66, -1.0] {
            let ratio = THRESHOLD * (distance * sigma * 2f64.sqrt()).exp();
            // Wrapping: a negative distance's bits, as a seed.
            let seed = (0xBEAD + (sigma * 1e3) as u64).wrapping_add((distance * 1e2) as i64 as u64);
            let mut rng = SplitMix64::new(seed);
            let (mut settled, mut stops, mut lost, mut saved) = (0, 0, 0, 0);
            for _ in 0..TRIALS {
                let t = trial(&mut rng, ratio, sigma, cap);
                settled += usize::from(t.settles);
                if let Some((round, open)) = t.stopped {
                    stops += 1;
                    lost += usize::from(t.settles && open);
                    saved += t.settled_at.unwrap_or(cap) - round;
                }
            }
            let pct = |n: usize| 100.0 * n as f64 / TRIALS as f64;
            println!(
                "noise {:>2.0}%, true ratio {ratio:.3} ({distance:+.2} sd): settles {:>5.1}%, \
                 stopped {:>5.1}%, stopped though it would have settled {:>4.1}%, rounds saved \
                 {:.1} a candidate",
                sigma * 100.0,
                pct(settled),
                pct(stops),
                pct(lost),
                f64::from(saved) / TRIALS as f64
            );
            assert!(pct(lost) <= 1.0, "{ratio}: {lost}");
            if distance == 0.0 {
                assert!(pct(stops) >= 33.0, "on the threshold: stopped {stops}");
            }
        }
    }
}
