//! `allocscope soak` watched while it runs: every `--report-every` the
//! progress block on stderr (plain lines outside a terminal) with each
//! configuration's level, growth, settled or not, and the time left.
//! `--quiet` shows no block.

use crate::common::*;
use crate::record::db_arg;

/// `soak` of `grow leak` (1 MiB every 200 ms) under glibc and
/// glibc:arena_max=1 for `duration`, one instance each, shown every 2 s.
fn live_soak(scratch: &Scratch, duration: &str, extra: &[&str]) -> std::process::Command {
    let grow = program("grow");
    let db = db_arg(scratch);
    let mut args = vec![
        "soak",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=1",
        "--replicas",
        "1",
        "--duration",
        duration,
        "--until",
        "duration",
        "--interval",
        "200ms",
        "--report-every",
        "2s",
        "--db",
        &db,
    ];
    args.extend(extra);
    args.extend([
        "--",
        grow.to_str().expect("utf-8"),
        "leak",
        "200",
        "1",
        "60",
    ]);
    scratch.command(&args)
}

#[test]
fn a_soak_shows_its_progress_while_it_runs() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let output = live_soak(&scratch, "11s", &[]).output();
    let output = output.expect("allocscope runs");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stderr(&output);
    let blocks: Vec<&str> = text.split("allocscope: soak at ").skip(1).collect();
    // Looks at 2, 4, 6, 8 and 10 s; a loaded machine may miss the last.
    assert!(blocks.len() >= 4, "{text}");
    let last = blocks[blocks.len() - 1];
    assert!(
        last.contains(" of 11.0 s, ") && last.contains(" left\n"),
        "{text}"
    );
    for label in ["glibc", "glibc:arena_max=1"] {
        let config = format!("\n  {label} x1: level ");
        let config = last
            .split(&config)
            .nth(1)
            .unwrap_or_else(|| panic!("{label}:\n{text}"));
        let growth = config.lines().nth(1).unwrap_or_default();
        // 5 MiB a second, well beyond the noise of a 10 s soak.
        let rate = growth.starts_with("    growth ") && growth.contains("iB/h [");
        assert!(rate, "{growth}\n{text}");
        assert!(
            growth.contains("settled by ") || growth.contains("open"),
            "{growth}"
        );
    }
    let shown = text
        .lines()
        .filter(|l| l.starts_with("allocscope: soak at") || l.starts_with("  "));
    assert!(
        shown.into_iter().all(|l| l.chars().count() <= 100),
        "{text}"
    );

    let quiet = live_soak(&Scratch::new(), "5s", &["--quiet"]).output();
    let quiet = quiet.expect("allocscope runs");
    assert!(quiet.status.success(), "{}", stderr(&quiet));
    assert!(
        !stderr(&quiet).contains("allocscope: soak at"),
        "{}",
        stderr(&quiet)
    );
}
