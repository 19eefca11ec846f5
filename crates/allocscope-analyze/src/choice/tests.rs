//! Which rows judge an experiment: tree words by the tree measured, a row
//! named on its own whatever the tree, the defaults by the kind of
//! experiment, and a stored choice the table lacks.

use super::*;
use allocscope_core::fixture;
use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::{Latency, ServiceInfo, ServiceRecord};

/// The rows `memory` / `perf` choose for `e`.
fn chosen(
    e: &StoredExperiment,
    memory: Option<MemoryChoice>,
    perf: Option<&str>,
) -> (String, String) {
    let table = metric_table::of_experiment(&e.info);
    let judging = JudgeSettings {
        memory_metric: memory,
        perf_metric: perf.map(str::to_string),
        ..JudgeSettings::default()
    };
    let m = measures(e, 0, &table, &judging);
    (m.memory.id, m.perf.id)
}

fn tree(word: &str) -> Option<MemoryChoice> {
    Some(MemoryChoice::Tree(word.to_string()))
}

/// The fixture with every sample of one process.
fn single_process() -> StoredExperiment {
    let mut e = fixture::experiment();
    for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
        for s in &mut run.record.samples {
            s.processes = 1;
        }
    }
    e
}

#[test]
fn a_tree_word_names_pss_for_several_processes_and_rss_for_one() {
    let multi = fixture::experiment();
    assert!(several_processes(&multi));
    assert_eq!(chosen(&multi, tree("peak"), None).0, "peak_pss_bytes");
    assert_eq!(chosen(&multi, tree("mean"), None).0, "mean_pss_bytes");
    assert_eq!(chosen(&multi, None, None).0, "mean_pss_bytes");
    // There is no final PSS: final RSS whatever the tree.
    assert_eq!(chosen(&multi, tree("final"), None).0, "final_rss_bytes");
    let single = single_process();
    assert!(!several_processes(&single));
    assert_eq!(chosen(&single, tree("peak"), None).0, "peak_rss_bytes");
    assert_eq!(chosen(&single, None, None).0, "mean_rss_bytes");
}

#[test]
fn pss_is_chosen_only_when_every_configuration_read_it() {
    let mut e = fixture::experiment();
    for run in &mut e.configs[2].runs {
        for s in &mut run.record.samples {
            s.pss_bytes = None;
        }
    }
    assert_eq!(chosen(&e, tree("peak"), None).0, "peak_rss_bytes");
}

#[test]
fn a_row_named_on_its_own_is_judged_by_whatever_the_tree() {
    let multi = fixture::experiment();
    let row = |id: &str| Some(MemoryChoice::Row(id.to_string()));
    assert_eq!(
        chosen(&multi, row("peak_rss_bytes"), None).0,
        "peak_rss_bytes"
    );
    assert_eq!(
        chosen(&single_process(), row("peak_pss_bytes"), None).0,
        "peak_pss_bytes"
    );
    assert_eq!(chosen(&multi, None, Some("cpu_s")).1, "cpu_s");
}

#[test]
fn a_stored_choice_the_table_lacks_measures_nothing() {
    let e = fixture::experiment();
    let table = metric_table::of_experiment(&e.info);
    let judging = JudgeSettings {
        memory_metric: Some(MemoryChoice::Row("rss_end_load_bytes".to_string())),
        perf_metric: Some("user.qps".to_string()),
        ..JudgeSettings::default()
    };
    let m = measures(&e, 0, &table, &judging);
    assert_eq!(
        (m.memory.id.as_str(), m.perf.id.as_str()),
        ("rss_end_load_bytes", "user.qps")
    );
    let run = &e.configs[0].runs[0];
    assert_eq!(
        ((m.memory.extract)(run), (m.perf.extract)(run)),
        (None, None)
    );
}

/// The fixture as a service: every run's end-of-load RSS (and PSS when
/// `pss`), and its latency when `latency`, else only the load's duration.
fn service(pss: bool, latency: bool) -> StoredExperiment {
    let mut e = fixture::experiment();
    e.info.service = Some(ServiceInfo::default());
    for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
        let rss = run.record.samples[3].rss_bytes;
        run.record.service = Some(ServiceRecord {
            load_start_s: Some(0.0),
            load_end_s: Some(run.record.wall_s),
            rss_end_load_bytes: Some(rss),
            pss_end_load_bytes: pss.then_some(rss / 2),
            latency: latency.then_some(Latency {
                p50_ms: 1.0,
                p90_ms: 2.0,
                p95_ms: run.record.wall_s,
                p99_ms: 4.0,
                p999_ms: 5.0,
                max_ms: 6.0,
                requests: 100,
                errors: 0,
                throughput_rps: 50.0,
            }),
            ..ServiceRecord::default()
        });
    }
    e
}

/// The rows `e` is judged by without flags: (memory, performance, guard).
fn by_default(e: &StoredExperiment) -> (String, String, Option<String>) {
    let table = metric_table::of_experiment(&e.info);
    let m = measures(e, 0, &table, &JudgeSettings::default());
    (m.memory.id, m.perf.id, m.guard.map(|g| g.id))
}

#[test]
fn a_service_is_judged_by_its_end_of_load_memory_and_cpu_per_request_guarded_by_latency() {
    assert_eq!(
        by_default(&service(true, true)),
        (
            "pss_end_load_bytes".to_string(),
            "cpu_per_request_ms".to_string(),
            Some("p95_ms".to_string())
        )
    );
    // A load command of its own: no count of requests, so the tree's CPU,
    // guarded by the load's duration.
    assert_eq!(
        by_default(&service(false, false)),
        (
            "rss_end_load_bytes".to_string(),
            "cpu_s".to_string(),
            Some("load_s".to_string())
        )
    );
    // The mean over the server's whole life, when asked.
    assert_eq!(
        chosen(&service(true, true), tree("mean"), None).0,
        "mean_pss_bytes"
    );
}

#[test]
fn a_batch_program_is_judged_by_its_cpu_time_guarded_by_its_wall_time() {
    let e = fixture::experiment();
    let (_, perf, guard) = by_default(&e);
    assert_eq!((perf.as_str(), guard.as_deref()), ("cpu_s", Some("wall_s")));
    // A row named on its own is judged alone, without a guard.
    let table = metric_table::of_experiment(&e.info);
    for named in ["wall_s", "cpu_s"] {
        let judging = JudgeSettings {
            perf_metric: Some(named.to_string()),
            ..JudgeSettings::default()
        };
        let m = measures(&e, 0, &table, &judging);
        assert_eq!((m.perf.id.as_str(), m.guard), (named, None));
    }
}

/// The fixture with every run's wall time `wall_s` (1 ms apart) and its
/// CPU time `share` of it.
fn with_walls(wall_s: f64, share: f64) -> StoredExperiment {
    let mut e = fixture::experiment();
    for run in e.configs.iter_mut().flat_map(|c| &mut c.runs) {
        run.record.wall_s = wall_s + 0.001 * f64::from(run.record.index);
        (run.record.user_s, run.record.sys_s) = (share * run.record.wall_s, 0.0);
    }
    e
}

#[test]
fn flat_walls_of_a_short_or_idle_program_leave_the_cpu_figure_judging() {
    // A 0.1 s program's fastest runs agree within 2% by chance.
    assert_eq!(by_default(&with_walls(0.1, 0.9)).1, "cpu_s");
    // A program that sleeps through a set time spends CPU on its work.
    assert_eq!(by_default(&with_walls(10.0, 0.05)).1, "cpu_s");
    assert_eq!(
        by_default(&with_walls(10.0, 0.05)).2.as_deref(),
        Some("wall_s")
    );
    // One run of a configuration reading 0 s of CPU (a run shorter than
    // the clock's step) leaves its siblings' CPU measured.
    let mut one_zero = with_walls(0.1, 0.9);
    one_zero.configs[1].runs[0].record.user_s = 0.0;
    assert_eq!(by_default(&one_zero).1, "cpu_s");
}

#[test]
fn a_fixed_duration_program_or_runs_without_cpu_times_are_judged_by_wall_time() {
    // Every configuration's fastest run within 2%, a core busy: the
    // program ran for a set time, spending about the same CPU whatever it
    // got done.
    let flat = with_walls(10.0, 0.9);
    assert_eq!(by_default(&flat).1, "wall_s");
    assert_eq!(by_default(&flat).2, None);
    // Runs stored without CPU times (they read 0).
    let mut no_cpu = fixture::experiment();
    for run in no_cpu.configs.iter_mut().flat_map(|c| &mut c.runs) {
        (run.record.user_s, run.record.sys_s) = (0.0, 0.0);
    }
    assert_eq!(by_default(&no_cpu).1, "wall_s");
    // A fixed-duration load with a count of its requests: CPU per request
    // still measures the work.
    let mut served = service(false, true);
    for run in served.configs.iter_mut().flat_map(|c| &mut c.runs) {
        let s = run.record.service.as_mut().expect("service");
        s.load_end_s = Some(10.0);
        if let Some(l) = s.latency.as_mut() {
            l.p95_ms = 10.0;
        }
    }
    assert_eq!(by_default(&served).1, "cpu_per_request_ms");
}

#[test]
fn pss_needs_the_baselines_reading_too() {
    let mut e = fixture::experiment();
    for run in &mut e.configs[0].runs {
        run.record.status = allocscope_core::model::RunStatus::Failed;
    }
    assert_eq!(chosen(&e, tree("mean"), None).0, "mean_rss_bytes");
}

#[test]
fn runs_too_short_for_a_mean_are_judged_by_their_peak_and_say_so() {
    let mut e = single_process();
    let table = metric_table::of_experiment(&e.info);
    let judging = JudgeSettings::default();
    assert_eq!(chosen(&e, None, None).0, "mean_rss_bytes");
    assert_eq!(short_runs_warning(&e, 0, &table, &judging), None);
    // One baseline run read twice only: its mean is its start-up's.
    e.configs[0].runs[0].record.samples.truncate(2);
    assert_eq!(chosen(&e, None, None).0, "peak_rss_bytes");
    let warning = short_runs_warning(&e, 0, &table, &judging).expect("a warning");
    assert!(
        warning.starts_with("1 runs were sampled fewer than 3 times"),
        "{warning}"
    );
    // A peak asked for is no fallback: nothing to warn of.
    let asked = JudgeSettings {
        memory_metric: tree("peak"),
        ..JudgeSettings::default()
    };
    assert_eq!(short_runs_warning(&e, 0, &table, &asked), None);
}

#[test]
fn a_candidate_run_too_short_for_a_mean_moves_everyone_to_the_peak() {
    let mut e = single_process();
    assert_eq!(chosen(&e, None, None).0, "mean_rss_bytes");
    // The baseline's runs all have a mean; one candidate's run does not.
    let last = e.configs.len() - 1;
    assert_ne!(last, 0, "the fixture has a candidate");
    e.configs[last].runs[0].record.samples.truncate(2);
    assert_eq!(chosen(&e, None, None).0, "peak_rss_bytes");
    // A candidate whose every run failed has no runs to ask.
    for run in &mut e.configs[last].runs {
        run.record.status = allocscope_core::model::RunStatus::Failed;
    }
    assert_eq!(chosen(&e, None, None).0, "mean_rss_bytes");
}
