//! A failing program says why: the last lines of its stderr on the screen
//! (once per distinct text), in every report (`report --section runs`,
//! JSON, Markdown, HTML), and a configuration whose every run failed is
//! named so in the verdict, on the real binary.

use crate::common::{config, runs, stderr, stdout, Scratch};
use std::os::unix::fs::PermissionsExt;

const WHY: &str = "initdb: cannot write /nonexistent";

#[test]
fn a_failing_program_says_why_on_the_screen_and_in_every_report() {
    let scratch = Scratch::new();
    // It fails under the configuration that sets a glibc tunable only, in
    // its own words (as initdb does in a directory it cannot write).
    let path = scratch.path("initdb.sh");
    let body = format!(
        "#!/bin/sh\necho starting >&2\nsleep 0.3\n\
         if [ -n \"$GLIBC_TUNABLES\" ]; then echo 'initdb: fixing permissions' >&2; \
         echo '{WHY}' >&2; exit 1; fi\n\
         head -c 2000000 /dev/zero | tail -c 1 >/dev/null\n"
    );
    std::fs::write(&path, body).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (md, html) = (scratch.path("out.md"), scratch.path("out.html"));
    let options = [
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=2",
        "--runs",
        "3",
        "--export-markdown",
        md.to_str().expect("utf-8"),
        "--html",
        html.to_str().expect("utf-8"),
    ];
    let (output, json) = scratch.compare(&options, &[path.to_str().expect("utf-8")]);
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "failed runs: exit 1\n{log}");
    // The log says it once, for the first of the three failed runs.
    let tail = format!("initdb: fixing permissions | {WHY}");
    let said = format!("glibc:arena_max=2 run 1 failed, its stderr ended: starting | {tail}");
    assert!(log.contains(&said), "{log}");
    assert_eq!(log.matches("its stderr ended").count(), 1, "{log}");
    // The verdict names the configuration whose every run failed, with why.
    // Lines wrapped at 100 columns read as one.
    let screen = scratch.screen().replace("\n  ", " ");
    // (A run too short for the allocator check says so in its message.)
    let named = "glibc:arena_max=2 (every run failed: exited with code 1";
    assert!(screen.contains(named), "{screen}");
    assert!(
        screen.contains(&format!("stderr: starting | {tail})")),
        "{screen}"
    );
    assert!(!screen.contains("not settled yet"), "{screen}");
    assert_eq!(
        screen.matches(WHY).count(),
        1,
        "once on the screen:\n{screen}"
    );
    let v = &json["verdict"];
    assert_eq!(v["explanation_data"][0]["code"], "every_run_failed", "{v}");
    assert_eq!(v["explanation_data"][0]["runs"], 3, "{v}");
    // Each run keeps its tail: JSON, `--section runs`, Markdown, HTML.
    for run in runs(config(&json, "glibc:arena_max=2")) {
        assert_eq!(run["status"], "failed", "{run}");
        assert_eq!(run["stderr_tail"], format!("starting | {tail}"), "{run}");
    }
    for run in runs(config(&json, "glibc")) {
        assert!(
            run.get("stderr_tail").is_none(),
            "an ok run keeps none: {run}"
        );
    }
    let db = scratch.db();
    let section = scratch.run(&[
        "report",
        "--db",
        db.to_str().expect("utf-8"),
        "--section",
        "runs",
    ]);
    let section = stdout(&section).replace("\n    ", " ");
    for index in 1..=3 {
        let line =
            format!("glibc:arena_max=2 run {index}: failed, exit code 1: exited with code 1");
        let end = format!("stderr: starting | {tail}\n");
        let at = section.find(&line).unwrap_or_else(|| panic!("{section}"));
        assert!(section[at..].contains(&end), "{section}");
    }
    let md = std::fs::read_to_string(&md).expect("the Markdown report");
    assert!(md.contains("#### Failed runs") && md.contains(WHY), "{md}");
    let html = std::fs::read_to_string(&html).expect("the HTML report");
    assert!(html.contains(WHY), "the HTML report names why");
}
