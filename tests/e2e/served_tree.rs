//! What served the tree's memory, process by process: a wrapper script
//! that `exec`s a program linked with jemalloc, which forks its worker;
//! a program calling jemalloc's own API (`mallocx`, `sdallocx`); a program
//! holding its memory in its own `mmap` pool. Each checks what the run
//! records, the configurations table and the verdict's words.

use crate::common::{
    config, jemalloc_dev_present, program, program_with, require_allocator, runs, stderr, stdout,
    Scratch,
};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

/// An executable shell script in `scratch` that prepares a directory, as
/// a daemon's start script does, then runs `line` with `exec`.
fn wrapper(scratch: &Scratch, name: &str, line: &str) -> String {
    let path = scratch.path(name);
    let run_dir = scratch.path("run");
    let text = format!("#!/bin/sh\nmkdir -p '{}'\nexec {line}\n", run_dir.display());
    std::fs::write(&path, text).expect("write the wrapper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

/// The largest part of each run's tree: (allocator, share, programs).
fn main_parts(c: &Value) -> Vec<(String, f64, Vec<String>)> {
    runs(c)
        .iter()
        .map(|r| {
            let part = &r["served_tree"]["parts"][0];
            let programs = part["programs"].as_array().cloned().unwrap_or_default();
            (
                part["allocator"].as_str().unwrap_or("none").to_string(),
                part["share"].as_f64().unwrap_or_default(),
                programs
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect(),
            )
        })
        .collect()
}

fn explanation(json: &Value) -> Vec<String> {
    json["verdict"]["explanation"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Through a wrapper script that keeps the environment, LD_PRELOAD reaches
/// the worker: glibc serves it under `-a glibc` (the shim, preloaded
/// because the command is a script) and jemalloc under `-a jemalloc`; the
/// run records the worker's program, and no verdict line says two
/// configurations ran one allocator.
#[test]
fn a_wrapper_script_execing_a_jemalloc_daemon_gets_the_shim_in_every_process() {
    if !jemalloc_dev_present() || !require_allocator("jemalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let daemon = program_with("forked_worker", &["-ljemalloc"]);
    let scratch = Scratch::new();
    let script = wrapper(
        &scratch,
        "start.sh",
        &format!("{} 48 800", daemon.display()),
    );
    let options = [
        "-r",
        "2",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=2",
        "-a",
        "jemalloc",
    ];
    let (output, json) = scratch.compare(&options, &[&script]);
    assert!(output.status.success(), "{}", stderr(&output));
    let daemon_name = daemon
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    for (name, allocator) in [
        ("glibc", "glibc"),
        ("glibc:arena_max=2", "glibc"),
        ("jemalloc", "jemalloc"),
    ] {
        let c = config(&json, name);
        assert_eq!(c["served_by"], allocator, "{name}: {c}");
        for (by, share, programs) in main_parts(c) {
            assert_eq!(by, allocator, "{name}");
            assert!(share > 0.8, "{name}: the worker holds most: {share}");
            assert!(programs.contains(&daemon_name), "{name}: {programs:?}");
        }
    }
    let lines = explanation(&json);
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("the comparison is of the same allocator")),
        "{lines:?}"
    );
    let table = stdout(&output);
    assert!(!table.contains("requested;"), "{table}");
}

/// A wrapper that clears the environment before `exec` (as service
/// scripts that sanitise it do) keeps every preload out of the daemon:
/// jemalloc, which it links, serves its worker under every configuration.
/// The table says what was asked and what served, and the verdict says the
/// glibc configurations compared one allocator.
#[test]
fn a_wrapper_that_drops_the_preload_is_reported_as_served_by_the_linked_allocator() {
    if !jemalloc_dev_present() || !require_allocator("jemalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let daemon = program_with("forked_worker", &["-ljemalloc"]);
    let scratch = Scratch::new();
    let line = format!("env -u LD_PRELOAD {} 48 800", daemon.display());
    let script = wrapper(&scratch, "start.sh", &line);
    let options = ["-r", "2", "-a", "glibc", "-a", "glibc:arena_max=2"];
    let (output, json) = scratch.compare(&options, &[&script]);
    assert!(output.status.success(), "{}", stderr(&output));
    let daemon_name = daemon
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    for name in ["glibc", "glibc:arena_max=2"] {
        let c = config(&json, name);
        assert_eq!(c["served_by"], "jemalloc", "{name}: {c}");
    }
    let table = stdout(&output);
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("glibc:arena_max=2"))
        .unwrap_or_default();
    let expected = "glibc requested; jemalloc served";
    assert!(
        row.contains(expected)
            && row.contains("of the tree's memory")
            && row.contains(&format!("({daemon_name} links it)")),
        "{table}"
    );
    let lines = explanation(&json);
    assert!(
        lines.iter().any(|l| l
            == "glibc and glibc:arena_max=2 were both served by jemalloc: the comparison is of \
                the same allocator."),
        "{lines:?}"
    );
    let v = &json["verdict"];
    assert_eq!(v["outcome"], "inconclusive", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("jemalloc"),
        "{v}"
    );
}

/// A program calling mallocx and sdallocx: the warning names the calls and
/// the lever; under tcmalloc those calls still reach jemalloc, so tcmalloc
/// is left out of the verdict, saying why; under glibc the shim maps
/// them to glibc.
#[test]
fn a_program_calling_mallocx_is_reported_with_the_lever() {
    if !jemalloc_dev_present() || !require_allocator("tcmalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let own = program_with("own_api", &["-ljemalloc"]);
    let scratch = Scratch::new();
    let options = ["-r", "2", "-a", "glibc", "-a", "tcmalloc"];
    let (output, json) =
        scratch.compare(&options, &[own.to_str().unwrap_or_default(), "48", "800"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let name = own
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let reach = |c: &str| -> Vec<String> {
        runs(config(&json, c))
            .iter()
            .map(|r| {
                r["served_tree"]["own_api"][0]["reach"]
                    .as_str()
                    .unwrap_or("none")
                    .to_string()
            })
            .collect()
    };
    assert!(
        reach("glibc").iter().all(|r| r == "glibc"),
        "{:?}",
        reach("glibc")
    );
    assert!(
        reach("tcmalloc").iter().all(|r| r == "jemalloc"),
        "{:?}",
        reach("tcmalloc")
    );
    let warnings: Vec<String> = json["warnings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        warnings.iter().any(|w| w.contains(&format!(
            "{name} calls jemalloc's own API (mallocx, sdallocx) (under tcmalloc those calls \
             still reached jemalloc)"
        )) && w.contains("-a jemalloc:KEY=VALUE reaches it")
            && w.contains("--variant")),
        "{warnings:?}"
    );
    let lines = explanation(&json);
    assert!(
        lines.iter().any(|l| l
            == &format!(
                "tcmalloc: left out of the verdict: {name} calls jemalloc's own API (mallocx, \
                 sdallocx), which preloading tcmalloc cannot replace: that part of the heap \
                 stayed in jemalloc."
            )),
        "{lines:?}"
    );
    assert_ne!(json["verdict"]["config"], "tcmalloc");
}

/// A program whose memory is its own anonymous mapping: the breakdown puts
/// it outside the heap, and the verdict names it as memory no allocator
/// setting moves.
#[test]
fn memory_in_the_programs_own_mmap_pool_is_named_outside_malloc() {
    if !require_allocator("jemalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let mapped = program("mapped");
    let scratch = Scratch::new();
    let options = ["-r", "2", "-a", "glibc", "-a", "jemalloc"];
    let (output, json) = scratch.compare(
        &options,
        &[mapped.to_str().unwrap_or_default(), "96", "1200"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = explanation(&json);
    let line = lines
        .iter()
        .find(|l| l.contains("of anonymous memory the program manages itself, outside malloc"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(line.starts_with("glibc: "), "{line}");
    assert!(line.contains("no allocator setting moves it"), "{line}");
    let mib: f64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!((60.0..=100.0).contains(&mib), "most of 96 MiB: {line}");
}
