//! A server driven by a load that runs for a fixed time (`wrk -d 3s`): the
//! load duration is the same every run, so the verdict says so and offers
//! the figures wrk printed (requests per second, latencies), and
//! `--perf-metric auto` judges by one of them, named on the screen.

use crate::common::{fits_one_screen, require_program, stderr, Scratch};
use std::net::TcpListener;

/// nginx on a free port with its files in the scratch directory, as
/// `compare --server` options (`--ready`, `--load 'wrk -d 3s ...'`) and
/// its command line.
fn nginx_under_wrk(scratch: &Scratch) -> (Vec<String>, Vec<String>) {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let dir = scratch.path("nginx");
    std::fs::create_dir_all(dir.join("logs")).expect("nginx dir");
    let d = dir.display();
    let conf = format!(
        "worker_processes 2;\nerror_log {d}/logs/error.log;\npid {d}/logs/nginx.pid;\n\
         events {{ worker_connections 256; }}\nhttp {{ access_log off; \
         client_body_temp_path {d}; proxy_temp_path {d}; fastcgi_temp_path {d}; \
         uwsgi_temp_path {d}; scgi_temp_path {d};\n\
         server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"hello\\n\"; }} }} }}\n"
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).expect("nginx.conf");
    let load = format!("wrk -t2 -c16 -d3s --latency http://127.0.0.1:{port}/");
    let ready = format!("tcp:127.0.0.1:{port}");
    let options = ["--server", "--load", &load, "--ready", &ready, "-r", "3"];
    let options = options.iter().map(|s| s.to_string());
    let options = options.chain(["-a", "glibc", "-a", "jemalloc"].map(String::from));
    let server = ["nginx", "-p", &d.to_string(), "-c"].map(String::from);
    let server = server.into_iter().chain([
        conf_path.display().to_string(),
        "-g".into(),
        "daemon off;".into(),
    ]);
    (options.collect(), server.collect())
}

fn compare(scratch: &Scratch, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let (mut options, server) = nginx_under_wrk(scratch);
    options.extend(extra.iter().map(|s| s.to_string()));
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    scratch.compare(&options, &server)
}

fn present() -> bool {
    require_program("nginx", "nginx") && require_program("wrk", "wrk")
}

#[test]
fn a_server_under_a_fixed_time_load_gets_the_loads_figures_offered() {
    if !present() || !crate::common::require_allocator("jemalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let (output, json) = compare(&scratch, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let screen = scratch.screen();
    fits_one_screen(&screen);
    let v = &json["verdict"];
    assert_eq!(v["performance_metric"], "load_s", "{v}");
    let notes = v["explanation"].to_string();
    assert!(
        notes.contains("fastest load duration is within 2%"),
        "{notes}"
    );
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("the load duration is fixed"), "{screen}");
    // wrk's requests per second and latencies, the first three with their
    // flags (which come first depends on how they varied), the latencies
    // lower-is-better (no --higher-is-better).
    for figure in [
        "requests_sec",
        "latency_avg_ms",
        "latency_p99_ms",
        "--perf-metric ",
    ] {
        assert!(words.contains(figure), "{figure}: {screen}");
    }
    assert!(!words.contains("--higher-is-better latency"), "{screen}");
}

#[test]
fn perf_metric_auto_judges_a_fixed_time_load_by_one_of_its_figures() {
    if !present() || !crate::common::require_allocator("jemalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let (output, json) = compare(&scratch, &["--perf-metric", "auto"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let v = &json["verdict"];
    let judged = v["performance_metric"].as_str().unwrap_or_default();
    assert!(
        judged == "requests_sec" || judged.starts_with("latency_"),
        "{v}"
    );
    let spec = &json["experiment"]["user_metrics"][0];
    assert_eq!(spec["name"], judged, "{spec}");
    assert_eq!(spec["higher_is_better"], judged == "requests_sec", "{spec}");
    // Every run's value came from wrk's output, not nginx's.
    let runs = crate::common::runs(crate::common::config(&json, "glibc"));
    assert!(
        runs.iter()
            .all(|r| r["user_metrics"][judged].as_f64().is_some_and(|x| x > 0.0)),
        "{runs:?}"
    );
    let screen = scratch.screen();
    fits_one_screen(&screen);
    assert!(
        screen.contains(judged),
        "the screen names {judged}: {screen}"
    );
}
