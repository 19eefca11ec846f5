//! `allocscope soak` watched while it runs: every `--report-every` the
//! progress block on stderr (plain lines outside a terminal) with each
//! configuration's level, growth, settled or not, and the time left; with
//! `--html FILE` the soak's page rewritten, reloading itself, until the
//! final page, which does not. `--quiet` shows no block.

use crate::common::*;
use crate::record::db_arg;
use std::process::Stdio;
use std::time::Duration;

/// `soak` of `grow leak` (1 MiB every 200 ms) under glibc and
/// glibc:arena_max=1 for `duration`, one instance each, shown every 2 s.
fn live_soak(scratch: &Scratch, duration: &str, extra: &[&str]) -> std::process::Command {
    let grow = program("grow");
    let db = db_arg(scratch);
    let mut args = crate::soak_launched::glibc_soak_args(&db, "1", duration);
    args.extend(["--report-every", "2s"]);
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
fn a_soak_shows_its_progress_and_rewrites_its_page_while_it_runs() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let page = scratch.path("live.html");
    let mut soak = live_soak(&scratch, "11s", &["--html", page.to_str().expect("utf-8")]);
    let child = soak.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = child.spawn().expect("allocscope starts");
    let refreshing = "<meta http-equiv=\"refresh\" content=\"2\">";
    let live = wait_until(Duration::from_secs(9), || {
        std::fs::read_to_string(&page).is_ok_and(|p| p.contains(refreshing))
    });
    let output = child.wait_with_output().expect("allocscope ends");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(live, "no page reloading itself during the soak");
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
            growth.contains("settled by ")
                || growth.contains("open")
                || growth.contains("rising, seen "),
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
    let page = std::fs::read_to_string(&page).expect("the final page");
    assert!(page.contains("allocscope soak 1") && page.contains("id=\"plot-soak_memory\""));
    assert!(
        !page.contains("http-equiv=\"refresh\""),
        "the final page reloads"
    );
    assert!(!scratch.path("live.html.partial").exists());

    let quiet = live_soak(&Scratch::new(), "5s", &["--quiet"]).output();
    let quiet = quiet.expect("allocscope runs");
    assert!(quiet.status.success(), "{}", stderr(&quiet));
    assert!(
        !stderr(&quiet).contains("allocscope: soak at"),
        "{}",
        stderr(&quiet)
    );
}
