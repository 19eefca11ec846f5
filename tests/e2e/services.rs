//! `compare --server` end to end, on 127.0.0.1 with bounded load: the
//! built-in `server` scenario driven by the built-in generator, by a replayed
//! access log and by a load command; a server that never becomes ready, one
//! that dies during the load, a port already in use, a replay file with no
//! usable line; and redis-server with redis-benchmark under every installed
//! allocator when Debian's redis-server is installed.

use crate::common::{
    config, configs, require_allocator, require_program, runs, stderr, stdout, Scratch,
};
use serde_json::Value;
use std::net::TcpListener;

const ALLOCSCOPE: &str = env!("CARGO_BIN_EXE_allocscope");

/// A port nothing listens on right now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    listener.local_addr().expect("has an address").port()
}

fn server_args(port: u16) -> Vec<String> {
    [ALLOCSCOPE, "workload", "server", "--threads", "4", "--port"]
        .iter()
        .map(|s| s.to_string())
        .chain([port.to_string()])
        .collect()
}

fn compare(
    scratch: &Scratch,
    options: &[String],
    server: &[String],
) -> (std::process::Output, Value) {
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    scratch.compare(&options, &server)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The `server: requests=N` count the scenario prints when it exits.
fn served(run: &Value) -> u64 {
    let path = run["stdout_path"].as_str().expect("stdout path");
    let text = std::fs::read_to_string(path).expect("stdout kept");
    text.lines()
        .find_map(|l| l.strip_prefix("server: requests="))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary line in {text:?}"))
}

fn labels(run: &Value) -> Vec<String> {
    run["markers"]
        .as_array()
        .expect("markers")
        .iter()
        .map(|m| m["label"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn builtin_generator_measures_latency_of_the_server_scenario_under_two_allocators() {
    let scratch = Scratch::new();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/item/{{rand:300}}");
    let mut options = strings(&["--server", "--requests", "1500", "--concurrency", "4"]);
    options.extend(strings(&["--settle", "300ms", "-r", "2", "-a", "glibc"]));
    options.extend(strings(&["-a", "glibc:arena_max=2", "--http", &url]));
    let (output, json) = compare(&scratch, &options, &server_args(port));
    assert!(output.status.success(), "{}", stderr(&output));
    for c in configs(&json) {
        for run in runs(c) {
            assert_eq!(run["status"], "ok", "{run}");
            let l = &run["latency"];
            assert_eq!(l["requests"], 1500, "{l}");
            assert_eq!(l["errors"], 0, "{l}");
            let p = |k: &str| l[k].as_f64().unwrap_or_else(|| panic!("{k} in {l}"));
            assert!(p("p50_ms") > 0.0 && p("p50_ms") <= p("p95_ms"), "{l}");
            assert!(
                p("p95_ms") <= p("p99_ms") && p("p99_ms") <= p("max_ms"),
                "{l}"
            );
            assert!(p("throughput_rps") > 0.0, "{l}");
            // The server saw every request the generator sent.
            assert_eq!(served(run), 1500);
            let s = &run["service"];
            assert!(
                s["rss_end_load_bytes"].as_u64().unwrap_or(0) > 1 << 20,
                "{s}"
            );
            assert!(s["rss_end_settle_bytes"].as_u64().is_some(), "{s}");
            assert_eq!(s["stopped_by"], "SIGTERM", "{s}");
            let load_s = s["load_s"].as_f64().unwrap_or(0.0);
            let stop_after =
                s["stop_s"].as_f64().unwrap_or(0.0) - s["load_end_s"].as_f64().unwrap_or(0.0);
            assert!(load_s > 0.0 && stop_after >= 0.29, "{s}");
            // The phases, in order, among the server's own markers.
            let marks = labels(run);
            let at = |label: &str| marks.iter().position(|m| m == label);
            assert!(
                at("ready") < at("load end") && at("load end") < at("settled"),
                "{marks:?}"
            );
            assert!(at("ready").is_some(), "{marks:?}");
        }
        let summary = &c["summary"];
        assert!(
            summary["latency"]["p95_ms"]["median"].as_f64().is_some(),
            "{summary}"
        );
        // Two runs: a median without an interval (none below six).
        assert!(summary["latency"]["p50_ms"]["ci_high"].is_null());
        assert!(
            summary["ratio"]["p50_ms"]["value"].as_f64().is_some(),
            "{summary}"
        );
        // Two rounds pair into a ratio with an interval.
        assert!(
            summary["ratio"]["p95_ms"]["ci_low"].as_f64().is_some(),
            "{summary}"
        );
    }
    assert_eq!(json["verdict"]["performance_metric"], "cpu_per_request_ms");
    assert_eq!(json["verdict"]["performance_guard"], "p95_ms");
    assert_eq!(json["verdict"]["memory_metric"], "rss_end_load_bytes");
    let table = stdout(&output);
    assert!(table.contains("median response time"), "{table}");
    assert!(table.contains("p95 response time"), "{table}");
    assert!(table.contains("latency (medians over runs)"), "{table}");
}

#[test]
fn replayed_access_log_sends_its_get_and_head_lines_at_the_logged_pace() {
    let scratch = Scratch::new();
    let port = free_port();
    // 40 usable lines over 2 s of log time, plus lines that cannot be replayed.
    let mut log = String::new();
    for i in 0..40 {
        let method = if i % 10 == 9 { "HEAD" } else { "GET" };
        log.push_str(&format!(
            "127.0.0.1 - - [22/Nov/2026:10:00:{:02} +0000] \"{method} /item/{} HTTP/1.1\" 200 512 \"-\" \"curl/8.0\"\n",
            i / 20,
            i + 1
        ));
    }
    log.push_str("127.0.0.1 - - [22/Nov/2026:10:00:02 +0000] \"POST /form HTTP/1.1\" 200 1\n");
    log.push_str("this is not a log line\n");
    let file = scratch.path("access.log");
    std::fs::write(&file, log).expect("writes the log");
    let target = format!("http://127.0.0.1:{port}");
    let mut options = strings(&["--server", "--replay", file.to_str().unwrap_or_default()]);
    options.extend(strings(&[
        "--target", &target, "--pace", "original", "--speed", "4",
    ]));
    options.extend(strings(&["-r", "1", "-a", "glibc"]));
    let (output, json) = compare(&scratch, &options, &server_args(port));
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["latency"]["requests"], 40, "{run}");
    assert_eq!(run["latency"]["errors"], 0, "{run}");
    assert_eq!(served(run), 40);
    assert_eq!(run["service"]["rejected_lines"], 2, "{run}");
    // One second of log time at 4x: the load cannot finish before 0.25 s.
    let load_s = run["service"]["load_s"].as_f64().unwrap_or(0.0);
    assert!((0.24..3.0).contains(&load_s), "load took {load_s} s");
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("2 line(s) of the replayed log"),
        "{warnings}"
    );
}

#[test]
fn load_command_runs_outside_the_sampled_tree_and_its_output_is_kept() {
    let scratch = Scratch::new();
    let port = free_port();
    // The load holds 150 MiB for 600 ms: none of it may count as the server's.
    let hold = crate::common::program("hold");
    let load = format!("{} blocks 150 600", hold.display());
    let ready = format!("tcp:127.0.0.1:{port}");
    let mut options = strings(&["--server", "--load", &load, "--ready", &ready]);
    options.extend(strings(&["-r", "1", "-a", "glibc", "--interval", "20ms"]));
    let (output, json) = compare(&scratch, &options, &server_args(port));
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "ok", "{run}");
    let peak = run["peak_rss_bytes"].as_u64().unwrap_or(u64::MAX);
    assert!(
        peak < 100 << 20,
        "the load's memory was sampled: peak {peak}"
    );
    let s = &run["service"];
    assert_eq!(s["load_exit"], "exit 0", "{s}");
    let load_s = s["load_s"].as_f64().unwrap_or(0.0);
    assert!((0.55..5.0).contains(&load_s), "load_s {load_s}");
    let kept = std::fs::read_to_string(s["load_stdout_path"].as_str().unwrap_or_default())
        .expect("load stdout kept");
    assert!(!kept.trim().is_empty(), "empty load stdout");
    assert!(
        run["latency"].is_null(),
        "a load command has no latency: {run}"
    );
    assert_eq!(json["verdict"]["performance_metric"], "cpu_s");
    assert_eq!(json["verdict"]["performance_guard"], "load_s");
}

#[test]
fn server_that_never_becomes_ready_fails_with_its_stderr_and_the_others_go_on() {
    let scratch = Scratch::new();
    let port = free_port();
    // Without jemalloc the "server" only complains; with it it serves.
    let script = format!(
        "case \"$LD_PRELOAD\" in *jemalloc*) exec {ALLOCSCOPE} workload server --port {port};; \
         *) echo 'bind: permission denied' >&2; sleep 30;; esac"
    );
    if !require_allocator("jemalloc") {
        return;
    }
    let preloaded = "jemalloc";
    let url = format!("http://127.0.0.1:{port}/health");
    let mut options = strings(&["--server", "--http", &url, "--requests", "200"]);
    options.extend(strings(&[
        "--ready-timeout",
        "1s",
        "-r",
        "1",
        "-a",
        "glibc",
        "-a",
        preloaded,
    ]));
    let started = std::time::Instant::now();
    let (output, json) = compare(&scratch, &options, &strings(&["sh", "-c", &script]));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        started.elapsed().as_secs() < 20,
        "the sleeping server was not ended"
    );
    let failed = &runs(config(&json, "glibc"))[0];
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(message.contains("not ready after 1.00 s"), "{message}");
    assert!(message.contains("bind: permission denied"), "{message}");
    let ok = &runs(config(&json, preloaded))[0];
    assert_eq!(ok["status"], "ok", "{ok}");
    assert_eq!(ok["latency"]["requests"], 200);
}

#[test]
fn server_killed_during_the_load_is_crashed_with_its_signal() {
    let scratch = Scratch::new();
    let port = free_port();
    let pid_file = scratch.path("server.pid");
    let pid_path = pid_file.display();
    let server = format!("echo $$ > {pid_path}; exec {ALLOCSCOPE} workload server --port {port}");
    // SIGKILL from outside, as an OOM killer or an operator would send it.
    let load = format!("sleep 0.3; kill -KILL $(cat {pid_path}); sleep 20");
    let ready = format!("tcp:127.0.0.1:{port}");
    let options = strings(&[
        "--server", "--load", &load, "--ready", &ready, "-r", "1", "-a", "glibc",
    ]);
    let (output, json) = compare(&scratch, &options, &strings(&["sh", "-c", &server]));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "crashed", "{run}");
    assert_eq!(run["signal"], 9, "{run}");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("killed by signal 9 (SIGKILL) during the load"),
        "{message}"
    );
    // The load's `sleep 20` was ended with the run.
    assert!(run["wall_s"].as_f64().unwrap_or(99.0) < 10.0, "{run}");
}

#[test]
fn server_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let scratch = Scratch::new();
    let server = "trap '' TERM; echo 'accepting connections'; while true; do sleep 0.1; done";
    let options = strings(&[
        "--server",
        "--load",
        "true",
        "--ready-log",
        "^accepting",
        "--grace",
        "500ms",
        "-r",
        "1",
        "-a",
        "glibc",
    ]);
    let started = std::time::Instant::now();
    let (output, json) = compare(&scratch, &options, &strings(&["sh", "-c", server]));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        started.elapsed().as_secs() < 15,
        "the server was not killed"
    );
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "ok", "{run}");
    let stopped = run["service"]["stopped_by"].as_str().unwrap_or_default();
    assert!(stopped.starts_with("SIGKILL: still running 500"), "{run}");
    let s = &run["service"];
    let grace = run["wall_s"].as_f64().unwrap_or(0.0) - s["stop_s"].as_f64().unwrap_or(0.0);
    assert!(
        (0.45..5.0).contains(&grace),
        "SIGKILL came {grace} s after SIGTERM"
    );
}

#[test]
fn port_already_in_use_is_refused_before_anything_runs() {
    let scratch = Scratch::new();
    let busy = TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = busy.local_addr().expect("address").port();
    let url = format!("http://127.0.0.1:{port}/");
    let db = scratch.db();
    let output = scratch.run(&[
        "compare",
        "--db",
        db.to_str().unwrap_or_default(),
        "--server",
        "--http",
        &url,
        "--",
        "true",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("port {port} on 127.0.0.1 is already in use")),
        "{err}"
    );
    assert!(!db.exists(), "nothing may be stored");
}

#[test]
fn replay_file_without_a_usable_line_exits_2_with_the_count_and_an_example() {
    let scratch = Scratch::new();
    let file = scratch.path("bad.log");
    std::fs::write(&file, "POST /a HTTP/1.1\nnot a log\n\n").expect("writes");
    let port = free_port();
    let target = format!("http://127.0.0.1:{port}");
    let output = scratch.run(&[
        "compare",
        "--server",
        "--replay",
        file.to_str().unwrap_or_default(),
        "--target",
        &target,
        "--",
        "true",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("has no line to replay: 2 rejected"), "{err}");
    assert!(err.contains("e.g. `POST /a HTTP/1.1`"), "{err}");
}

#[test]
fn service_flags_without_server_or_load_are_refused() {
    let scratch = Scratch::new();
    for (args, expected) in [
        (vec!["--http", "http://127.0.0.1:1/"], "add --server"),
        (vec!["--server"], "--server needs a load"),
        (
            vec![
                "--server",
                "--load",
                "true",
                "--http",
                "http://127.0.0.1:1/",
            ],
            "give exactly one",
        ),
        (
            vec!["--server", "--load", "true"],
            "--load needs a readiness check",
        ),
        (vec!["--server", "--http", "https://127.0.0.1:1/"], "https"),
    ] {
        let mut full = vec!["compare"];
        full.extend(args.iter().copied());
        full.extend(["--", "true"]);
        let output = scratch.run(&full);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let err = stderr(&output);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// redis-server (Debian's, which links jemalloc) with redis-benchmark as the
/// load, under every installed allocator.
#[test]
fn redis_server_with_redis_benchmark_under_every_installed_allocator() {
    if !require_program("redis-server", "redis-server")
        || !require_program("redis-benchmark", "redis-tools")
    {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let port = free_port().to_string();
    let load = format!("redis-benchmark -p {port} -n 5000 -c 4 -q -t set,get -d 256");
    let mut options = strings(&["--server", "--load", &load, "-r", "1"]);
    options.extend(strings(&["--ready-log", "Ready to accept connections"]));
    options.extend(crate::common::every_allocator_args());
    let server = strings(&[
        "redis-server",
        "--port",
        &port,
        "--save",
        "",
        "--appendonly",
        "no",
    ]);
    let (output, json) = compare(&scratch, &options, &server);
    assert!(output.status.success(), "{}", stderr(&output));
    for c in configs(&json) {
        let run = &runs(c)[0];
        assert_eq!(run["status"], "ok", "{run}");
        assert_eq!(run["service"]["load_exit"], "exit 0", "{run}");
        let log = std::fs::read_to_string(
            run["service"]["load_stdout_path"]
                .as_str()
                .unwrap_or_default(),
        )
        .unwrap_or_default();
        assert!(log.contains("requests per second"), "{log}");
    }
    // Debian's redis links jemalloc: the glibc run preloaded the glibc shim.
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("links jemalloc itself: glibc preloaded allocscope's glibc shim"),
        "{warnings}"
    );
}

#[test]
fn demo_server_drives_the_scenario_and_writes_the_service_report() {
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let out = scratch.path("demo");
    let output = scratch.run(&[
        "demo",
        "server",
        "--quick",
        "--full",
        "-r",
        "1",
        "--db",
        "demo.db",
        "--out",
        out.to_str().unwrap_or_default(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(table.contains("median response time"), "{table}");
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("server.json")).expect("server.json written"),
    )
    .expect("valid JSON");
    for c in configs(&json) {
        let run = &runs(c)[0];
        assert_eq!(run["status"], "ok", "{run}");
        assert_eq!(run["latency"]["requests"], 20000, "{run}");
    }
    let html = std::fs::read_to_string(out.join("server.html")).expect("server.html written");
    assert!(
        html.contains("<figure id=\"plot-memory_vs_latency\">"),
        "html lacks the plot"
    );
}

#[test]
fn ctrl_c_during_the_load_leaves_no_server_and_no_load_running() {
    let scratch = Scratch::new();
    let port = free_port();
    // The load writes its pid, then becomes a long sleep; the server is
    // found by its port.
    let pid_file = scratch.path("load.pid");
    let load = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let ready = format!("tcp:127.0.0.1:{port}");
    let db = scratch.db();
    let mut args = strings(&["compare", "--db", db.to_str().unwrap_or_default()]);
    args.extend(strings(&["--server", "--load", &load, "--ready", &ready]));
    args.extend(strings(&["-r", "2", "-a", "glibc", "--"]));
    args.extend(server_args(port));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = scratch
        .command(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("allocscope starts");
    let load_pid =
        || -> Option<i32> { std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok() };
    let loading =
        crate::common::wait_until(std::time::Duration::from_secs(20), || load_pid().is_some());
    assert!(loading, "the load never started");
    let pid = load_pid().unwrap_or_default();
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().expect("allocscope ends");
    assert_eq!(status.code(), Some(130));
    let gone = crate::common::wait_until(std::time::Duration::from_secs(3), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(gone, "the load command {pid} outlived allocscope");
    let port_free = std::net::TcpStream::connect(("127.0.0.1", port)).is_err();
    assert!(port_free, "the server still listens on {port}");
}
