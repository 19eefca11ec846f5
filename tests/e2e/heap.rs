//! The heap probe (`compare --heap`) on real workloads under every installed
//! allocator: live-heap accuracy in stats and count mode, the overhead ratio,
//! and what happens when the workload cannot load the probe.

use crate::common::*;
use serde_json::Value;

/// `requested N usable M` from a run's stdout file.
fn held(run: &Value) -> (f64, f64) {
    let path = run["stdout_path"].as_str().expect("stdout path");
    let text = std::fs::read_to_string(path).expect("stdout file");
    let line = text
        .lines()
        .find(|l| l.starts_with("requested "))
        .unwrap_or_else(|| panic!("no 'requested' line in {text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    (
        words[1].parse().expect("requested bytes"),
        words[3].parse().expect("usable bytes"),
    )
}

/// The bounds of the overhead ratio (RSS per live heap byte) of these
/// workloads, which touch every block they hold: RSS is never below the live
/// heap, and above it are only the allocators' headers and size classes and
/// the program's own pages (a few MiB). Measured: 1.03-1.10 for 100 MiB of
/// 8 KiB blocks, 1.05-1.20 for 48 MiB of mixed sizes, tcmalloc highest.
const RATIO_LOW: f64 = 0.98;
const RATIO_HIGH: f64 = 1.4;

/// The time-weighted (trapezoid) means of RSS and of the live heap over the
/// ticks of `config`'s first run that read the live heap: what the overhead
/// ratio is documented to divide.
fn probe_means(scratch: &Scratch, config: &str) -> (f64, f64) {
    let db = rusqlite::Connection::open(scratch.db()).expect("the store opens");
    let ticks: Vec<(f64, f64, f64)> = db
        .prepare(
            "SELECT s.t_s, s.rss_bytes, s.live_heap_bytes FROM samples s \
             JOIN runs r ON r.id = s.run_id JOIN configs c ON c.id = r.config_id \
             WHERE c.name = ?1 AND r.idx = 1 AND s.live_heap_bytes IS NOT NULL ORDER BY s.t_s",
        )
        .and_then(|mut q| {
            q.query_map([config], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .expect("samples");
    assert!(ticks.len() >= 2, "{config}: {ticks:?}");
    let mean = |value: fn(&(f64, f64, f64)) -> f64| {
        let area: f64 = ticks
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * (value(&w[0]) + value(&w[1])) / 2.0)
            .sum();
        (area / (ticks[ticks.len() - 1].0 - ticks[0].0)).round()
    };
    (mean(|t| t.1), mean(|t| t.2))
}

/// Runs `workload` once under every installed allocator with `--heap=MODE`
/// and checks each run's peak live heap against what it held.
fn check_accuracy(mode: &str, workload: &[&str], by_usable: bool) {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    // An empty mode: no --heap at all, the probe's default.
    let mut options: Vec<String> = vec![mode.to_string(), "-r".into(), "1".into()];
    options.retain(|o| !o.is_empty());
    options.extend(every_allocator_args());
    options.extend(["--interval".into(), "20ms".into()]);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (output, json) = scratch.compare(&options, workload);
    assert!(output.status.success(), "{}", stderr(&output));
    for allocator in installed_allocators() {
        let run = &runs(config(&json, allocator))[0];
        assert_eq!(run["status"], "ok", "{allocator}: {run}");
        let probe_mode = run["probe_mode"].as_str().expect("probe_mode");
        let expected_mode = match (mode, allocator) {
            ("--heap=count", _) | (_, "mimalloc") => "count",
            _ => "stats",
        };
        assert_eq!(probe_mode, expected_mode, "{allocator}");
        let (requested, usable) = held(run);
        let want = if by_usable { usable } else { requested };
        let got = run["peak_live_heap_bytes"]
            .as_f64()
            .expect("peak live heap");
        let error = (got - want).abs() / want;
        eprintln!(
            "{mode} {allocator} {workload:?}: live {got} vs {want} ({:+.2}%)",
            100.0 * (got - want) / want
        );
        assert!(
            error <= 0.03,
            "{allocator} {mode}: live heap {got} vs held {want}"
        );
        let ratio = run["mean_overhead_ratio"].as_f64().expect("overhead ratio");
        let (rss, live) = probe_means(&scratch, allocator);
        eprintln!("{mode} {allocator}: overhead ratio {ratio:.3}, from the samples {rss}/{live}");
        assert!(
            (ratio - rss / live).abs() <= 1e-6 * ratio,
            "{allocator}: ratio {ratio} vs mean RSS {rss} / mean live heap {live} of its samples"
        );
        assert!(
            (RATIO_LOW..RATIO_HIGH).contains(&ratio),
            "{allocator}: ratio {ratio}"
        );
        assert!(run["probe_cpu_s"].as_f64().is_some_and(|s| s >= 0.0));
    }
    let table = stdout(&output);
    assert!(table.contains("heap probe (medians)"), "{table}");
}

#[test]
fn live_heap_of_8k_blocks_matches_within_3_percent_in_default_mode() {
    let hold = program("hold");
    check_accuracy(
        "--heap",
        &[hold.to_str().expect("utf-8"), "blocks", "100", "1000"],
        false,
    );
}

#[test]
fn live_heap_of_100_mib_is_reported_within_3_percent_without_asking_for_the_probe() {
    let hold = program("hold");
    check_accuracy(
        "",
        &[hold.to_str().expect("utf-8"), "blocks", "100", "1000"],
        false,
    );
}

#[test]
fn live_heap_of_8k_blocks_matches_within_3_percent_in_count_mode() {
    let hold = program("hold");
    check_accuracy(
        "--heap=count",
        &[hold.to_str().expect("utf-8"), "blocks", "100", "1000"],
        false,
    );
}

#[test]
fn live_heap_of_mixed_sizes_matches_usable_bytes_in_both_modes() {
    let hold = program("hold");
    let workload = [hold.to_str().expect("utf-8"), "mixed", "48", "300"];
    check_accuracy("--heap", &workload, true);
    check_accuracy("--heap=count", &workload, true);
}

#[test]
fn live_heap_of_cxx_new_delete_matches_within_3_percent_in_both_modes() {
    let hold = cxx_program("hold_cxx");
    let workload = [hold.to_str().expect("utf-8"), "48", "300"];
    check_accuracy("--heap", &workload, false);
    check_accuracy("--heap=count", &workload, false);
}

#[test]
fn live_heap_of_every_cxx_new_and_delete_form_matches_usable_bytes_in_both_modes() {
    // nothrow and aligned new/delete, sized deletes: allocators that export
    // them (jemalloc, tcmalloc, mimalloc) never pass them through malloc.
    let hold = cxx_program("hold_cxx_forms");
    let workload = [hold.to_str().expect("utf-8"), "48", "300"];
    check_accuracy("--heap", &workload, true);
    check_accuracy("--heap=count", &workload, true);
}

#[test]
fn static_workload_cannot_load_the_probe_and_says_so() {
    let single = program_with("single", &["-static"]);
    let scratch = Scratch::new();
    let workload = [single.to_str().expect("utf-8"), "8", "50"];
    let (_, json) = scratch.compare(&["--heap", "-r", "1", "-a", "glibc"], &workload);
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "not_loaded", "{run}");
    assert_eq!(run["probe_mode"], "not_loaded");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("heap probe") && message.contains("statically linked"),
        "{message}"
    );
    // Not asked for, the probe is only a note: /proc alone. (The run is
    // not_loaded all the same, for the system glibc this static copy never
    // maps; the setuid test below shows a run the probe alone would fail.)
    let (_, json) = scratch.compare(&["-r", "1", "-a", "glibc"], &workload);
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["probe_mode"], "not_loaded");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("heap probe not loaded, measured from /proc alone"),
        "{message}"
    );
}

/// A set-user-ID program (owned by `nobody`, run by root) maps libc but the
/// loader ignores LD_PRELOAD paths: glibc counts, the probe does not load.
#[test]
fn setuid_workload_is_not_loaded_with_heap_and_measured_from_proc_by_default() {
    let scratch = Scratch::new();
    let Some(copy) = setuid_copy(&scratch, "single") else {
        return;
    };
    let workload = [copy.to_str().expect("utf-8"), "8", "50"];

    let (_, json) = scratch.compare(&["--heap", "-r", "1", "-a", "glibc"], &workload);
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "not_loaded", "{run}");
    assert!(
        run["message"]
            .as_str()
            .is_some_and(|m| m.contains("heap probe")),
        "{run}"
    );

    let (output, json) = scratch.compare(&["-r", "1", "-a", "glibc"], &workload);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(run["probe_mode"], "not_loaded");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(message.contains("measured from /proc alone"), "{message}");
    assert!(run.get("peak_live_heap_bytes").is_none(), "{run}");
}

#[test]
fn unknown_heap_mode_is_a_usage_error() {
    let scratch = Scratch::new();
    let output = scratch.run(&["compare", "--heap=fast", "--", "true"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--heap=stats"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn periodic_trim_lowers_the_mean_rss_of_a_bursty_workload_without_heap() {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let bursty = program("bursty");
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(
        &[
            "--heap=off",
            "-r",
            "1",
            "-a",
            "glibc",
            "-a",
            "glibc:trim=200ms",
        ],
        &[bursty.to_str().expect("utf-8"), "5", "64", "400"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let plain = &runs(config(&json, "glibc"))[0];
    let trimmed = &runs(config(&json, "glibc:trim=200ms"))[0];
    assert_eq!(trimmed["status"], "ok", "{trimmed}");
    // Loaded for trimming only: nothing measured, so no probe keys; and
    // with --heap=off none at all where nothing trims.
    assert!(trimmed.get("probe_mode").is_none(), "{trimmed}");
    assert!(plain.get("probe_mode").is_none(), "{plain}");
    let mean = |run: &Value| run["mean_rss_bytes"].as_f64().expect("mean RSS");
    let ratio = mean(trimmed) / mean(plain);
    eprintln!("trim=200ms mean RSS ratio {ratio:.2}");
    assert!(ratio < 0.8, "trim did not lower the mean RSS: {ratio:.2}");
    let env = &config(&json, "glibc:trim=200ms")["env"];
    assert_eq!(env["ALLOCSCOPE_PROBE_TRIM_MS"], "200");
}

/// Runs `workload` under every installed allocator with `heap` and a time
/// limit: every run must end `ok` (no crash, no deadlock) with a live heap.
fn survives(heap: &str, workload: &[&str]) -> Value {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let mut options: Vec<String> = vec![heap.into(), "-r".into(), "1".into()];
    options.extend([
        "--timeout".into(),
        "60s".into(),
        "--interval".into(),
        "20ms".into(),
    ]);
    options.extend(every_allocator_args());
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (output, json) = scratch.compare(&options, workload);
    for allocator in installed_allocators() {
        let run = &runs(config(&json, allocator))[0];
        assert_eq!(run["status"], "ok", "{heap} {allocator}: {run}");
        assert!(
            run["peak_live_heap_bytes"].as_u64().is_some(),
            "{heap} {allocator}: {run}"
        );
    }
    assert!(output.status.success(), "{}", stderr(&output));
    json
}

#[test]
fn forked_children_are_probed_and_summed_into_the_trees_live_heap() {
    let forks = program("forks");
    for heap in ["--heap", "--heap=count"] {
        let json = survives(heap, &[forks.to_str().expect("utf-8"), "4", "32", "1000"]);
        for allocator in installed_allocators() {
            let run = &runs(config(&json, allocator))[0];
            let live = run["peak_live_heap_bytes"].as_f64().unwrap_or(0.0);
            let expected = 4.0 * 32.0 * 1048576.0;
            eprintln!("{heap} {allocator}: tree live heap {live} vs {expected}");
            assert!(
                (live - expected).abs() / expected < 0.05,
                "{heap} {allocator}: tree live heap {live} vs {expected}"
            );
        }
    }
}

#[test]
fn exec_children_of_a_shell_are_probed_too() {
    let hold = program("hold");
    let script = format!(
        "{0} blocks 24 1000 & {0} blocks 24 1000; wait",
        hold.display()
    );
    let json = survives("--heap", &["sh", "-c", &script]);
    for allocator in installed_allocators() {
        let live = runs(config(&json, allocator))[0]["peak_live_heap_bytes"]
            .as_f64()
            .unwrap_or(0.0);
        assert!(live > 1.9 * 24.0 * 1048576.0, "{allocator}: {live}");
    }
}

#[test]
fn threaded_workload_runs_ok_under_the_probe_in_both_modes() {
    let threads = program("threads");
    for heap in ["--heap", "--heap=count"] {
        // Long enough (a few hundred ms) for the sampler to read the probe
        // while the threads run, under the fastest allocator too.
        survives(heap, &[threads.to_str().expect("utf-8"), "4", "300000"]);
    }
}

#[test]
fn signal_storm_runs_ok_under_the_probe_in_both_modes() {
    let signals = program("signals");
    for heap in ["--heap", "--heap=count"] {
        survives(heap, &[signals.to_str().expect("utf-8"), "400"]);
    }
}

#[test]
fn stats_mode_on_an_allocator_without_counters_says_to_use_count() {
    if !require_allocator("mimalloc") {
        return;
    }
    let hold = program("hold");
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(
        &["--heap=stats", "-r", "1", "-a", "mimalloc"],
        &[hold.to_str().expect("utf-8"), "blocks", "8", "100"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "mimalloc"))[0];
    assert_eq!(run["probe_mode"], "none", "{run}");
    assert!(run.get("peak_live_heap_bytes").is_none(), "{run}");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(message.contains("--heap=count"), "{message}");
}

#[test]
fn verdict_and_rss_plot_show_the_live_heap_when_the_probe_ran() {
    let scratch = Scratch::new();
    let plots = scratch.path("plots");
    let single = program("single");
    let (output, json) = scratch.compare(
        &[
            "--heap",
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=1",
            "-r",
            "2",
            "--interval",
            "20ms",
            "--plots",
            plots.to_str().expect("utf-8"),
        ],
        &[single.to_str().expect("utf-8"), "48", "300"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let explanation = json["verdict"]["explanation"]
        .as_array()
        .expect("explanation");
    for name in ["glibc", "glibc:arena_max=1"] {
        let line = explanation
            .iter()
            .filter_map(Value::as_str)
            .find(|l| l.starts_with(&format!("heap probe, {name}:")))
            .unwrap_or_else(|| panic!("no heap line for {name} in {explanation:?}"));
        assert!(line.contains("x the live heap"), "{line}");
    }
    let svg = std::fs::read_to_string(plots.join("rss_over_time.svg")).expect("plot written");
    assert!(
        svg.contains("stroke-dasharray"),
        "no live-heap line in the RSS plot"
    );
    assert!(
        svg.contains("live heap"),
        "no legend note for the live heap"
    );
}
