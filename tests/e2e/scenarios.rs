//! The built-in scenarios, briefly, under every installed allocator: they
//! run, their markers arrive with the right labels and memory, and the
//! multi-process one is sampled as one tree.

use crate::common::*;
use serde_json::Value;

fn allocscope() -> &'static str {
    env!("CARGO_BIN_EXE_allocscope")
}

fn marker_labels(run: &Value) -> Vec<String> {
    run["markers"]
        .as_array()
        .expect("markers array")
        .iter()
        .map(|m| m["label"].as_str().expect("label").to_string())
        .collect()
}

fn all_runs_ok(json: &Value) {
    for config in configs(json) {
        for run in runs(config) {
            assert_eq!(run["status"], "ok", "{}: {run}", config["name"]);
        }
    }
}

fn stdout_of(run: &Value) -> String {
    std::fs::read_to_string(run["stdout_path"].as_str().expect("stdout_path")).expect("stdout kept")
}

#[test]
fn churn_runs_under_every_allocator_and_glibc_grows_arenas() {
    let scratch = Scratch::new();
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-a", "glibc:arena_max=2", "-r", "1", "--interval", "20ms"]);
    let (output, json) = scratch.compare(
        &options,
        &[
            allocscope(),
            "workload",
            "churn",
            "--threads",
            "8",
            "--seconds",
            "1",
            "--live-mib",
            "16",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    all_runs_ok(&json);
    let arenas = |name: &str| -> u64 {
        let text = stdout_of(&config(&json, name)["runs"][0]);
        let value = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("glibc_arenas="))
            .unwrap_or_else(|| panic!("no arena count in {text}"));
        value.parse().expect("a number")
    };
    // 8 threads on 2 cores: glibc's default makes more arenas than the
    // cores need; arena_max=2 caps them.
    assert!(arenas("glibc") > 2, "glibc made {} arenas", arenas("glibc"));
    assert!(arenas("glibc:arena_max=2") <= 2);
    // Under a preloaded allocator glibc's arenas serve nothing: not counted.
    for name in installed_allocators().into_iter().filter(|n| *n != "glibc") {
        let text = stdout_of(&config(&json, name)["runs"][0]);
        assert!(!text.contains("glibc_arenas="), "{name}: {text}");
    }
    for config in configs(&json) {
        let labels = marker_labels(&config["runs"][0]);
        assert_eq!(
            labels.last().map(String::as_str),
            Some("done"),
            "{}: {labels:?}",
            config["name"]
        );
    }
}

#[test]
fn events_with_four_workers_is_sampled_as_one_tree_of_five() {
    let scratch = Scratch::new();
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-r", "1", "--interval", "20ms", "--samples"]);
    let (output, json) = scratch.compare(
        &options,
        &[
            allocscope(),
            "workload",
            "events",
            "--procs",
            "4",
            "--events",
            "12",
            "--big-every",
            "4",
            "--big-mib",
            "48",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    all_runs_ok(&json);
    for config in configs(&json) {
        let run = &config["runs"][0];
        let most = run["timeline"]
            .as_array()
            .expect("timeline")
            .iter()
            .filter_map(|s| s["processes"].as_u64())
            .max();
        assert_eq!(
            most,
            Some(5),
            "{}: the parent and its 4 workers",
            config["name"]
        );
        let labels = marker_labels(run);
        assert!(labels.len() >= 12, "{}: {labels:?}", config["name"]);
        assert!(
            run["peak_pss_bytes"].as_u64().is_some_and(|p| p > 48 << 20),
            "{run}"
        );
    }
}

#[test]
fn kv_markers_give_memory_per_item_count() {
    let scratch = Scratch::new();
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-r", "1", "--interval", "20ms"]);
    let (output, json) = scratch.compare(
        &options,
        &[
            allocscope(),
            "workload",
            "kv",
            "--items",
            "100000",
            "--hold-ms",
            "50",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    all_runs_ok(&json);
    for config in configs(&json) {
        let run = &config["runs"][0];
        let markers = run["markers"].as_array().expect("markers");
        let labels = marker_labels(run);
        let expected: Vec<String> = [0, 100, 1000, 10_000, 100_000]
            .iter()
            .map(|n| format!("items={n}"))
            .collect();
        assert_eq!(labels, expected, "{}", config["name"]);
        let rss = |i: usize| markers[i]["rss_bytes"].as_u64().expect("rss");
        // 100k items of 16-256 B values plus keys: at least ~15 MiB more than at 0.
        assert!(
            rss(4) > rss(0) + (15 << 20),
            "{}: {} -> {}",
            config["name"],
            rss(0),
            rss(4)
        );
        assert!(rss(4) >= rss(3), "{}", config["name"]);
    }
    let table = stdout(&output);
    assert!(table.contains("items=100000"), "{table}");
}

/// Sends `GET /item/N` requests on fresh connections until `stop` is set.
fn drive(port: u16, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> u64 {
    use std::io::{Read, Write};
    let mut answered = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        };
        let request =
            format!("GET /item/{answered} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let mut reply = Vec::new();
        if stream.write_all(request.as_bytes()).is_ok() && stream.read_to_end(&mut reply).is_ok() {
            answered += u64::from(reply.starts_with(b"HTTP/1.1 200"));
        }
    }
    answered
}

#[test]
fn server_runs_under_every_allocator_until_its_request_budget() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let client = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || drive(port, stop))
    };
    let scratch = Scratch::new();
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-r", "1", "--interval", "20ms", "--timeout", "60s"]);
    let port_text = port.to_string();
    let (output, json) = scratch.compare(
        &options,
        &[
            allocscope(),
            "workload",
            "server",
            "--port",
            &port_text,
            "--max-requests",
            "200",
        ],
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let answered = client.join().expect("client thread");
    assert!(output.status.success(), "{}", stderr(&output));
    all_runs_ok(&json);
    assert!(
        answered >= 200 * configs(&json).len() as u64 - 5,
        "{answered} answers"
    );
    for config in configs(&json) {
        let run = &config["runs"][0];
        assert_eq!(marker_labels(run), vec!["listening"], "{}", config["name"]);
        assert!(
            stdout_of(run).contains("server: requests=200"),
            "{}",
            stdout_of(run)
        );
    }
}
