//! The verdict against what served each configuration: a candidate another
//! allocator served is never recommended, a baseline that did not run its
//! allocator is never kept, and one allocator everywhere withholds the
//! verdict.

use crate::analyze::verdict::Outcome;
use crate::analyze::{analyze_with_budget, fixture};
use crate::model::{RunStatus, StoredExperiment};
use crate::report::verdict_words::{explanation, reason};

const MIB: u64 = 1 << 20;

/// The fixture (glibc, jemalloc, mimalloc,eager) with jemalloc clearly the
/// smallest at the same speed, each configuration served by `served[i]`.
fn experiment(served: [&str; 3]) -> StoredExperiment {
    let mut e = fixture::experiment();
    for ((config, by), mib) in e.configs.iter_mut().zip(served).zip([100, 60, 80]) {
        config.runs.truncate(4);
        for (i, run) in config.runs.iter_mut().enumerate() {
            run.record.status = RunStatus::Ok;
            run.record.wall_s = 1.0 + 0.01 * i as f64;
            run.record.served_by = Some(by.to_string());
            for s in &mut run.record.samples {
                s.processes = 1;
                s.rss_bytes = (mib + i as u64) * MIB;
            }
        }
    }
    e
}

#[test]
fn configurations_that_ran_their_allocators_are_judged_as_before() {
    let v = analyze_with_budget(experiment(["glibc", "jemalloc", "mimalloc"]), "glibc", 5.0)
        .expect("analysis")
        .verdict;
    assert_eq!(v.config.as_deref(), Some("jemalloc"), "{}", reason(&v));
    assert!(!explanation(&v).iter().any(|l| l.contains("left out")));
}

#[test]
fn a_candidate_another_allocator_served_is_left_out_and_never_named() {
    let e = experiment(["glibc", "glibc", "mimalloc"]);
    let v = analyze_with_budget(e, "glibc", 5.0)
        .expect("analysis")
        .verdict;
    assert_ne!(v.config.as_deref(), Some("jemalloc"), "{}", reason(&v));
    assert!(!reason(&v).contains("jemalloc"), "{}", reason(&v));
    assert!(
        explanation(&v).iter().any(|l| l
            == "jemalloc: left out of the verdict: its runs were served by glibc, not jemalloc."),
        "{:?}",
        explanation(&v)
    );
}

#[test]
fn one_allocator_everywhere_withholds_the_verdict_and_says_which() {
    let e = experiment(["jemalloc", "jemalloc", "jemalloc"]);
    let v = analyze_with_budget(e, "glibc", 5.0)
        .expect("analysis")
        .verdict;
    assert_eq!(
        (v.outcome, v.config.as_deref()),
        (Outcome::Inconclusive, None)
    );
    assert!(
        reason(&v).contains("every configuration ran jemalloc"),
        "{}",
        reason(&v)
    );
    assert!(v.deploy.is_none());
}

#[test]
fn a_baseline_that_did_not_run_its_allocator_is_never_kept() {
    let e = experiment(["jemalloc", "jemalloc", "mimalloc"]);
    let v = analyze_with_budget(e, "glibc", 5.0)
        .expect("analysis")
        .verdict;
    assert_eq!(v.outcome, Outcome::Inconclusive, "{}", reason(&v));
    assert!(
        reason(&v).contains("the baseline glibc did not run glibc"),
        "{}",
        reason(&v)
    );
}
