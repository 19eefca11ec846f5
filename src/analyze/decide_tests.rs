use super::*;
use crate::analyze::interval::log_ratio;
use crate::rng::SplitMix64;

const T: Thresholds = Thresholds {
    memory_max: 0.97,
    perf_max: 1.05,
};

/// Paired rounds whose log ratios are exactly `diffs` (baseline 100).
fn lr(ratios: &[f64]) -> LogRatio {
    let base: Vec<(u32, f64)> = (1..=ratios.len() as u32).map(|r| (r, 100.0)).collect();
    let cand: Vec<(u32, f64)> = ratios
        .iter()
        .enumerate()
        .map(|(i, r)| (i as u32 + 1, 100.0 * r))
        .collect();
    log_ratio(&cand, &base).expect("data")
}

/// A performance ratio of exactly 1.0 in every round: within budget.
fn same() -> LogRatio {
    lr(&[1.0, 1.0, 1.0])
}

#[test]
fn missing_performance_figures_keep_a_candidate_open() {
    let s = standing(Some(&lr(&[0.5, 0.5, 0.5])), None, T);
    assert_eq!((s.memory, s.performance), (Side::Good, Side::Open));
}

#[test]
fn clear_saving_within_budget_is_recommended() {
    let s = standing(
        Some(&lr(&[0.60, 0.62, 0.61])),
        Some(&lr(&[1.0, 1.01, 0.99])),
        T,
    );
    assert!(s.qualifies());
    assert_eq!(decide(&[s], &[0.61]), Decision::Recommend(0));
}

#[test]
fn a_saving_smaller_than_min_saving_is_not_a_saving_even_beyond_noise() {
    // 1% less memory, interval well clear of 1.0 but above 0.97.
    let s = standing(Some(&lr(&[0.990, 0.991, 0.989, 0.990])), Some(&same()), T);
    assert_eq!(s.memory, Side::Bad);
    assert_eq!(decide(&[s], &[0.99]), Decision::KeepDefault);
}

#[test]
fn too_few_runs_is_inconclusive_never_keep_the_default() {
    let one = standing(Some(&lr(&[0.5])), Some(&lr(&[1.0])), T);
    assert!(one.is_open());
    assert_eq!(decide(&[one], &[0.5]), Decision::Inconclusive(vec![0]));
    let nothing = standing(None, None, T);
    assert_eq!(
        decide(&[nothing], &[f64::NAN]),
        Decision::Inconclusive(vec![0])
    );
}

#[test]
fn certain_saving_with_an_unsettled_cost_is_inconclusive_on_performance() {
    let s = standing(
        Some(&lr(&[0.66, 0.65, 0.70])),
        Some(&lr(&[0.85, 1.10, 0.95])),
        T,
    );
    assert_eq!((s.memory, s.performance), (Side::Good, Side::Open));
    assert!(s.more_rounds.is_some_and(|n| n > 0));
    assert_eq!(decide(&[s], &[0.67]), Decision::Inconclusive(vec![0]));
}

#[test]
fn no_candidate_is_never_keep_the_default() {
    assert_eq!(decide(&[], &[]), Decision::Inconclusive(Vec::new()));
}

#[test]
fn a_ratio_on_the_threshold_needs_more_rounds_than_any_estimate_names() {
    // Centred on the budget itself: no run count settles it.
    let s = standing(
        Some(&lr(&[0.6, 0.6, 0.6])),
        Some(&lr(&[1.00, 1.05, 1.10])),
        T,
    );
    assert_eq!(s.more_rounds, Some(MANY_MORE_ROUNDS));
    assert_eq!(more_rounds_words(MANY_MORE_ROUNDS), "over 1000 more rounds");
    assert_eq!(more_rounds_words(3), "about 3 more rounds");
}

#[test]
fn too_slow_beyond_noise_is_settled_out_and_dropped() {
    let slow = standing(
        Some(&lr(&[0.5, 0.52, 0.51])),
        Some(&lr(&[1.9, 2.0, 2.1])),
        T,
    );
    assert!(slow.settled_out());
    let open = standing(Some(&lr(&[0.9, 1.0, 0.95])), None, T);
    let plan = schedule(&[slow, open], 3, 20);
    assert_eq!(plan.keep, vec![1]);
    assert!(!plan.stop);
}

#[test]
fn the_best_qualifying_candidate_wins() {
    let a = standing(Some(&lr(&[0.80, 0.81, 0.80])), Some(&same()), T);
    let b = standing(Some(&lr(&[0.50, 0.51, 0.50])), Some(&same()), T);
    assert_eq!(decide(&[a, b], &[0.80, 0.50]), Decision::Recommend(1));
}

/// A simulated workload with known effects: one candidate saves 40% (easy),
/// one saves 4% against a 3% threshold with 3% noise (hard), one uses 10%
/// more (easy, dropped early). Adaptive stops when all settle; a fixed
/// schedule must be sized for the hardest candidate in advance.
#[test]
fn adaptive_rounds_stop_early_and_never_exceed_max_runs() {
    let effects = [0.60, 0.96, 1.10];
    let sigma = 0.03;
    let max_runs = 20;
    let mut rng = SplitMix64::new(7);
    let mut normal = || {
        let u =
            |r: &mut SplitMix64| ((r.next_u64() >> 11) as f64 / (1u64 << 53) as f64).max(1e-300);
        let (u1, u2) = (u(&mut rng), u(&mut rng));
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let (mut adaptive_runs, mut trials) = (Vec::new(), 0);
    for _ in 0..50 {
        trials += 1;
        let mut values: Vec<Vec<(u32, f64)>> = vec![Vec::new(); effects.len() + 1];
        let mut active: Vec<usize> = (0..effects.len()).collect();
        let mut runs = 0;
        for round in 1..=max_runs {
            values[0].push((round, 100.0 * (sigma * normal()).exp()));
            runs += 1;
            for &c in &active {
                values[c + 1].push((round, 100.0 * effects[c] * (sigma * normal()).exp()));
                runs += 1;
            }
            let standings: Vec<Standing> = (0..effects.len())
                .map(|c| {
                    let n = values[c + 1].len();
                    let perf = lr(&vec![1.0; n.max(2)]);
                    standing(
                        log_ratio(&values[c + 1], &values[0]).as_ref(),
                        Some(&perf),
                        T,
                    )
                })
                .collect();
            let plan = schedule(&standings, round, max_runs);
            assert!(round <= max_runs);
            active = plan.keep;
            if plan.stop {
                break;
            }
        }
        adaptive_runs.push(runs);
    }
    adaptive_runs.sort_unstable();
    let median = adaptive_runs[adaptive_runs.len() / 2];
    let fixed = (effects.len() + 1) as u32 * max_runs;
    println!("adaptive: median {median} runs over {trials} trials (max {}), fixed schedule for the hardest candidate: {fixed}", adaptive_runs[adaptive_runs.len() - 1]);
    assert!(median < fixed);
    assert!(adaptive_runs.iter().all(|&r| r <= fixed));
}
