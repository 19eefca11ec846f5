//! Instances and configurations end to end, on simulated series and on
//! summaries written out.

use crate::config::{combine, separation};
use crate::growth::{settling, Growth, Settling};
use crate::instance::{summarize, InstanceSeries, InstanceSummary};
use crate::projection::project;
use crate::simulate::{series, Noise, Shape, LEVEL};
use allocscope_analyze::figures::Estimate;
use allocscope_analyze::interval::t975;
use allocscope_core::rng::SplitMix64;

const HOUR: f64 = 3600.0;

fn quiet() -> Noise {
    Noise {
        sd: 0.002 * LEVEL,
        tau_s: 30.0,
    }
}

#[test]
fn a_restart_resets_the_plateau() {
    let mut rng = SplitMix64::new(11);
    let mut memory = series(Shape::Flat, quiet(), 5.0, 4.5 * HOUR, &mut rng).noisy;
    for p in &mut memory {
        p.1 *= 2.0;
    }
    let after = series(Shape::Flat, quiet(), 5.0, 1.25 * HOUR, &mut rng).noisy;
    memory.extend(after.iter().map(|&(t, v)| (t + 4.5 * HOUR, v)));
    let instance = |restart_s| InstanceSeries {
        memory: &memory,
        live_heap: &[],
        allocator_free: &[],
        cpu: &[],
        restart_s,
    };
    let restarted = summarize(&instance(Some(4.5 * HOUR))).expect("summary");
    assert_eq!(restarted.start_s, 4.5 * HOUR);
    assert!(
        (restarted.plateau.median / LEVEL - 1.0).abs() < 0.01,
        "{:?}",
        restarted.plateau
    );
    assert_eq!(restarted.settling, Settling::Plateau);
    assert_eq!(restarted.settles_after_s, None);
    // Without the restart the window (the last 2.9 h) straddles the drop,
    // more of it before: the old level, and a fall that is no plateau.
    let straddling = summarize(&instance(None)).expect("summary");
    assert!(straddling.plateau.median > 1.5 * LEVEL);
    assert_eq!(straddling.settling, Settling::Open);
}

#[test]
fn the_live_heap_and_the_allocators_free_memory_grow_apart() {
    let mut rng = SplitMix64::new(12);
    let heap = series(Shape::Flat, quiet(), 5.0, 4.0 * HOUR, &mut rng).noisy;
    let free = series(Shape::Linear(0.05), quiet(), 5.0, 4.0 * HOUR, &mut rng).noisy;
    let memory: Vec<(f64, f64)> = heap
        .iter()
        .zip(&free)
        .map(|(h, f)| (h.0, h.1 + f.1))
        .collect();
    let instance = InstanceSeries {
        memory: &memory,
        live_heap: &heap,
        allocator_free: &free,
        cpu: &[],
        restart_s: None,
    };
    let summary = summarize(&instance).expect("summary");
    let heap_growth = summary.live_heap_growth.expect("heap growth");
    let free_growth = summary.allocator_free_growth.expect("free growth");
    assert_eq!(
        settling(&heap_growth, LEVEL),
        Settling::Plateau,
        "{heap_growth:?}"
    );
    assert!(
        (free_growth.per_hour / (0.05 * LEVEL) - 1.0).abs() < 0.1,
        "{free_growth:?}"
    );
    assert_eq!(summary.settling, Settling::Grows);
    let no_probe = InstanceSeries {
        live_heap: &[],
        allocator_free: &[],
        cpu: &[],
        ..instance
    };
    assert_eq!(
        summarize(&no_probe).expect("summary").live_heap_growth,
        None
    );
}

fn replica(level: f64, growth: f64, half: f64) -> InstanceSummary {
    InstanceSummary {
        start_s: 0.0,
        end_s: 4.0 * HOUR,
        window_start_s: 2.0 * HOUR,
        period_s: None,
        seen_s: 2.0 * HOUR,
        halves_agree: Some(true),
        plateau: Estimate {
            median: level,
            ci_low: level * 0.99,
            ci_high: level * 1.01,
        },
        plateau_at_s: 3.0 * HOUR,
        growth: Growth {
            per_hour: growth,
            ci_low: growth - half,
            ci_high: growth + half,
            std_err: half / t975(20),
            df: 20,
        },
        settling: Settling::Open,
        settles_after_s: None,
        live_heap_growth: None,
        allocator_free_growth: None,
        cpu_cores: None,
        load: Vec::new(),
    }
}

#[test]
fn replicas_combine_levels_over_the_replicas_and_growth_from_their_intervals() {
    let config = combine(&[replica(100.0, 1.0, 2.0), replica(110.0, 3.0, 2.0)]).expect("combined");
    // sd 7.07, t(1) = 12.706: 105 ± 12.706 · 7.07/√2 = 105 ± 63.5.
    assert_eq!(config.level.median, 105.0);
    assert!((config.level.ci_high - 105.0 - 12.706 * 5.0).abs() < 1e-9);
    // Each rate's standard error se = 2/t(20); the mean's se/√2, at
    // Welch–Satterthwaite's 40 degrees of freedom.
    let se = 2.0 / t975(20);
    assert_eq!((config.growth.per_hour, config.growth.df), (2.0, 40));
    assert!((config.growth.ci_high - 2.0 - t975(40) * se / 2f64.sqrt()).abs() < 1e-9);
    assert_eq!(config.settling, Settling::Open);
    // Open at 4 hours: centre 2 is 0.95 above the threshold (1%/h of 105),
    // so it would settle as growing once its half-width narrowed to that.
    let half = t975(40) * se / 2f64.sqrt();
    let after = config.settles_after_s.expect("open");
    assert!(
        (after - 4.0 * HOUR * (half / 0.95).powf(2.0 / 3.0)).abs() < 1e-6,
        "{after}"
    );
    let single = combine(&[replica(100.0, 0.0, 0.5)]).expect("combined");
    assert_eq!((single.level.ci_low, single.level.ci_high), (99.0, 101.0));
    assert_eq!(single.settling, Settling::Plateau);
}

#[test]
fn plateaus_apart_beyond_their_spread_separate_and_close_ones_say_what_would() {
    let baseline = [replica(100.0, 0.0, 1.0), replica(101.0, 0.0, 1.0)];
    let apart = separation(
        &[replica(60.0, 0.0, 1.0), replica(61.0, 0.0, 1.0)],
        &baseline,
        HOUR,
    )
    .expect("apart");
    assert!(apart.levels_separate && apart.plateau_ratio.ci_high < 1.0);
    assert_eq!(apart.levels_separate_with_replicas, None);
    let close = separation(
        &[replica(99.0, 0.0, 1.0), replica(100.0, 0.0, 1.0)],
        &baseline,
        HOUR,
    )
    .expect("close");
    assert!(!close.levels_separate);
    // A log ratio of 0.01 against a spread of 0.0071 a replica: R from
    // t(2R - 2) · 0.0071 · √(2/R) < 0.01, first at R = 6 (t(10) = 2.23).
    assert_eq!(close.levels_separate_with_replicas, Some(6));
    let hopeless = separation(
        &[replica(98.0, 0.0, 1.0), replica(103.0, 0.0, 1.0)],
        &baseline,
        HOUR,
    )
    .expect("close");
    assert_eq!(hopeless.levels_separate_with_replicas, None);
}

#[test]
fn growth_rates_within_noise_say_when_they_would_separate() {
    let baseline = [replica(100.0, 0.0, 2.0), replica(100.0, 0.0, 2.0)];
    let leaking = [replica(100.0, 1.0, 2.0), replica(100.0, 1.0, 2.0)];
    let s = separation(&leaking, &baseline, HOUR).expect("separation");
    assert!(!s.growths_separate);
    // Difference 1; each mean's se (2/t(20))/√2 at 40 df, so the
    // difference's 2/t(20) at 80 df: half-width h = t(80) · 2/t(20), which
    // narrows under 1 after h^(2/3) hours.
    let half = t975(80) * 2.0 / t975(20);
    assert_eq!(s.growth_difference.df, 80);
    let at = s.growths_separate_at_s.expect("time");
    assert!((at / HOUR - half.powf(2.0 / 3.0)).abs() < 1e-6, "{at}");
    let same = separation(&baseline, &baseline, HOUR).expect("separation");
    assert_eq!(same.growths_separate_at_s, None);
}

#[test]
fn a_configuration_projects_from_its_combined_level_and_growth() {
    let config = combine(&[replica(100.0, 1.0, 0.5), replica(100.0, 3.0, 0.5)]).expect("combined");
    let [day, week] =
        [24.0, 168.0].map(|h| project(&config.level, config.level_at_s, &config.growth, h * HOUR));
    // 100 at 3 hours, 2 an hour: 142 at 24 hours, 430 at a week.
    assert_eq!((day.at_s, day.value), (24.0 * HOUR, 142.0));
    assert_eq!((week.at_s, week.value), (168.0 * HOUR, 430.0));
    assert!(day.ci_low < 142.0 && week.ci_high > 430.0);
}
