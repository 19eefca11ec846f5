//! Reports from real runs: the verdict (JSON, table, `--max-slowdown`), and
//! the Markdown, HTML and plot outputs of `compare` and `report`.

use crate::common::*;

/// glibc and jemalloc (when installed) on the single-threaded workload,
/// 3 runs each; the scratch directory keeps the store for `report`.
fn small_experiment(scratch: &Scratch, extra: &[&str]) -> serde_json::Value {
    let single = program("single");
    let mut options = vec!["-r", "3", "--interval", "20ms", "-a", "glibc"];
    if installed_allocators().contains(&"jemalloc") {
        options.extend(["-a", "jemalloc"]);
    } else {
        options.extend(["-a", "glibc:arena_max=1"]);
    }
    options.extend_from_slice(extra);
    let (output, json) = scratch.compare(&options, &[single.to_str().expect("utf-8"), "24", "100"]);
    assert!(output.status.success(), "{}", stderr(&output));
    json
}

#[test]
fn verdict_is_exported_with_reason_explanation_and_deploy_lines() {
    if !require_allocator("jemalloc") {
        return;
    }
    let scratch = Scratch::new();
    // Under jemalloc the workload holds 8 MiB, under glibc 48: a saving no
    // noise can hide. Performance is judged by a figure the workload prints,
    // the same under both (wall time on a loaded machine can leave it open),
    // so the outcome is always a recommendation of jemalloc and its deploy
    // lines are always checked.
    let single = program("single");
    let script = format!(
        "echo 'ops: 100'; \
         case \"$LD_PRELOAD\" in *jemalloc*) exec {s} 8 200;; *) exec {s} 48 200;; esac",
        s = single.display()
    );
    let (output, json) = scratch.compare(
        &[
            "-r",
            "3",
            "--interval",
            "20ms",
            "-a",
            "glibc",
            "-a",
            "jemalloc",
            "--metric",
            "ops=ops: ([0-9]+)",
            "--higher-is-better",
            "ops",
            "--perf-metric",
            "ops",
        ],
        &["sh", "-c", &script],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let v = &json["verdict"];
    assert_eq!(v["outcome"], "recommend", "{v}");
    assert_eq!(v["config"], "jemalloc", "{v}");
    assert!(v["reason"].as_str().is_some_and(|r| r.len() > 40), "{v}");
    // The judged line, then the heap probe's line per configuration (on
    // by default).
    let explanation = v["explanation"].as_array().expect("explanation");
    assert!(
        explanation[0]
            .as_str()
            .is_some_and(|l| l.starts_with("jemalloc: mean RSS")),
        "{v}"
    );
    for line in &explanation[1..] {
        assert!(
            line.as_str().is_some_and(|l| l.starts_with("heap probe, ")),
            "{v}"
        );
    }
    assert_eq!(v["performance_metric"], "ops", "{v}");
    assert_eq!(v["max_slowdown_pct"], 5.0);
    assert_eq!(v["min_saving_pct"], 3.0);
    assert_eq!(v["unsettled"].as_array().map(Vec::len), Some(0), "{v}");
    let d = &v["deploy"];
    let text = |key: &str| {
        d[key]
            .as_str()
            .unwrap_or_else(|| panic!("deploy.{key}: {v}"))
            .to_string()
    };
    let (shell, systemd, dockerfile, kubernetes) = (
        text("shell"),
        text("systemd"),
        text("dockerfile"),
        text("kubernetes"),
    );
    assert!(
        shell.starts_with("env ") && shell.contains("sh -c"),
        "{shell}"
    );
    assert!(dockerfile.contains("apt-get install -y --no-install-recommends libjemalloc2"));
    let env = config(&json, "jemalloc")["env"]
        .as_object()
        .expect("env")
        .clone();
    assert!(env.contains_key("LD_PRELOAD"), "{env:?}");
    for (name, value) in &env {
        let value = value.as_str().expect("a string");
        assert!(shell.contains(&format!("{name}={value}")), "{shell}");
        assert!(
            systemd.contains(&format!("Environment=\"{name}={value}\"")),
            "{systemd}"
        );
        assert!(
            dockerfile.contains(&format!("ENV {name}=\"{value}\"")),
            "{dockerfile}"
        );
        assert!(
            kubernetes.contains(&format!("- name: {name}\n    value: \"{value}\"")),
            "{kubernetes}"
        );
    }
}

#[test]
fn report_rejudges_with_another_max_slowdown_and_rejects_a_bad_one() {
    let scratch = Scratch::new();
    small_experiment(&scratch, &[]);
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let output = scratch.run(&[
        "report",
        "--db",
        db,
        "--max-slowdown",
        "1000%",
        "--export-json",
        "-",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(json["verdict"]["max_slowdown_pct"], 1000.0);
    let table = scratch.run(&["report", "--full", "--db", db, "--max-slowdown", "10"]);
    assert!(
        stdout(&table).contains("verdict (budget: at most 10% slower; saving counts from 3%)"),
        "{}",
        stdout(&table)
    );
    let bad = scratch.run(&["report", "--db", db, "--max-slowdown", "fast"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("--max-slowdown 'fast'"),
        "{}",
        stderr(&bad)
    );
}

/// A printed figure, `1.18 GiB`, as the number in its unit's base (bytes or
/// seconds), half its last printed digit in that base, and its unit.
fn figure(text: &str) -> Option<(f64, f64, &str)> {
    let (number, unit) = text.trim().split_once(' ')?;
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        _ => return None,
    };
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    let half_digit = 0.5 * 10f64.powi(-(decimals as i32)) * scale;
    Some((number.parse::<f64>().ok()? * scale, half_digit, unit))
}

#[test]
fn report_judges_by_the_metrics_compare_was_told_unless_told_otherwise() {
    let scratch = Scratch::new();
    let json = small_experiment(
        &scratch,
        &[
            "--memory-metric",
            "peak",
            "--perf-metric",
            "cpu",
            "--min-saving",
            "7",
            "--max-slowdown",
            "10",
        ],
    );
    let chosen = |v: &serde_json::Value| {
        let v = &v["verdict"];
        (
            v["memory_metric"].as_str().unwrap_or("-").to_string(),
            v["performance_metric"].as_str().unwrap_or("-").to_string(),
            v["min_saving_pct"].as_f64().unwrap_or(-1.0),
            v["max_slowdown_pct"].as_f64().unwrap_or(-1.0),
        )
    };
    let at_compare = chosen(&json);
    assert_eq!((at_compare.2, at_compare.3), (7.0, 10.0), "{at_compare:?}");
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let report = |extra: &[&str]| {
        let mut args = vec!["report", "--db", db, "--export-json", "-"];
        args.extend_from_slice(extra);
        let output = scratch.run(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        chosen(&serde_json::from_slice(&output.stdout).expect("JSON"))
    };
    assert_eq!(report(&[]), at_compare, "the stored choice is the default");
    // The defaults given explicitly override what compare was told.
    let overridden = report(&[
        "--memory-metric",
        "mean",
        "--perf-metric",
        "wall",
        "--min-saving",
        "3",
        "--max-slowdown",
        "5",
    ]);
    assert_ne!(
        overridden.0, at_compare.0,
        "{overridden:?} vs {at_compare:?}"
    );
    assert_ne!(
        overridden.1, at_compare.1,
        "{overridden:?} vs {at_compare:?}"
    );
    assert_eq!((overridden.2, overridden.3), (3.0, 5.0), "{overridden:?}");
}

#[test]
fn judged_by_final_rss_the_summary_and_the_plot_show_it() {
    let scratch = Scratch::new();
    small_experiment(&scratch, &[]);
    let (db, plots) = (scratch.db(), scratch.path("plots"));
    let output = scratch.run(&[
        "report",
        "--db",
        db.to_str().expect("utf-8"),
        "--memory-metric",
        "final",
        "--plots",
        plots.to_str().expect("utf-8"),
        "--export-json",
        "-",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(json["verdict"]["memory_metric"], "final_rss_bytes");
    // The summary's median is the median of the runs' final RSS.
    let glibc = config(&json, "glibc");
    let mut finals: Vec<f64> = runs(glibc)
        .iter()
        .filter_map(|r| r["final_rss_bytes"].as_f64())
        .collect();
    finals.sort_by(f64::total_cmp);
    assert_eq!(finals.len(), 3, "{glibc}");
    assert_eq!(
        glibc["summary"]["final_rss_bytes"]["median"].as_f64(),
        Some(finals[1]),
        "{glibc}"
    );
    let svg = std::fs::read_to_string(plots.join("memory_vs_time.svg")).expect("the plot");
    assert!(svg.contains("final RSS against CPU time ("), "{svg}");
}

#[test]
fn one_configuration_alone_is_inconclusive_never_keep_the_default() {
    let scratch = Scratch::new();
    let single = program("single");
    let (output, json) = scratch.compare(
        &["-r", "2", "-a", "glibc"],
        &[single.to_str().expect("utf-8"), "8", "20"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let v = &json["verdict"];
    assert_eq!(v["outcome"], "inconclusive", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("add -a CONFIG")),
        "{v}"
    );
}

#[test]
fn markdown_export_has_the_table_and_the_verdict() {
    let scratch = Scratch::new();
    let md = scratch.path("report.md");
    let json = small_experiment(
        &scratch,
        &["--export-markdown", md.to_str().expect("utf-8")],
    );
    let text = std::fs::read_to_string(&md).expect("markdown written");
    assert!(
        text.contains("| configuration | runs ok | peak RSS | mean RSS |"),
        "{text}"
    );
    assert!(text.contains("| glibc | 3/3 |"), "{text}");
    assert!(
        text.contains("### Verdict (budget: at most 5% slower; saving counts from 3%)"),
        "{text}"
    );
    // Each column's figures: one unit, three significant digits, and the
    // JSON's raw median to that precision (in the full report, under the
    // summary's fold).
    fn cells(line: &str) -> Vec<&str> {
        line.trim_matches('|').split(" | ").map(str::trim).collect()
    }
    let text = &text[text.find("<details>").expect("the full report's fold")..];
    let head = cells(
        text.lines()
            .find(|l| l.starts_with("| configuration |"))
            .unwrap_or_default(),
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("| --- |"))
        .skip(1)
        .take_while(|l| l.starts_with("| "))
        .map(cells)
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (label, id) in [
        ("peak RSS", "peak_rss_bytes"),
        ("mean RSS", "mean_rss_bytes"),
        ("mean PSS", "mean_pss_bytes"),
        ("wall time", "wall_s"),
    ] {
        let Some(column) = head.iter().position(|h| *h == label) else {
            assert_eq!(label, "mean PSS", "no {label} column: {text}");
            continue;
        };
        let mut units = Vec::new();
        for row in &rows {
            let value = row[column].split("<br>").next().unwrap_or_default();
            let (printed, half_digit, unit) =
                figure(value).unwrap_or_else(|| panic!("{value}: {text}"));
            let digits = value.chars().filter(char::is_ascii_digit).count();
            assert!((3..=4).contains(&digits) || unit == "B", "{value}: {text}");
            let name = row[0].replace('\\', "");
            let raw = config(&json, &name)["summary"][id]["median"]
                .as_f64()
                .expect("a median");
            // The raw median rounded to the printed digits.
            assert!(
                (printed - raw).abs() <= half_digit * 1.0001,
                "{id} of {name}: {value} printed for {raw}"
            );
            units.push(unit);
        }
        units.dedup();
        assert_eq!(units.len(), 1, "{id}: {units:?} in one column: {text}");
    }
}

/// The Markdown export on a real GitHub-flavoured Markdown renderer
/// (cmark-gfm with GitHub's extensions; raw HTML kept, as GitHub keeps
/// `<details>`): the summary table is a table, the full report's tables
/// sit folded under `<details>` with its `<summary>`, and no row leaks as
/// raw pipes.
#[test]
fn markdown_renders_on_a_gfm_renderer_with_the_full_report_folded() {
    if !require_program("cmark-gfm", "cmark-gfm") {
        return;
    }
    let scratch = Scratch::new();
    let md = scratch.path("report.md");
    small_experiment(
        &scratch,
        &["--export-markdown", md.to_str().expect("utf-8")],
    );
    let rendered = std::process::Command::new("cmark-gfm")
        .args([
            "--unsafe",
            "-e",
            "table",
            "-e",
            "strikethrough",
            "-e",
            "autolink",
        ])
        .args(["-e", "tagfilter"])
        .arg(&md)
        .output()
        .expect("cmark-gfm runs");
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let html = stdout(&rendered);
    let (summary, fold) = html.split_once("<details>").expect("a <details> fold");
    assert!(
        summary.contains("<table>"),
        "the summary is no table: {html}"
    );
    let (folded, _) = fold.split_once("</details>").expect("the fold closes");
    assert!(folded.trim_start().starts_with("<summary>"), "{folded}");
    assert!(folded.matches("<table>").count() >= 2, "{folded}");
    // Pipes may appear in code only: strip <pre> blocks, then none is left.
    let mut text = html.clone();
    while let Some(start) = text.find("<pre") {
        let end = text[start..]
            .find("</pre>")
            .map_or(text.len(), |e| start + e + 6);
        text.replace_range(start..end, "");
    }
    let leaked: Vec<&str> = text.lines().filter(|l| l.contains('|')).collect();
    assert!(leaked.is_empty(), "raw pipes: {leaked:#?}");
}

#[test]
fn plots_are_written_as_svg_and_png() {
    let scratch = Scratch::new();
    let dir = scratch.path("plots");
    small_experiment(&scratch, &["--plots", dir.to_str().expect("utf-8")]);
    for name in [
        "rss_over_time",
        "ratios",
        "memory_vs_time",
        "faults_over_time",
    ] {
        let svg = std::fs::read_to_string(dir.join(format!("{name}.svg"))).expect(name);
        assert!(
            svg.starts_with("<svg ") && svg.contains("glibc"),
            "{name}: {svg}"
        );
        let png = std::fs::read(dir.join(format!("{name}.png"))).expect(name);
        assert_eq!(&png[1..4], b"PNG", "{name}");
        assert!(png.len() > 5000, "{name}: {} bytes", png.len());
    }
}

#[test]
fn html_report_renders_a_script_in_the_command_line_as_text() {
    let scratch = Scratch::new();
    let html_path = scratch.path("report.html");
    let single = program("single");
    let (output, _) = scratch.compare(
        &[
            "-r",
            "2",
            "--interval",
            "20ms",
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=1",
            "--html",
            html_path.to_str().expect("utf-8"),
        ],
        &[
            single.to_str().expect("utf-8"),
            "16",
            "50",
            "<script>alert(1)</script>",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&html_path).expect("HTML written");
    assert!(!html.contains("<script"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(html.contains("<h2>Verdict"), "{html}");
    assert!(html.matches("<svg ").count() >= 4, "{html}");
    assert!(html.contains("href=\"file:///"), "{html}");
}

#[test]
fn progress_is_one_line_per_run_in_a_pipe_and_quiet_prints_only_the_table() {
    let scratch = Scratch::new();
    let single = program("single");
    let single = single.to_str().expect("utf-8");
    let opts = ["-r", "2", "--interval", "20ms", "-a", "glibc"];
    let (output, _) = scratch.compare(&opts, &[single, "8", "20"]);
    let log = stderr(&output);
    assert!(
        log.contains("[1/2] glibc") && log.contains("[2/2] glibc"),
        "{log}"
    );
    assert!(
        !log.contains('\r'),
        "no redrawing outside a terminal: {log:?}"
    );
    let mut quiet = opts.to_vec();
    quiet.push("--quiet");
    let (output, _) = scratch.compare(&quiet, &[single, "8", "20"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("[1/2]"), "{}", stderr(&output));
    assert!(stdout(&output).contains("verdict"), "{}", stdout(&output));
}

#[test]
fn progress_bar_over_the_runs_with_an_eta_on_a_terminal() {
    // `script` gives allocscope a pseudo-terminal for stdout and stderr.
    let scratch = Scratch::new();
    let single = program("single");
    let db = scratch.db();
    let command = format!(
        "{} compare --db {} -r 2 --interval 20ms -a glibc -- {} 8 20",
        env!("CARGO_BIN_EXE_allocscope"),
        db.display(),
        single.display()
    );
    let output = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    // One status area: the bar, half full while the second run goes on;
    // no line per finished run (that is the log's, off a terminal).
    assert!(
        text.contains("glibc run 2 [===============>") && text.contains("] 1/2 runs, elapsed "),
        "{text:?}"
    );
    assert!(text.contains(", ETA "), "{text:?}");
    assert!(!text.contains("[1/2] glibc "), "{text:?}");
    assert!(text.contains("verdict"), "{text:?}");
}

/// `allocscope report | head`: a reader that stops early ends the output
/// quietly, with exit 0 and no error, in every text the report prints.
#[test]
fn a_reader_that_stops_early_ends_the_report_quietly() {
    let scratch = Scratch::new();
    small_experiment(&scratch, &[]);
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    for args in [
        &["report", "--export-json", "-"][..],
        &["report", "--full"],
        &["report", "--list"],
    ] {
        let mut child = scratch
            .command(&[args, &["--db", db]].concat())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("allocscope runs");
        // Read nothing: close the pipe at once, as `head -c 0` would.
        drop(child.stdout.take());
        let output = child.wait_with_output().expect("allocscope ends");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            !stderr(&output).contains("Broken pipe") && !stderr(&output).contains("panicked"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}
