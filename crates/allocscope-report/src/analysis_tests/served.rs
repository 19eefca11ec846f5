//! The verdict against what served each configuration: a candidate another
//! allocator served is never recommended, a baseline that did not run its
//! allocator is never kept, and one allocator everywhere withholds the
//! verdict.

use super::analyze_with_budget;
use crate::verdict_words::{explanation, reason};
use allocscope_analyze::served;
use allocscope_analyze::verdict::Outcome;
use allocscope_core::fixture;
use allocscope_core::model::{OwnApiUse, RunStatus, ServedPart, ServedTree, StoredExperiment, Via};

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

/// `experiment(served)` with each run's tree view: `parts[i]` for the
/// i-th configuration, as (allocator, share, program, via).
fn with_trees(served: [&str; 3], parts: [(&str, f64, &str, Via); 3]) -> StoredExperiment {
    let mut e = experiment(served);
    for (config, (allocator, share, program, via)) in e.configs.iter_mut().zip(parts) {
        for run in &mut config.runs {
            run.record.served_tree = Some(ServedTree {
                parts: vec![
                    ServedPart {
                        allocator: allocator.to_string(),
                        via: Some(via),
                        share,
                        programs: vec![program.to_string()],
                    },
                    ServedPart {
                        allocator: "glibc".to_string(),
                        via: Some(Via::Libc),
                        share: 1.0 - share,
                        programs: vec!["sh".to_string()],
                    },
                ],
                weighed_by: "pss".to_string(),
                own_api: Vec::new(),
                programs: vec!["sh".to_string(), program.to_string()],
            });
        }
    }
    e
}

#[test]
fn what_served_the_trees_memory_decides_and_is_said_with_its_share() {
    // The command (a script) was served by glibc; its daemon by jemalloc.
    let mut e = with_trees(
        ["glibc", "jemalloc", "mimalloc"],
        [
            ("jemalloc", 0.97, "varnishd", Via::Linked),
            ("jemalloc", 0.97, "varnishd", Via::Preloaded),
            ("mimalloc", 0.97, "varnishd", Via::Preloaded),
        ],
    );
    let glibc = &e.configs[0];
    assert_eq!(served::served_by(glibc), Some("jemalloc"));
    assert_eq!(
        crate::served_words::table_words(glibc).as_deref(),
        Some("glibc requested; jemalloc served 97% of the tree's memory (varnishd links it)")
    );
    assert_eq!(
        crate::served_words::table_words(&e.configs[1]).as_deref(),
        Some("served by jemalloc")
    );
    e.info.baseline = "jemalloc".to_string();
    let v = analyze_with_budget(e, "jemalloc", 5.0)
        .expect("analysis")
        .verdict;
    let lines = explanation(&v);
    let name = "glibc";
    assert!(
        lines.iter().any(|l| l
            == &format!("{name}: left out of the verdict: glibc requested; jemalloc served 97% of the tree's memory (varnishd links it).")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l
            == "glibc and jemalloc were both served by jemalloc: the comparison is of the same allocator."),
        "{lines:?}"
    );
    assert_ne!(v.config.as_deref(), Some("glibc"), "{}", reason(&v));
}

#[test]
fn a_preload_that_its_programs_own_api_calls_bypassed_is_left_out() {
    let mut e = with_trees(
        ["glibc", "jemalloc", "mimalloc"],
        [
            ("glibc", 0.99, "named", Via::Libc),
            ("jemalloc", 0.99, "named", Via::Linked),
            ("mimalloc", 0.99, "named", Via::Preloaded),
        ],
    );
    let usage = |malloc: &str, reach: &str| OwnApiUse {
        program: "named".to_string(),
        caller: "libisc.so".to_string(),
        api_of: "jemalloc".to_string(),
        reach: reach.to_string(),
        malloc: malloc.to_string(),
        symbols: vec!["mallocx".to_string(), "sdallocx".to_string()],
    };
    for (config, u) in e.configs.iter_mut().zip([
        usage("glibc", "glibc"),
        usage("jemalloc", "jemalloc"),
        usage("mimalloc", "jemalloc"),
    ]) {
        for run in &mut config.runs {
            if let Some(t) = run.record.served_tree.as_mut() {
                t.own_api = vec![u.clone()];
            }
        }
    }
    let mimalloc = e.configs[2].config.name.clone();
    assert!(served::bypassed(&e.configs[2]).is_some());
    assert!(served::bypassed(&e.configs[0]).is_none());
    let warnings = allocscope_analyze::linked::warnings(&e);
    assert!(
        warnings.iter().any(|w| w
            .contains("libisc.so (in named) calls jemalloc's own API (mallocx, sdallocx)")
            && w.contains(&format!(
                "under {mimalloc} those calls still reached jemalloc"
            ))
            && w.contains("-a jemalloc:KEY=VALUE reaches it")
            && w.contains("--variant")),
        "{warnings:?}"
    );
    let v = analyze_with_budget(e, "glibc", 5.0)
        .expect("analysis")
        .verdict;
    assert_ne!(v.config.as_deref(), Some(mimalloc.as_str()));
    let lines = explanation(&v);
    assert!(
        lines.iter().any(|l| l
            == &format!(
            "{mimalloc}: left out of the verdict: libisc.so (in named) calls jemalloc's own API \
             (mallocx, sdallocx), which preloading mimalloc cannot replace: that part of the \
             heap stayed in jemalloc."
        )),
        "{lines:?}"
    );
}

/// `with_trees` with each run's parts largest first, as a run records them.
fn largest_first(served: [&str; 3], parts: [(&str, f64, &str, Via); 3]) -> StoredExperiment {
    let mut e = with_trees(served, parts);
    for run in e.configs.iter_mut().flat_map(|c| c.runs.iter_mut()) {
        if let Some(tree) = run.record.served_tree.as_mut() {
            tree.parts.sort_by(|a, b| b.share.total_cmp(&a.share));
        }
    }
    e
}

#[test]
fn a_configuration_its_allocator_served_in_part_is_judged_as_asked() {
    // Jemalloc served 44% of the tree's PSS, glibc the rest (shared
    // buffers, helpers): judged as jemalloc, and no "same allocator" note.
    // At 3%, with the command's own check saying glibc, it is left out.
    let configs = ["glibc", "jemalloc", "mimalloc"];
    let trees = |share| {
        [
            ("glibc", 1.0, "postgres", Via::Libc),
            ("jemalloc", share, "postgres", Via::Preloaded),
            ("mimalloc", 0.97, "postgres", Via::Preloaded),
        ]
    };
    let part = largest_first(configs, trees(0.44));
    assert_eq!(served::mismatch(&part.configs[1]), None);
    assert!(
        served::left_out(&part).is_empty(),
        "{:?}",
        served::left_out(&part)
    );
    // Glibc's share is the tree's word only where the run's own check of
    // the command's maps agrees that glibc served it.
    let sliver = largest_first(["glibc", "glibc", "mimalloc"], trees(0.03));
    assert_eq!(served::mismatch(&sliver.configs[1]), Some("glibc"));
}
