//! The verdict on hand-built experiments: a clear winner, a winner over
//! budget, a saving within noise, too few runs, and multi-process trees.

use super::analyze_with_budget;
use crate::verdict_words::{deploy_snippets, explanation, kept_words, reason};
use allocscope_analyze::verdict::*;
use allocscope_analyze::{analyze_with, types::Analysis};
use allocscope_core::fixture;
use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::RunStatus;
use allocscope_core::model::StoredExperiment;

const MIB: f64 = 1048576.0;

/// The fixture's three configurations (glibc, jemalloc, mimalloc,eager),
/// every run ok and single-process, with the given mean RSS (MiB) and wall
/// time (s) per run; its CPU time 80% of the wall time, so the budget's
/// default figure (CPU time, guarded by wall time) moves with it.
fn experiment(figures: [&[(f64, f64)]; 3]) -> StoredExperiment {
    let mut e = fixture::experiment();
    for (config, runs) in e.configs.iter_mut().zip(figures) {
        config.runs.truncate(runs.len());
        for (run, &(mib, wall)) in config.runs.iter_mut().zip(runs) {
            run.record.status = RunStatus::Ok;
            run.record.wall_s = wall;
            (run.record.user_s, run.record.sys_s) = (0.8 * wall, 0.0);
            // Flat samples: the run's mean RSS is `mib`, its PSS 90% of it.
            for s in &mut run.record.samples {
                s.processes = 1;
                s.rss_bytes = (mib * MIB) as u64;
                s.pss_bytes = Some((mib * MIB * 0.9) as u64);
            }
        }
    }
    e
}

fn judge(e: StoredExperiment, budget: f64) -> Analysis {
    analyze_with_budget(e, "glibc", budget).expect("analysis")
}

const GLIBC: &[(f64, f64)] = &[(100.0, 1.00), (101.0, 1.01), (99.0, 0.99), (100.5, 1.0)];
const SMALL_SAME_SPEED: &[(f64, f64)] = &[(60.0, 1.0), (61.0, 1.01), (59.0, 0.99), (60.5, 1.0)];
const MID_FASTER: &[(f64, f64)] = &[(80.0, 0.9), (81.0, 0.91), (79.0, 0.89), (80.5, 0.9)];
const SMALL_SLOWER: &[(f64, f64)] = &[(60.0, 1.2), (61.0, 1.21), (59.0, 1.19), (60.5, 1.2)];
const MID_SLOWER: &[(f64, f64)] = &[(80.0, 1.3), (81.0, 1.31), (79.0, 1.29), (80.5, 1.3)];

#[test]
fn recommends_the_lowest_memory_within_budget_and_says_how_to_deploy_it() {
    let v = judge(experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::Recommend);
    assert_eq!(v.config.as_deref(), Some("jemalloc"));
    assert_eq!(v.memory.id, "mean_rss_bytes");
    assert!(reason(&v).contains("Use jemalloc"), "{}", reason(&v));
    assert!(reason(&v).contains("0.60x"), "{}", reason(&v));
    assert!(
        reason(&v).contains("2 configurations that qualify"),
        "{}",
        reason(&v)
    );
    assert_eq!(explanation(&v).len(), 2);
    assert!(
        explanation(&v)[0].contains("saves 40%"),
        "{:?}",
        explanation(&v)
    );
    // A recommendation's deploy lines carry its limit; nothing is "kept".
    assert_eq!(v.kept_limit, None);
    let d = deploy_snippets(&v.deploy.expect("deploy lines"));
    assert!(
        d.shell
            .starts_with("env LD_PRELOAD=/usr/lib/libjemalloc.so.2 ./bench"),
        "{}",
        d.shell
    );
    // The limit jemalloc needs: its highest peak RSS (this experiment's
    // runs have one process each, no cgroup) plus 20%.
    assert_eq!(
        d.systemd,
        "Environment=\"LD_PRELOAD=/usr/lib/libjemalloc.so.2\"\n\
         # memory limit: 74 MiB (peak RSS 61.0 MiB + 20%)\nMemoryMax=74M\n"
    );
    assert!(d
        .dockerfile
        .contains("apt-get install -y --no-install-recommends libjemalloc2"));
    assert!(d
        .dockerfile
        .contains("ENV LD_PRELOAD=\"/usr/lib/libjemalloc.so.2\"\n"));
    assert_eq!(
        d.kubernetes,
        "env:\n  - name: LD_PRELOAD\n    value: \"/usr/lib/libjemalloc.so.2\"\n\
         # memory limit: 74 MiB (peak RSS 61.0 MiB + 20%)\nresources:\n  requests:\n    \
         memory: 74Mi\n  limits:\n    memory: 74Mi\n"
    );
}

#[test]
fn a_configuration_over_budget_is_passed_over_and_named() {
    let v = judge(experiment([GLIBC, SMALL_SLOWER, MID_FASTER]), 5.0).verdict;
    assert_eq!(v.config.as_deref(), Some("mimalloc,eager"));
    assert!(
        explanation(&v)[0].contains("jemalloc")
            && explanation(&v)[0].contains("over the 5% budget"),
        "{:?}",
        explanation(&v)
    );
    let d = v.deploy.expect("deploy lines");
    assert!(d.dockerfile.contains("libmimalloc2.0"), "{}", d.dockerfile);
    assert!(d
        .kubernetes
        .contains("- name: MIMALLOC_EAGER_COMMIT\n    value: \"1\""));
}

#[test]
fn a_larger_budget_admits_a_slower_configuration() {
    let v = judge(experiment([GLIBC, SMALL_SLOWER, MID_SLOWER]), 25.0).verdict;
    assert_eq!(v.config.as_deref(), Some("jemalloc"));
    assert_eq!(v.max_slowdown_pct, 25.0);
}

#[test]
fn keeps_the_default_when_every_candidate_is_over_budget() {
    let v = judge(experiment([GLIBC, SMALL_SLOWER, MID_SLOWER]), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::KeepDefault);
    assert_eq!(v.config.as_deref(), Some("glibc"));
    assert!(
        reason(&v).starts_with("Keep the default (glibc)"),
        "{}",
        reason(&v)
    );
    assert!(v.deploy.is_none());
    assert!(explanation(&v)
        .iter()
        .all(|l| l.contains("over the 5% budget")));
    // No deploy lines, but the limit the kept default needs, with its lines.
    let kept = v.kept_limit.expect("the kept default's limit");
    let words = kept_words(&kept);
    assert!(
        words.starts_with("if you keep glibc: memory limit "),
        "{words}"
    );
    let lines = LimitLines::of(&kept.memory_limit);
    assert!(lines.systemd.starts_with("MemoryMax="), "{lines:?}");
    assert!(lines.kubernetes.contains("limits:"), "{lines:?}");
}

#[test]
fn a_memory_ratio_whose_interval_straddles_the_threshold_is_inconclusive() {
    // Its figure a saving (0.96x), its interval wide: a kept default,
    // even unproven, would go against what it measured.
    let noisy: &[(f64, f64)] = &[(85.0, 1.0), (110.0, 1.0), (92.0, 1.0), (100.0, 1.0)];
    let v = judge(experiment([GLIBC, noisy, noisy]), 5.0).verdict;
    // Too noisy to tell a saving from none: unsettled, never "keep the default".
    assert_eq!(v.outcome, Outcome::Inconclusive);
    // What is settled of it comes first, then what is not.
    assert!(
        reason(&v).contains(
            "jemalloc's CPU time, 1.00x [0.99, 1.01], stays within the 5% budget; its mean RSS, \
             0.96x [0.81, 1.14], is not settled yet (about"
        ),
        "{}",
        reason(&v)
    );
    // While it is open, the baseline runs on: its limit, no recommendation.
    assert_eq!(
        v.kept_limit.as_ref().map(|k| k.config.as_str()),
        Some("glibc")
    );
    assert!(v.deploy.is_none());
    assert!(
        explanation(&v)[0].contains("mean RSS unsettled"),
        "{:?}",
        explanation(&v)
    );
}

#[test]
fn at_the_time_box_open_candidates_that_measured_no_saving_leave_the_default_kept_unproven() {
    // Mean RSS 0.99x [0.87, 1.13]: open, its figure short of the 3% saving.
    let noisy: &[(f64, f64)] = &[(90.0, 1.0), (110.0, 1.0), (95.0, 1.0), (104.0, 1.0)];
    let v = judge(experiment([GLIBC, noisy, noisy]), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::KeepUnproven);
    assert_eq!(v.config.as_deref(), Some("glibc"));
    assert_eq!(v.unsettled.len(), 2);
    assert!(
        reason(&v).starts_with(
            "Keep the default (glibc), not proven: in 4 rounds of the baseline no candidate \
             measured a saving of 3% or more of mean RSS"
        ) && reason(&v).contains("its mean RSS, 0.99x [0.87, 1.13], is not settled yet"),
        "{}",
        reason(&v)
    );
    // Kept: its limit, nothing to deploy.
    assert_eq!(
        v.kept_limit.as_ref().map(|k| k.config.as_str()),
        Some("glibc")
    );
    assert!(v.deploy.is_none());
    let json = serde_json::to_value(crate::verdict_json::VerdictOut::of(&v)).expect("json");
    assert_eq!(json["outcome"], "keep_unproven", "{json}");
    assert_eq!(json["reason_data"]["baseline_rounds"], 4, "{json}");
}

#[test]
fn a_candidate_stopped_as_unresolvable_is_said_to_differ_by_no_more_than_the_experiment_resolves() {
    // Its figure a saving (0.96x), its interval wide: a kept default,
    // even unproven, would go against what it measured.
    let noisy: &[(f64, f64)] = &[(85.0, 1.0), (110.0, 1.0), (92.0, 1.0), (100.0, 1.0)];
    let judging = JudgeSettings {
        unresolvable: vec!["jemalloc".into()],
        ..JudgeSettings::default()
    };
    let e = experiment([GLIBC, noisy, SMALL_SLOWER]);
    let analysis = analyze_with(e, "glibc", &judging).expect("analysis");
    // On the screen it is on the open line alone, never also "not chosen".
    let screen = crate::screen::ScreenReporter {
        report: "allocscope report 1".into(),
    };
    let text = String::from_utf8(crate::Reporter::render(&screen, &analysis).expect("screen"))
        .expect("utf-8")
        .replace("\n  ", " ");
    let line = |label: &str| {
        (text.lines())
            .find(|l| l.starts_with(label))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("open: ").contains("jemalloc (mean RSS: no difference this experiment can resolve"),
        "{text}"
    );
    assert!(!line("not chosen: ").contains("jemalloc"), "{text}");
    let v = analysis.verdict;
    // Neither settled for it nor against it: open, never "keep the default".
    assert_eq!(v.outcome, Outcome::Inconclusive);
    assert_eq!(v.unsettled.len(), 1);
    assert_eq!(v.unsettled[0].unresolvable_after, Some(4));
    assert!(v.unsettled[0].figures.is_some());
    assert!(
        reason(&v).contains(
            "its mean RSS, 0.96x [0.81, 1.14], is within this machine's noise: no difference \
             this experiment can resolve after 4 rounds; settling it would take about"
        ),
        "{}",
        reason(&v)
    );
    assert!(
        explanation(&v)[0]
            .contains("no difference this experiment can resolve on mean RSS after 4 rounds"),
        "{:?}",
        explanation(&v)
    );
    let json = serde_json::to_value(crate::verdict_json::VerdictOut::of(&v)).expect("json");
    assert_eq!(json["unsettled"][0]["unresolvable_after"], 4, "{json}");
    assert_eq!(
        json["explanation_data"][0]["place"]["standing"], "unresolvable",
        "{json}"
    );
}

#[test]
fn too_few_ok_runs_are_inconclusive_never_keep_the_default() {
    let one: &[(f64, f64)] = &[(100.0, 1.0)];
    let v = judge(experiment([one, SMALL_SAME_SPEED, MID_FASTER]), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::Inconclusive);
    assert_eq!(v.config, None);
    assert!(
        reason(&v).starts_with("Inconclusive after 1 round"),
        "{}",
        reason(&v)
    );
    assert_eq!(v.unsettled.len(), 2);

    let mut e = experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]);
    for run in &mut e.configs[1].runs[1..] {
        run.record.status = RunStatus::Failed;
    }
    let v = judge(e, 5.0).verdict;
    assert_eq!(v.config.as_deref(), Some("mimalloc,eager"));
    assert!(
        explanation(&v)[0].contains("one round: no interval")
            && explanation(&v)[0].contains("open"),
        "{:?}",
        explanation(&v)
    );
}

#[test]
fn multi_process_trees_are_judged_by_mean_pss() {
    let mut e = experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]);
    for s in &mut e.configs[0].runs[0].record.samples {
        s.processes = 3;
    }
    let v = judge(e.clone(), 5.0).verdict;
    assert_eq!(v.memory.id, "mean_pss_bytes");
    assert!(reason(&v).contains("mean PSS"), "{}", reason(&v));
    // `--memory-metric peak` on the same tree: peak PSS, in words too.
    let judging = allocscope_core::judging::JudgeSettings {
        memory_metric: Some(allocscope_core::judging::MemoryChoice::Tree("peak".into())),
        ..Default::default()
    };
    let v = allocscope_analyze::analyze_with(e, "glibc", &judging)
        .expect("analysis")
        .verdict;
    assert_eq!(v.memory.id, "peak_pss_bytes");
    assert!(
        reason(&v).contains("Use jemalloc: peak PSS"),
        "{}",
        reason(&v)
    );
}

#[test]
fn glibc_tunables_deploy_without_a_package() {
    let config = allocscope_core::model::Config {
        name: "glibc:arena_max=2".into(),
        allocator: "glibc".into(),
        library: None,
        version: None,
        env: vec![("GLIBC_TUNABLES".into(), "glibc.malloc.arena_max=2".into())],
        command: None,
    };
    let d = deploy(&config, &["my app".to_string()], None);
    assert_eq!(
        d.shell,
        "env GLIBC_TUNABLES=glibc.malloc.arena_max=2 'my app'\n"
    );
    assert_eq!(
        d.dockerfile,
        "ENV GLIBC_TUNABLES=\"glibc.malloc.arena_max=2\"\n"
    );
}

#[test]
fn a_runner_up_within_noise_of_the_winner_is_named_and_one_beaten_beyond_noise_is_not() {
    // 60 vs 61 MiB, with run-to-run noise that makes the intervals overlap.
    const NEAR: &[(f64, f64)] = &[(62.0, 1.0), (59.0, 1.01), (63.0, 0.99), (60.0, 1.0)];
    let v = judge(experiment([GLIBC, SMALL_SAME_SPEED, NEAR]), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::Recommend);
    assert!(
        reason(&v).contains("mimalloc,eager (mean RSS")
            && reason(&v).contains("is within noise of it"),
        "{}",
        reason(&v)
    );
    // 60 vs 80 MiB: the winner is better beyond noise, so no tie is named.
    let v = judge(experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]), 5.0).verdict;
    assert!(!reason(&v).contains("within noise of it"), "{}", reason(&v));
}

#[test]
fn a_configuration_oom_killed_under_the_limit_is_settled_out_and_never_recommended() {
    // jemalloc would win on its figures, but one of its runs was OOM-killed.
    let mut e = experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]);
    e.info.host.run_memory_limit_bytes = Some(64 << 20);
    e.configs[1].runs[2].record.status = RunStatus::Oom;
    let v = judge(e.clone(), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::Recommend);
    assert_eq!(v.config.as_deref(), Some("mimalloc,eager"));
    assert!(
        explanation(&v).contains(
            &"jemalloc: not chosen: OOM-killed under the 64.0 MiB limit in 1 of 4 runs.".into()
        ),
        "{:?}",
        explanation(&v)
    );
    assert!(v.unsettled.is_empty(), "{:?}", v.unsettled);
    // Every candidate killed: keep the default, never a recommendation.
    for run in &mut e.configs[2].runs {
        run.record.status = RunStatus::Oom;
    }
    let v = judge(e, 5.0).verdict;
    assert_eq!(v.outcome, Outcome::KeepDefault);
    assert!(
        explanation(&v)
            .iter()
            .any(|l| l.contains("OOM-killed under the 64.0 MiB limit in 4 of 4 runs")),
        "{:?}",
        explanation(&v)
    );
}

#[test]
fn a_configuration_a_race_ruled_out_is_settled_out_and_never_recommended() {
    // jemalloc would win on its figures, but tune's race stopped running it.
    let ruled = |names: &[&str]| JudgeSettings {
        ruled_out: allocscope_core::judging::RuledOut(
            names
                .iter()
                .map(|n| (n.to_string(), "after round 2".into()))
                .collect(),
        ),
        ..JudgeSettings::default()
    };
    let e = experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]);
    let v = analyze_with(e.clone(), "glibc", &ruled(&["jemalloc"]))
        .expect("analysis")
        .verdict;
    assert_eq!(v.outcome, Outcome::Recommend);
    assert_eq!(v.config.as_deref(), Some("mimalloc,eager"));
    assert!(
        explanation(&v)
            .contains(&"Not chosen, dropped by the race: jemalloc (after round 2).".into()),
        "{:?}",
        explanation(&v)
    );
    // Every candidate ruled out: keep the default, nothing left open.
    let v = analyze_with(e, "glibc", &ruled(&["jemalloc", "mimalloc,eager"]))
        .expect("analysis")
        .verdict;
    assert_eq!(v.outcome, Outcome::KeepDefault);
    assert!(v.unsettled.is_empty(), "{:?}", v.unsettled);
    // The claim covers the candidates the race judged, none here.
    assert!(
        reason(&v).contains("of the 0 candidates the race judged by their intervals, none saves")
            && reason(&v).contains("The other 2 were dropped on their first readings"),
        "{}",
        reason(&v)
    );
}

/// A fixed-duration program's walls: start-up noise of a percent or so is
/// still flat; a 4% difference is a program that did its work faster.
#[test]
fn walls_within_two_percent_are_flat_and_four_percent_apart_are_not() {
    let walls = |w: f64| [(100.0, w); 4];
    let table = allocscope_analyze::metric_table::of_parts(false, &[]);
    let wall = allocscope_analyze::metric_table::find(&table, "wall_s").expect("wall time");
    let flat = experiment([&walls(1.5), &walls(1.52), &walls(1.5)]);
    assert_eq!(fixed_duration(&flat, wall), Some(1.5));
    let apart = experiment([&walls(1.5), &walls(1.56), &walls(1.5)]);
    assert_eq!(fixed_duration(&apart, wall), None);
    // A busy machine lengthens some runs: the fastest of each still agree.
    let busy = [(100.0, 1.5), (100.0, 1.58), (100.0, 1.6), (100.0, 1.51)];
    let lengthened = experiment([&walls(1.5), &busy, &walls(1.5)]);
    assert_eq!(fixed_duration(&lengthened, wall), Some(1.5));
}

/// Every run of the fixture's `index`-th configuration failed with
/// `initdb`'s own words on its stderr.
fn every_run_failing(mut e: StoredExperiment, index: usize) -> StoredExperiment {
    for run in &mut e.configs[index].runs {
        run.record.status = RunStatus::Failed;
        run.record.exit_code = Some(1);
        run.record.message = Some("exited with code 1".into());
        run.record.stderr_tail = Some("initdb: cannot write /nonexistent".into());
    }
    e
}

#[test]
fn a_candidate_whose_every_run_failed_is_named_so_and_settled_out() {
    // mimalloc fails every run; jemalloc saves 40% within the budget.
    let e = every_run_failing(experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]), 2);
    let v = judge(e, 5.0).verdict;
    assert_eq!(v.config.as_deref(), Some("jemalloc"));
    assert!(v.unsettled.is_empty(), "not open: {:?}", v.unsettled);
    let words = explanation(&v);
    assert!(
        words.iter().any(|w| w
            == "mimalloc,eager: not chosen: every run failed (4 of 4): exited with code 1; \
                stderr: initdb: cannot write /nonexistent."),
        "{words:?}"
    );
    // Alone beside the baseline, it leaves nothing open: keep the default,
    // never "not settled yet".
    let mut e = every_run_failing(experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]), 2);
    e.configs.remove(1);
    let v = judge(e, 5.0).verdict;
    assert_eq!(v.outcome, Outcome::KeepDefault, "{}", reason(&v));
    assert!(!reason(&v).contains("not settled"), "{}", reason(&v));
}

#[test]
fn a_baseline_whose_every_run_failed_gives_no_verdict_and_says_why() {
    let e = every_run_failing(experiment([GLIBC, SMALL_SAME_SPEED, MID_FASTER]), 0);
    let v = judge(e, 5.0).verdict;
    assert_eq!(v.outcome, Outcome::Inconclusive);
    assert_eq!((v.config.as_deref(), v.deploy.as_ref()), (None, None));
    assert_eq!(
        reason(&v),
        "No verdict: every run of the baseline glibc failed (4 of 4): exited with code 1; \
         stderr: initdb: cannot write /nonexistent. Fix what stops it under glibc, or choose \
         another --baseline."
    );
}

/// jemalloc: 40% less memory, settled; its wall time 0.95-1.10x of glibc's
/// round by round, an interval across the 5% budget.
const SMALL_NOISY: &[(f64, f64)] = &[(60.0, 1.10), (61.0, 0.95), (59.0, 1.08), (60.5, 0.97)];

#[test]
fn at_the_time_box_memory_settled_and_performance_open_recommends_with_performance_unproven() {
    let v = judge(experiment([GLIBC, SMALL_NOISY, MID_SLOWER]), 5.0).verdict;
    assert_eq!(v.outcome, Outcome::RecommendUnproven, "{}", reason(&v));
    assert_eq!(v.config.as_deref(), Some("jemalloc"));
    assert!(v.deploy.is_some(), "the pick's deploy lines");
    let Reason::RecommendUnproven {
        memory,
        performance: Some(p),
        rounds,
        ..
    } = &v.reason
    else {
        panic!("{:?}", v.reason)
    };
    assert!(
        memory.ci_high < 0.97 && p.ci_low < 1.05 && p.ci_high > 1.05,
        "{p:?}"
    );
    assert_eq!(*rounds, 4);
    let words = reason(&v);
    assert!(
        words.starts_with("Use jemalloc: mean RSS 0.60x [")
            && words.contains("; CPU time 1.02x [")
            && words.contains(
                "], not resolved at this noise against the 5% budget after 4 rounds; wall time \
                 1.02x [0.90, 1.16], not over it beyond noise."
            ),
        "{words}"
    );
    // The pick is not also listed as open.
    assert!(v.unsettled.iter().all(|u| u.config != "jemalloc"));
    // An interrupted experiment's rounds did not run out: still open.
    let mut e = experiment([GLIBC, SMALL_NOISY, MID_SLOWER]);
    e.status = "interrupted".into();
    let v = judge(e, 5.0).verdict;
    assert_eq!(v.outcome, Outcome::Inconclusive, "{}", reason(&v));
}

#[test]
fn not_chosen_on_the_screen_says_what_a_candidate_costs() {
    // mimalloc uses 30% more memory (1.30x): "uses 30% more", not "saves
    // under 3%".
    const BIGGER: &[(f64, f64)] = &[(130.0, 1.0), (131.0, 1.01), (129.0, 0.99), (130.5, 1.0)];
    let a = judge(experiment([GLIBC, SMALL_SAME_SPEED, BIGGER]), 5.0);
    let screen = crate::screen::Screen::of(&a);
    let (_, line) = (screen.verdict.iter())
        .find(|(label, _)| *label == "not chosen")
        .expect("a not-chosen line");
    assert!(line.contains("mimalloc,eager (uses 30% more)"), "{line}");
}
