//! The demo's HTML report in a real browser: headless Chromium (Debian's
//! `chromium`) loads it from disk, must log no console errors, must show
//! every plot with drawn paths and the verdict's card within the first
//! 1280x800 screen, and leaves screenshots as the artifacts.

use crate::common::*;
use std::path::Path;
use std::process::Command;

pub const CHROMIUM: &str = "/usr/bin/chromium";

pub fn chromium(profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let profile_arg = format!("--user-data-dir={}", profile.display());
    let mut args = vec![
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        profile_arg.as_str(),
        "--enable-logging=stderr",
        "--v=0",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    Command::new(CHROMIUM)
        .args(&args)
        .output()
        .expect("chromium runs")
}

/// Where the element `id` of `page` (a file in `dir`) stands when the page
/// is opened at 1280x800 in Chromium, and its text: the dumped DOM and
/// `card TOP BOTTOM TEXT` (or `no card`), measured by a frame written
/// beside the page.
pub fn element_box(dir: &Path, page: &str, id: &str, profile: &Path) -> (String, String) {
    let frame = dir.join("frame.html");
    let html = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\">\
         <iframe id=\"r\" src=\"{page}\" width=\"1280\" height=\"800\" style=\"border:0\"></iframe>\
         <pre id=\"out\">not loaded</pre><script>\
         document.getElementById('r').addEventListener('load', () => {{\
           const d = document.getElementById('r').contentDocument;\
           const card = d && d.getElementById('{id}');\
           const b = card && card.getBoundingClientRect();\
           document.getElementById('out').textContent = b\
             ? 'card ' + Math.round(b.top) + ' ' + Math.round(b.bottom) + ' ' + card.innerText\
             : 'no card';\
         }});</script></body></html>"
    );
    std::fs::write(&frame, html).expect("frame written");
    let url = format!("file://{}", frame.display());
    let dom = chromium(
        profile,
        &[
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ],
        &url,
    );
    assert!(dom.status.success(), "{}", stderr(&dom));
    let dom = stdout(&dom);
    let measured = (dom.split("<pre id=\"out\">").nth(1))
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_default()
        .to_string();
    (dom, measured)
}

#[test]
fn demo_html_report_opens_in_headless_chromium_without_errors() {
    if !require(
        Path::new(CHROMIUM).exists(),
        CHROMIUM,
        "apt-get install chromium",
    ) {
        return;
    }
    let scratch = Scratch::new();
    let (output, out) = quick_kv_demo(&scratch);
    let html = out.join("kv.html").canonicalize().expect("kv.html written");
    assert!(
        stdout(&output).contains(&format!("HTML report: {}", html.display())),
        "{}",
        stdout(&output)
    );
    let url = format!("file://{}", html.display());
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let _ = std::fs::remove_file(&shot);
    let shot_arg = format!("--screenshot={}", shot.display());
    let run = chromium(
        &scratch.path("profile-shot"),
        &[&shot_arg, "--window-size=1280,4000"],
        &url,
    );
    let log = stderr(&run);
    assert!(run.status.success(), "{log}");
    assert!(
        shot.metadata().map(|m| m.len() > 10_000).unwrap_or(false),
        "{log}"
    );
    for line in log.lines() {
        let bad = line.contains("Uncaught") || (line.contains("CONSOLE") && line.contains("rror"));
        assert!(!bad, "console error: {line}\n{log}");
    }
    let dom = chromium(&scratch.path("profile-dom"), &["--dump-dom"], &url);
    assert!(dom.status.success(), "{}", stderr(&dom));
    let dom = stdout(&dom);
    for plot in [
        "rss_over_time",
        "memory_at_markers",
        "ratios",
        "memory_vs_time",
        "faults_over_time",
    ] {
        let start = dom
            .find(&format!("<figure id=\"plot-{plot}\">"))
            .unwrap_or_else(|| panic!("plot {plot} missing from the DOM"));
        let figure = &dom[start..];
        let figure = &figure[..figure.find("</figure>").expect("figure closed")];
        assert!(figure.contains("<svg"), "{plot}: no svg");
        let drawn = figure.contains("<path d=\"M") || figure.contains("<circle");
        assert!(drawn, "{plot}: nothing drawn");
    }
    println!("screenshot of the demo report: {}", shot.display());
}

/// The report in a 1280x800 frame of a page that measures where its card
/// lands (the report itself runs no script): the verdict is seen without
/// scrolling. The 1280x800 screenshot is left as the artifact.
#[test]
fn demo_html_report_shows_the_verdict_without_scrolling_at_1280x800() {
    if !require(
        Path::new(CHROMIUM).exists(),
        CHROMIUM,
        "apt-get install chromium",
    ) {
        return;
    }
    let scratch = Scratch::new();
    let (_, out) = quick_kv_demo(&scratch);
    let html = out.join("kv.html").canonicalize().expect("kv.html written");
    let (dom, measured) = element_box(&out, "kv.html", "answer", &scratch.path("profile-frame"));
    let mut words = measured.split_whitespace();
    assert_eq!(words.next(), Some("card"), "{dom}");
    let top: f64 = words.next().and_then(|w| w.parse().ok()).expect("top");
    let bottom: f64 = words.next().and_then(|w| w.parse().ok()).expect("bottom");
    assert!(0.0 <= top && top < bottom && bottom <= 800.0, "{measured}");
    assert!(measured.contains("Verdict:"), "{measured}");
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-1280x800.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    let url = format!("file://{}", html.display());
    let run = chromium(
        &scratch.path("profile-first-screen"),
        &[&shot_arg, "--window-size=1280,800"],
        &url,
    );
    assert!(run.status.success(), "{}", stderr(&run));
    println!("the report's first screen: {}", shot.display());
}

#[test]
fn demo_writes_the_html_report_and_prints_its_path() {
    let scratch = Scratch::new();
    let (output, out) = quick_kv_demo(&scratch);
    let html = std::fs::read_to_string(out.join("kv.html")).expect("kv.html written");
    assert!(
        html.contains("<figure id=\"plot-memory_at_markers\">"),
        "{html}"
    );
    assert!(
        stdout(&output).contains("HTML report: /"),
        "{}",
        stdout(&output)
    );
}

/// The demo's final screen, its scenario sentence and where its files are
/// included, fits 40 lines of 100 columns.
#[test]
fn demo_final_output_fits_one_screen() {
    let scratch = Scratch::new();
    let (output, _) = quick_kv_demo(&scratch);
    let screen = stdout(&output);
    crate::common::fits_one_screen(&screen);
    assert!(screen.contains("scenario 'kv' models"), "{screen}");
    assert!(
        screen.lines().next().is_some_and(|l| l.ends_with(" CPUs")),
        "{screen}"
    );
}

/// `allocscope demo kv --quick -r 2` in the scratch directory; its output and
/// its --out directory.
fn quick_kv_demo(scratch: &Scratch) -> (std::process::Output, std::path::PathBuf) {
    let out = scratch.path("demo");
    let output = scratch.run(&[
        "demo",
        "kv",
        "--quick",
        "-r",
        "2",
        "--db",
        "demo.db",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    (output, out)
}
