//! Process trees measured truthfully: the listing of a store holding
//! recordings, PSS estimated between full reads, arenas per process.

use crate::common::*;

#[test]
fn report_list_shows_recordings_with_the_command_that_shows_them() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let output = scratch.run(&[
        "record",
        "--interval",
        "50ms",
        "--db",
        db,
        "--",
        "sh",
        "-c",
        "sleep 0.3",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let list = scratch.run(&["report", "--list", "--db", db]);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert!(!text.contains("no experiments"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("sleep 0.3"))
        .unwrap_or_else(|| panic!("no recording in {text}"));
    assert!(line.trim_start().starts_with('1'), "{line}");
    // A 0.3 s recording alone: its elapsed column is in ms, 3 significant
    // digits (its own start-up may add some, never a second).
    assert!(
        line.split_whitespace()
            .any(|w| w.len() == 3 && w.chars().all(|c| c.is_ascii_digit()))
            && line.contains(" ms "),
        "{line}"
    );
    assert!(text.contains("allocscope report --recordings ID"), "{text}");
    // The command it names does show the recording.
    let shown = scratch.run(&["report", "--db", db, "--recordings", "1"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
}

#[test]
fn arenas_are_counted_per_process_with_its_name_never_summed() {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let threads = program("threads");
    // A shell, a short helper and a threaded program, each with the probe
    // and each with at least its main arena.
    let script = format!("sleep 0.2 & {} 8 2000000; wait", threads.display());
    let (output, json) = scratch.compare(
        &[
            "--heap",
            "--samples",
            "-a",
            "glibc:arena_max=2",
            "-r",
            "1",
            "--interval",
            "20ms",
        ],
        &["sh", "-c", &script],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc:arena_max=2"))[0];
    let timeline = run["timeline"].as_array().expect("timeline");
    let with_arenas: Vec<&serde_json::Value> =
        timeline.iter().filter(|s| s["arenas"].is_u64()).collect();
    assert!(!with_arenas.is_empty(), "no arenas in {run}");
    // Summed, the shell's, the helper's and the program's would exceed 2.
    for s in &with_arenas {
        assert!(s["arenas"].as_u64() <= Some(2), "{s}");
        assert!(s["arenas_pid"].as_i64().is_some_and(|p| p > 1), "{s}");
    }
    // Its first ticks may come before its threads made their arena.
    let program = with_arenas
        .iter()
        .filter(|s| s["arenas_process"] == "threads")
        .max_by_key(|s| s["arenas"].as_u64())
        .unwrap_or_else(|| panic!("the program is never named: {timeline:?}"));
    assert_eq!(program["arenas"], 2, "{program}");
    // The heap report names the process.
    let text = stdout(&output);
    assert!(text.contains("2 arenas (threads "), "{text}");
    let summed = run["arenas_max"].as_u64();
    assert_eq!(summed, Some(2), "{run}");
}

#[test]
fn estimated_pss_of_a_forked_tree_stays_within_10_percent_of_full_reads() {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let forks = program("forks");
    let (children, mib) = (4u64, 64u64);
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1", "--interval", "20ms", "--samples"],
        &[forks.to_str().expect("utf-8"), "4", "64", "3000"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    let expected = (children * mib) as f64 * 1048576.0;
    // While every child holds its memory: the parent and 4 children, all
    // pages touched.
    let holding: Vec<&serde_json::Value> = run["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|s| s["processes"] == 5)
        .filter(|s| s["rss_bytes"].as_f64().is_some_and(|r| r >= expected))
        .collect();
    let estimated = holding
        .iter()
        .filter(|s| s["pss_estimated_processes"].as_u64() == Some(5))
        .count();
    // Full reads are rationed by the budget: on a loaded machine none may
    // land while the children hold, so the truth is what they hold.
    assert!(
        estimated >= 10,
        "{estimated} estimated of {}",
        holding.len()
    );
    for s in &holding {
        let pss = s["pss_bytes"].as_f64().expect("PSS on every tick");
        let error = (pss - expected) / expected;
        assert!((-0.1..0.1).contains(&error), "{s}: {:.1}%", error * 100.0);
    }
}

/// The issue's two trees of a thousand: a parent fills 64 MiB and forks
/// 1,000 sleeping children ("shared"), each of which also fills `own_mib`
/// of its own. A full pass of smaps_rollup costs 0.4-2.5 ms a process
/// there, seconds a pass, so the sampler reads a few and scales them.
/// `fork_tree` itself reads every process's `Pss` halfway through its hold:
/// every sample of the whole tree from then until it is woken must be within
/// 10% of that sum (the issue's promise without a cgroup; it was -50% on
/// "shared", and a tree whose first pass failed as it forked counted every
/// RSS in full, +700%), the run's peak within 10% too, and the run says
/// what it thinned. What the sampler costs on such a tree is a speed goal,
/// measured and printed by `cargo bench --bench big_trees` (a timed cap
/// here failed on a loaded 2-core CI machine at 3-4% of a core).
fn forked_tree_of_a_thousand(own_mib: u64, heap: &str) {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let tree = program("fork_tree");
    let tree = tree.to_str().expect("utf-8");
    let own = own_mib.to_string();
    let (output, json) = scratch.compare(
        &[
            "-a",
            "glibc",
            "-r",
            "1",
            "--cgroup",
            "off",
            "--samples",
            heap,
        ],
        &[tree, "1000", "64", &own, "8000"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    let stdout_path = run["stdout_path"].as_str().expect("stdout_path");
    let printed = std::fs::read_to_string(stdout_path).expect("the tree's stdout");
    let true_kib: f64 = printed
        .lines()
        .find_map(|l| l.strip_prefix("true_pss_kib "))
        .and_then(|k| k.trim().parse().ok())
        .unwrap_or_else(|| panic!("no true_pss_kib in {printed}"));
    let truth = true_kib * 1024.0;
    let error = |bytes: f64| (bytes - truth) / truth;
    // Its markers bound the hold: judge the samples from the truth's
    // reading until it is about to wake the children to exit (a sample
    // taken as they exited, 892.7 MiB against 1,107.6, once came before
    // the marker of a wake that did not wait). From a second after
    // the fork, as the bench does, the suite's load once left a sample at
    // -15.7%: 1,000 children starting their heap probe's thread grow for
    // seconds, and a tick looks at about 25 of them, so their carried RSS
    // lags (the truth is what they hold once settled).
    let marked = |label: &str| {
        run["markers"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["label"] == label))
            .and_then(|m| m["t_s"].as_f64())
            .unwrap_or_else(|| panic!("no marker {label} in {}", run["markers"]))
    };
    let (from_s, to_s) = (marked("truth"), marked("waking"));
    let steady: Vec<f64> = run["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|s| s["t_s"].as_f64().is_some_and(|t| t >= from_s && t < to_s))
        .filter(|s| s["processes"] == 1001)
        .filter_map(|s| s["pss_bytes"].as_f64())
        .collect();
    assert!(steady.len() >= 15, "{} steady samples", steady.len());
    for pss in &steady {
        assert!(
            error(*pss).abs() < 0.1,
            "PSS {:.1} MiB against a true {:.1} MiB",
            pss / 1048576.0,
            truth / 1048576.0
        );
    }
    let peak = run["peak_pss_bytes"].as_f64().unwrap_or(0.0);
    assert!(
        error(peak).abs() < 0.1,
        "peak PSS {:.1} MiB against a true {:.1} MiB",
        peak / 1048576.0,
        truth / 1048576.0
    );
    let message = run["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("big tree") && message.contains("smaps_rollup reads"),
        "{message}"
    );
    // With the probe, its files were thinned too, and the line says so.
    assert_eq!(
        message.contains("the heap probe's files of"),
        heap != "--heap=off",
        "{message}"
    );
}

#[test]
fn a_forked_tree_of_a_thousand_sharing_its_parents_heap_is_counted_right() {
    forked_tree_of_a_thousand(0, "--heap=optional");
}

#[test]
fn a_forked_tree_of_a_thousand_with_memory_of_their_own_is_counted_right() {
    forked_tree_of_a_thousand(1, "--heap=off");
}

/// The issue's tree on the default path (heap probe, a memory cgroup per
/// run): a parent fills 64 MiB and forks 1,000 sleeping children. Each
/// child's allocator counters report the 64 MiB it inherited, which
/// summed read 62.5 GiB of live heap; counted at each process's share of
/// the pages (docs/usage.md, "Trees"), the tree's live heap is the
/// parent's 64 MiB plus what the children allocated themselves (nothing
/// here), within 10%. Its PSS on every tick of the hold is within 5% of
/// the sum of every process's `smaps_rollup` that `fork_tree` reads
/// itself, though the sampler reads only a few of them. The cgroup's
/// kernel memory (page tables of 1,000 copies of the mapping) is the
/// breakdown's kernel part, and with it the parts add up to PSS plus
/// kernel memory: the charge, less the page cache no process maps.
#[test]
fn a_forked_tree_of_a_thousand_counts_its_heap_once_and_its_kernel_memory() {
    if !require_root("making a memory cgroup per run") {
        return;
    }
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let tree = program("fork_tree");
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1", "--samples"],
        &[tree.to_str().expect("utf-8"), "1000", "64", "0", "8000"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    let printed = std::fs::read_to_string(run["stdout_path"].as_str().expect("stdout_path"))
        .expect("the tree's stdout");
    let true_pss: f64 = printed
        .lines()
        .find_map(|l| l.strip_prefix("true_pss_kib "))
        .and_then(|k| k.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no true_pss_kib in {printed}"))
        * 1024.0;
    let marked = |label: &str| {
        run["markers"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["label"] == label))
            .and_then(|m| m["t_s"].as_f64())
            .unwrap_or_else(|| panic!("no marker {label} in {}", run["markers"]))
    };
    let (from_s, to_s) = (marked("truth"), marked("waking"));
    let steady: Vec<&serde_json::Value> = run["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|s| s["t_s"].as_f64().is_some_and(|t| t >= from_s && t < to_s))
        .filter(|s| s["processes"] == 1001)
        .collect();
    assert!(steady.len() >= 15, "{} steady samples", steady.len());
    const MIB: f64 = 1048576.0;
    let mut with_heap = 0;
    for s in &steady {
        let pss = s["pss_bytes"].as_f64().expect("PSS on every tick");
        let error = (pss - true_pss) / true_pss;
        assert!(
            error.abs() < 0.05,
            "PSS {:.1} MiB against a true {:.1} MiB at {}",
            pss / MIB,
            true_pss / MIB,
            s["t_s"]
        );
        // A tick whose probe reading was stale has no heap figures, by
        // design (`STALE_AFTER_TICKS`).
        let Some(live) = s["live_heap_bytes"].as_f64() else {
            continue;
        };
        with_heap += 1;
        let live = live / MIB;
        assert!(
            (live - 64.0).abs() < 6.4,
            "live heap {live:.1} MiB at {}",
            s["t_s"]
        );
        let b = &s["breakdown"];
        let kernel = b["kernel_bytes"].as_f64().expect("a kernel part");
        assert_eq!(b["kernel_bytes"], s["cgroup"]["kernel_bytes"], "{s}");
        // A thousand copies of the page tables of a 64 MiB mapping.
        assert!(kernel > 100.0 * MIB, "kernel {:.1} MiB", kernel / MIB);
        let parts: f64 = b
            .as_object()
            .expect("breakdown")
            .values()
            .filter_map(serde_json::Value::as_f64)
            .sum();
        let counted_once = parts - kernel;
        assert!(
            (counted_once - pss).abs() < 0.02 * pss,
            "the parts less kernel {:.1} MiB against PSS {:.1} MiB",
            counted_once / MIB,
            pss / MIB
        );
    }
    assert!(
        with_heap >= 10,
        "{with_heap} steady samples with heap figures"
    );
    let peak_live = run["peak_live_heap_bytes"].as_f64().unwrap_or(0.0) / MIB;
    assert!(
        (peak_live - 64.0).abs() < 6.4,
        "peak live heap {peak_live:.1} MiB"
    );
    // The table and the "why" line read the same figures.
    let text = stdout(&output);
    assert!(text.contains("kernel"), "{text}");
}
