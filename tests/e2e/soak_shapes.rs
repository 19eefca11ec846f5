//! Three soaks side by side of programs whose memory over time is known,
//! each judged by the real binary: a warm-up (120 MiB over 20 s, then
//! held) is a plateau, never growth, and no soak stops during the ramp; a 10 s sawtooth (0 to 120 MiB and back) is neither growth nor a
//! leak, and is not extrapolated; 2 MiB a second kept in the live heap is a
//! leak. Run at once, they take the longest one's 75 s. The warm-up's page
//! is opened in Chromium at 1280x800: the verdict card above the fold, HTML
//! tables, no Markdown, each title once.

use crate::browser::{chromium, element_box, CHROMIUM};
use crate::common::*;
use crate::record::db_arg;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `allocscope soak` with `options` over `command`, into the scratch's
/// store, then its JSON report.
fn soaked(scratch: &Scratch, options: &[&str], command: &[&str]) -> (Output, Value) {
    let db = db_arg(scratch);
    let mut args = vec!["soak", "--interval", "200ms", "--db", &db];
    args.extend(options);
    args.push("--");
    args.extend(command);
    let output = scratch.run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let json = scratch.path("soak.json");
    let path = json.to_str().expect("utf-8");
    let report = scratch.run(&["report", "--db", &db, "--soak", "1", "--export-json", path]);
    assert!(report.status.success(), "{}", stderr(&report));
    let value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).expect("JSON");
    (output, value)
}

/// The `settling` of each configuration in a soak's JSON.
fn settlings(json: &Value) -> Vec<String> {
    json["soak"]["configurations"]
        .as_array()
        .expect("configurations")
        .iter()
        .map(|c| c["settling"].as_str().expect("settling").to_string())
        .collect()
}

/// The elapsed seconds in `allocscope: soak settled after 41.2 s` or
/// `... complete after 75.0 s`.
fn stopped_after_s(stderr: &str) -> f64 {
    let line = (stderr.lines())
        .find(|l| l.starts_with("allocscope: soak ") && l.contains(" after "))
        .unwrap_or_else(|| panic!("how the soak ended, in:\n{stderr}"));
    let after = line.split(" after ").nth(1).expect("after");
    let number: f64 = after
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a time in {line}"));
    if after.contains(" min") {
        number * 60.0
    } else {
        number
    }
}

/// `report --soak 1 --html` of the scratch's soak, checked in headless
/// Chromium: the verdict card within the first 1280x800 screen, the tables
/// HTML tables, no `<pre>` of Markdown, each plot's title once; its
/// screenshot left as an artifact.
fn page_in_chromium(scratch: &Scratch) {
    let page = scratch.path("soak.html");
    let db = db_arg(scratch);
    let path = page.to_str().expect("utf-8");
    let report = scratch.run(&["report", "--db", &db, "--soak", "1", "--html", path]);
    assert!(report.status.success(), "{}", stderr(&report));
    let html = std::fs::read_to_string(&page).expect("HTML written");
    assert!(
        !html.contains("<pre>") && !html.contains("| level |"),
        "Markdown in the page"
    );
    assert_eq!(html.matches("<table>").count(), 2, "{html}");
    assert_eq!(
        html.matches("Memory over time per configuration").count(),
        1
    );
    let (dom, measured) = element_box(
        page.parent().expect("the page's folder"),
        "soak.html",
        "verdict",
        &scratch.path("profile-frame"),
    );
    let mut words = measured.split_whitespace();
    assert_eq!(words.next(), Some("card"), "{dom}");
    let top: f64 = words.next().and_then(|w| w.parse().ok()).expect("top");
    let bottom: f64 = words.next().and_then(|w| w.parse().ok()).expect("bottom");
    assert!(0.0 <= top && top < bottom && bottom <= 800.0, "{measured}");
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("soak-1280x800.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    let url = format!("file://{}", page.display());
    let run = chromium(
        &scratch.path("profile-shot"),
        &[&shot_arg, "--window-size=1280,800"],
        &url,
    );
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(shot.metadata().is_ok_and(|m| m.len() > 0), "no screenshot");
    println!("the soak page's first screen: {}", shot.display());
}

#[test]
fn a_warm_up_is_never_growth_a_sawtooth_is_not_growth_and_a_kept_heap_is_a_leak() {
    if !require_allocator("jemalloc")
        || !require(
            Path::new(CHROMIUM).exists(),
            CHROMIUM,
            "apt-get install chromium",
        )
    {
        return;
    }
    let _heavy = one_heavy_test_at_a_time();
    let (grow, sawtooth) = (program("grow"), program("sawtooth"));
    let (grow, sawtooth) = (
        grow.to_str().expect("utf-8"),
        sawtooth.to_str().expect("utf-8"),
    );
    let scratches = [Scratch::new(), Scratch::new(), Scratch::new()];
    let [warm, saw, leak] = std::thread::scope(|scope| {
        let [a, b, c] = &scratches;
        let warm = scope.spawn(move || {
            soaked(
                a,
                &[
                    "-a",
                    "glibc",
                    "-a",
                    "jemalloc",
                    "--replicas",
                    "2",
                    "--duration",
                    "75s",
                ],
                // 6 MiB a second for 20 s, then held.
                &[grow, "leak", "1000", "6", "20"],
            )
        });
        let saw = scope.spawn(move || {
            soaked(
                b,
                &[
                    "-a",
                    "glibc",
                    "--replicas",
                    "2",
                    "--duration",
                    "60s",
                    "--until",
                    "duration",
                ],
                // 12 MiB a second for 10 s, then all freed.
                &[sawtooth, "1000", "12", "10"],
            )
        });
        let leak = scope.spawn(move || {
            soaked(
                c,
                &["-a", "glibc", "--replicas", "2", "--duration", "40s"],
                // 2 MiB a second, kept.
                &[grow, "leak", "1000", "2", "64"],
            )
        });
        [warm, saw, leak].map(|h| h.join().expect("soak thread"))
    });

    // The warm-up: a plateau under both, not growth. The working set is
    // summed from memory.stat, which holds still with the program; the
    // charge moved by its per-CPU stock and left about half such soaks open.
    // If the soak stopped on settling it was long after the ramp.
    let (output, json) = warm;
    let (text, err) = (stdout(&output), stderr(&output));
    assert_eq!(settlings(&json), ["plateau", "plateau"], "{text}\n{err}");
    assert!(stopped_after_s(&err) > 40.0, "{err}");
    assert!(!text.contains("still grows"), "{text}");
    page_in_chromium(&scratches[0]);

    // The sawtooth: judged over whole periods, neither growth nor a leak,
    // and not extrapolated.
    let (output, json) = saw;
    let text = stdout(&output);
    let settling = settlings(&json);
    assert!(
        settling == ["plateau"] || settling == ["open"],
        "{settling:?}\n{text}"
    );
    assert!(
        !text.contains("leak") && !text.contains("still grows"),
        "{text}"
    );
    let glibc = &json["soak"]["configurations"][0];
    assert_ne!(glibc["projection_24h"], "projected", "{glibc}");
    assert!(glibc["projection_24h_bytes"].is_null(), "{glibc}");

    // The leak: growth with its live heap, under a minute: rising, a leak.
    let (output, json) = leak;
    let text = stdout(&output);
    assert!(
        text.contains("All configurations grow with their live heap: a leak in the program"),
        "{text}"
    );
    assert_eq!(settlings(&json), ["rising"], "{text}");
}
