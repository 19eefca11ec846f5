//! The verdict and its sentences over synthetic summaries of known truth.

use crate::growth::{weighted_sum, Growth, Settling};
use crate::instance::InstanceSummary;
use crate::render::render;
use crate::verdict::{verdict, Cause, Outcome};
use allocscope_analyze::figures::Estimate;
use allocscope_analyze::interval::t975;

const MIB: f64 = 1024.0 * 1024.0;
const HOUR: f64 = 3600.0;

/// A rate of `per_hour` MiB/h with a 95% interval `half` MiB/h either side.
fn rate(per_hour: f64, half: f64) -> Growth {
    Growth {
        per_hour: per_hour * MIB,
        ci_low: (per_hour - half) * MIB,
        ci_high: (per_hour + half) * MIB,
        std_err: half * MIB / t975(30),
        df: 30,
    }
}

/// A replica two hours long at `plateau_mib`, its memory growing at
/// `memory`, its live heap at `live` (`None`: no heap probe).
fn replica(plateau_mib: f64, memory: Growth, live: Option<Growth>) -> InstanceSummary {
    let level = plateau_mib * MIB;
    InstanceSummary {
        start_s: 0.0,
        end_s: 2.0 * HOUR,
        window_start_s: HOUR,
        period_s: None,
        seen_s: 2.0 * HOUR,
        halves_agree: Some(true),
        plateau: Estimate {
            median: level,
            ci_low: level * 0.99,
            ci_high: level * 1.01,
        },
        plateau_at_s: 1.5 * HOUR,
        growth: memory,
        settling: crate::growth::settling(&memory, level),
        settles_after_s: None,
        live_heap_growth: live,
        // The allocator holds what the live heap leaves of the growth.
        allocator_free_growth: live.and_then(|l| weighted_sum(&[(1.0, memory), (-1.0, l)])),
        cpu_cores: None,
        load: Vec::new(),
    }
}

/// `replica` spending `cores` of CPU time a second.
fn with_cpu(r: InstanceSummary, cores: f64) -> InstanceSummary {
    InstanceSummary {
        cpu_cores: Some(cores),
        ..r
    }
}

#[test]
fn a_lower_plateau_that_costs_cpu_beyond_the_budget_is_not_chosen_with_its_figure() {
    let flat = || rate(0.0, 2.0);
    let glibc = vec![
        with_cpu(replica(1000.0, flat(), None), 0.50),
        with_cpu(replica(1020.0, flat(), None), 0.51),
    ];
    let cheap = |cores: [f64; 2]| {
        vec![
            with_cpu(replica(600.0, flat(), None), cores[0]),
            with_cpu(replica(610.0, flat(), None), cores[1]),
        ]
    };
    // 40% less memory at 30% more CPU: over the 5% budget, not picked.
    let configs = vec![
        ("glibc".to_string(), glibc.clone()),
        ("tcmalloc".into(), cheap([0.65, 0.66])),
    ];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert_eq!(v.outcome, Outcome::KeepBaseline, "{v:?}");
    let cpu = v.configs[1].cpu.as_ref().expect("CPU measured");
    assert!(cpu.over_budget, "{cpu:?}");
    let ratio = cpu.ratio.expect("against glibc");
    assert!(
        (ratio.value - 1.30).abs() < 0.02 && ratio.ci_low > 1.05,
        "{ratio:?}"
    );
    let text = render(&v);
    assert!(
        text.contains("costs more CPU time than the budget")
            && text.contains("tcmalloc not chosen: CPU time 1.30x [")
            && text.contains("of glibc's, over the 5% budget"),
        "{text}"
    );
    // The same saving within the budget is picked.
    let configs = vec![
        ("glibc".to_string(), glibc),
        ("tcmalloc".into(), cheap([0.50, 0.52])),
    ];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert!(
        matches!(&v.outcome, Outcome::Pick { label, .. } if label == "tcmalloc"),
        "{v:?}"
    );
    assert!(!v.configs[1].cpu.as_ref().is_some_and(|c| c.over_budget));
}

#[test]
fn fragmentation_under_the_baseline_and_a_settled_winner_pick_the_winner() {
    let glibc = vec![
        replica(1000.0, rate(120.0, 25.0), Some(rate(0.0, 1.0))),
        replica(1040.0, rate(120.0, 25.0), Some(rate(0.0, 1.0))),
    ];
    let jemalloc = vec![
        replica(520.0, rate(0.0, 2.0), Some(rate(0.0, 1.0))),
        replica(530.0, rate(0.5, 2.0), Some(rate(0.0, 1.0))),
    ];
    let configs = vec![("jemalloc".to_string(), jemalloc), ("glibc".into(), glibc)];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert_eq!(
        v.baseline, "glibc",
        "glibc is the baseline wherever it comes"
    );
    let Outcome::Pick {
        label,
        plateau_ratio,
    } = &v.outcome
    else {
        panic!("{:?}", v.outcome)
    };
    assert_eq!(label, "jemalloc");
    assert!(
        (plateau_ratio.value - 0.515).abs() < 0.005 && plateau_ratio.ci_high < 1.0,
        "{plateau_ratio:?}"
    );
    let glibc = &v.configs[1];
    assert_eq!(glibc.summary.settling, Settling::Grows);
    assert_eq!(glibc.cause, Some(Cause::AllocatorHolds));
    assert_eq!(v.configs[0].settled_by_s, Some(HOUR));
    let text = render(&v);
    assert!(text.starts_with("Use jemalloc: plateau 0.51x ["), "{text}");
    assert!(
        text.contains("of glibc's; glibc still grows 120 MiB/h [103, 137]"),
        "{text}"
    );
    assert!(
        text.contains("the allocator holds it (fragmentation), not a leak"),
        "{text}"
    );
    assert!(
        text.contains("jemalloc stopped growing after 60.0 min at most"),
        "{text}"
    );
}

#[test]
fn a_live_heap_growing_in_every_configuration_is_a_leak_no_allocator_fixes() {
    let configs = vec![
        (
            "glibc".to_string(),
            vec![replica(800.0, rate(60.0, 5.0), Some(rate(58.0, 3.0)))],
        ),
        (
            "jemalloc".to_string(),
            vec![replica(700.0, rate(55.0, 5.0), Some(rate(57.0, 3.0)))],
        ),
    ];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert_eq!(v.outcome, Outcome::LeakEverywhere);
    let text = render(&v);
    assert!(
        text.starts_with("All configurations grow with their live heap: a leak in the program, which no allocator fixes (glibc 60.0 MiB/h [55.0, 65.0]; jemalloc 55.0"),
        "{text}"
    );
    // The same growth without a live heap names no cause and picks nothing.
    let unmeasured: Vec<_> = configs
        .iter()
        .map(|(l, r)| {
            let r = r.iter().map(|r| InstanceSummary {
                live_heap_growth: None,
                ..r.clone()
            });
            (l.clone(), r.collect::<Vec<_>>())
        })
        .collect();
    let v = verdict(&unmeasured, 2.0 * HOUR).expect("verdict");
    assert_eq!(v.configs[0].cause, Some(Cause::Unmeasured));
    assert!(
        matches!(v.outcome, Outcome::Inconclusive { .. }),
        "{:?}",
        v.outcome
    );
    assert!(
        render(&v).contains("unknown without its live heap"),
        "{}",
        render(&v)
    );
}

#[test]
fn rates_and_levels_that_do_not_separate_yet_say_how_long_they_would_take() {
    let configs = vec![
        (
            "glibc".to_string(),
            vec![replica(1000.0, rate(5.0, 20.0), None)],
        ),
        (
            "tcmalloc".to_string(),
            vec![replica(990.0, rate(-5.0, 20.0), None)],
        ),
    ];
    let v = verdict(&configs, HOUR).expect("verdict");
    let Outcome::Inconclusive {
        separate_after_s: Some(at),
        replicas: None,
    } = v.outcome
    else {
        panic!("{:?}", v.outcome)
    };
    // The difference's half-width (28.3 MiB/h) narrows as t^-3/2 to 10.
    let expected = HOUR * (20.0 * 2f64.sqrt() * t975(60) / t975(30) / 10.0).powf(2.0 / 3.0);
    assert!((at / expected - 1.0).abs() < 0.05, "{at} vs {expected}");
    let text = render(&v);
    assert!(
        text.starts_with("Inconclusive: the plateaus and growth rates do not separate from glibc's yet; at the current noise the growth rates would separate after about"),
        "{text}"
    );
    assert!(
        text.contains("one instance of a configuration has no spread to judge a plateau by"),
        "{text}"
    );
}

#[test]
fn memory_growing_beyond_a_growing_live_heap_is_a_leak_and_the_allocators_too() {
    // glibc's memory grows 120 MiB/h while its live heap grows 20: the
    // leak accounts for a sixth. jemalloc's grows 22 with a live heap of
    // 20: within noise of the leak alone.
    let configs = vec![
        (
            "glibc".to_string(),
            vec![replica(800.0, rate(120.0, 10.0), Some(rate(20.0, 3.0)))],
        ),
        (
            "jemalloc".to_string(),
            vec![replica(700.0, rate(22.0, 5.0), Some(rate(20.0, 3.0)))],
        ),
    ];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert_eq!(v.configs[0].cause, Some(Cause::LeakAndAllocator));
    assert_eq!(v.configs[1].cause, Some(Cause::Leak));
    assert_ne!(v.outcome, Outcome::LeakEverywhere, "{:?}", v.outcome);
    let text = render(&v);
    assert!(
        text.contains("glibc still grows 120 MiB/h [110, 130] with its live heap and faster: a leak in the program, and the allocator holds more besides"),
        "{text}"
    );
}

/// A database under its benchmark: its memory grows with its file cache
/// while its live heap and the free memory in its arenas stay flat.
#[test]
fn growth_with_a_flat_live_heap_and_flat_free_memory_is_outside_the_heap() {
    let outside = |plateau| {
        let mut r = replica(plateau, rate(16.0, 3.5), Some(rate(0.0, 0.5)));
        r.allocator_free_growth = Some(rate(0.0, 0.1));
        r
    };
    let configs = vec![
        ("glibc".to_string(), vec![outside(170.0), outside(171.0)]),
        ("jemalloc".to_string(), vec![outside(174.0), outside(175.0)]),
    ];
    let v = verdict(&configs, 0.5 * HOUR).expect("verdict");
    assert_eq!(v.configs[0].cause, Some(Cause::OutsideHeap));
    assert_eq!(v.outcome, Outcome::OutsideHeapEverywhere);
    let text = render(&v);
    assert!(
        text.starts_with("Keep glibc: all configurations grow outside the malloc heap")
            && !text.contains("fragmentation"),
        "{text}"
    );
    // One configuration whose allocator holds the growth instead: the
    // growth is no longer out of every allocator's reach.
    let mut holds = outside(174.0);
    holds.allocator_free_growth = Some(rate(15.0, 3.0));
    let configs = vec![
        configs[0].clone(),
        ("jemalloc".to_string(), vec![holds.clone(), holds]),
    ];
    let v = verdict(&configs, 0.5 * HOUR).expect("verdict");
    assert_eq!(v.configs[1].cause, Some(Cause::AllocatorHolds));
    assert_ne!(v.outcome, Outcome::OutsideHeapEverywhere);
    assert!(
        render(&v).contains("while its live heap and its allocator's free memory are flat: it grows outside the malloc heap"),
        "{}",
        render(&v)
    );
}

/// `replica` whose load printed `rps` requests a second (more is better).
fn with_throughput(r: InstanceSummary, rps: f64) -> InstanceSummary {
    let figure = crate::load_figures::LoadFigure {
        name: "rps".into(),
        higher_is_better: true,
        median: rps,
        readings: 20,
    };
    InstanceSummary {
        load: vec![figure],
        ..r
    }
}

#[test]
fn a_lower_plateau_whose_throughput_falls_beyond_the_budget_is_not_chosen() {
    let flat = || rate(0.0, 2.0);
    let glibc = vec![
        with_throughput(replica(1000.0, flat(), None), 1000.0),
        with_throughput(replica(1020.0, flat(), None), 1010.0),
    ];
    let lean = |rps: [f64; 2]| {
        vec![
            with_throughput(replica(600.0, flat(), None), rps[0]),
            with_throughput(replica(610.0, flat(), None), rps[1]),
        ]
    };
    // 40% less memory at 20% less throughput: under 1/1.05, not picked.
    let configs = vec![
        ("glibc".to_string(), glibc.clone()),
        ("jemalloc".into(), lean([800.0, 805.0])),
    ];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert_eq!(v.outcome, Outcome::KeepBaseline, "{v:?}");
    let load = &v.configs[1].load[0];
    assert!(load.over_budget && load.higher_is_better, "{load:?}");
    assert!(v.configs[0].load[0].ratio.is_none(), "the baseline's own");
    let text = render(&v);
    assert!(
        text.contains("costs beyond the budget in CPU time or its load's figures")
            && text.contains("jemalloc not chosen: the load's rps 0.80x [")
            && text.contains("of glibc's, over the 5% budget"),
        "{text}"
    );
    // More throughput is no cost: the saving is picked.
    let configs = vec![
        ("glibc".to_string(), glibc),
        ("jemalloc".into(), lean([1200.0, 1210.0])),
    ];
    let v = verdict(&configs, 2.0 * HOUR).expect("verdict");
    assert!(
        matches!(&v.outcome, Outcome::Pick { label, .. } if label == "jemalloc"),
        "{v:?}"
    );
}
