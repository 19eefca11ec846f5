//! `record --metrics` and `soak --metrics`: the page checked by promtool
//! and scraped by a real Prometheus server started here on 127.0.0.1, and
//! the address errors.

use crate::common::*;
use crate::record::{churn, db_arg, Guard};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The body of `GET path` on 127.0.0.1:port, `None` until something answers.
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

#[test]
fn metrics_pass_promtool_and_a_real_prometheus_scrapes_them() {
    let scratch = Scratch::new();
    let workload = churn(&scratch, "30");
    let port = free_port();
    let db = db_arg(&scratch);
    let address = format!("127.0.0.1:{port}");
    let _recorder = Guard(
        scratch
            .command(&[
                "record",
                "--pid",
                &workload.0.id().to_string(),
                "--interval",
                "200ms",
                "--db",
                &db,
                "--name",
                "web \"1\"",
                "--metrics",
                &address,
            ])
            .stderr(Stdio::null())
            .spawn()
            .expect("record starts"),
    );
    let mut body = String::new();
    assert!(
        wait_until(Duration::from_secs(10), || {
            body = http_get(port, "/metrics").unwrap_or_default();
            body.contains("allocscope_pss_bytes")
        }),
        "no metrics: {body}"
    );
    assert!(body.contains(r#"allocscope_rss_bytes{recording="web \"1\"",config="attached"} "#));
    if !require_program("promtool", "prometheus") || !require_program("prometheus", "prometheus") {
        return;
    }
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.as_bytes())
        .expect("fed");
    let checked = check.wait_with_output().expect("promtool ends");
    assert!(
        checked.status.success(),
        "promtool: {}{}",
        stdout(&checked),
        stderr(&checked)
    );

    let answer = scraped_by_prometheus(&scratch, &address, "allocscope_rss_bytes");
    assert!(answer.contains("\"job\":\"allocscope\""), "{answer}");
}

/// A real Prometheus started here scraping `address` every second: its
/// answer to `query` once a series of it came back.
fn scraped_by_prometheus(scratch: &Scratch, address: &str, query: &str) -> String {
    let config = scratch.path("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: allocscope\n    \
             static_configs:\n      - targets: ['{address}']\n"
        ),
    )
    .expect("config written");
    let web = free_port();
    let _prometheus = Guard(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                scratch.path("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus starts"),
    );
    let mut answer = String::new();
    let scraped = wait_until(Duration::from_secs(30), || {
        answer = http_get(web, &format!("/api/v1/query?query={query}")).unwrap_or_default();
        answer.contains(&format!("\"__name__\":\"{query}\""))
    });
    assert!(scraped, "Prometheus never scraped allocscope: {answer}");
    answer
}

/// `soak --metrics`: every instance a series of its own, labelled by its
/// configuration and replica, scraped by a real Prometheus while the soak
/// runs.
#[test]
fn a_soak_serves_each_instance_labelled_by_configuration_and_replica() {
    if !require_program("prometheus", "prometheus") {
        return;
    }
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let address = format!("127.0.0.1:{}", free_port());
    let hold = program("hold");
    let mut args = crate::soak_launched::glibc_soak_args(&db, "2", "40s");
    args.extend(["--metrics", &address, "--"]);
    args.extend([hold.to_str().expect("utf-8"), "blocks", "16", "60000"]);
    let soak = Guard(
        scratch
            .command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("soak starts"),
    );
    let answer = scraped_by_prometheus(&scratch, &address, "allocscope_rss_bytes");
    for config in ["glibc", "glibc:arena_max=1"] {
        for replica in ["1", "2"] {
            let labels = format!(
                "\"config\":\"{config}\",\"instance\":\"{address}\",\"job\":\"allocscope\",\
                 \"recording\":\"{config}#{replica}\",\"replica\":\"{replica}\""
            );
            assert!(answer.contains(&labels), "{labels} not in {answer}");
        }
    }
    // Ctrl-C ends the soak as usual, its instances stopped.
    let pid = soak.0.id().to_string();
    let stopped = Command::new("kill").args(["-INT", &pid]).status();
    assert!(stopped.is_ok_and(|s| s.success()), "SIGINT to {pid}");
    let mut soak = soak;
    let ended = wait_until(Duration::from_secs(20), || {
        soak.0.try_wait().is_ok_and(|s| s.is_some())
    });
    assert!(ended, "the soak did not end at Ctrl-C");
}

#[test]
fn a_metrics_port_in_use_is_an_error_before_recording_starts() {
    let scratch = Scratch::new();
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("address").to_string();
    let db = db_arg(&scratch);
    let sleeper = Guard(Command::new("sleep").arg("10").spawn().expect("sleep"));
    let output = scratch.run(&[
        "record",
        "--pid",
        &sleeper.0.id().to_string(),
        "--db",
        &db,
        "--metrics",
        &address,
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("already in use"),
        "{}",
        stderr(&output)
    );
    assert!(!scratch.db().exists(), "nothing recorded");
    let public = scratch.run(&[
        "record",
        "--pid",
        &sleeper.0.id().to_string(),
        "--db",
        &db,
        "--metrics",
        "0.0.0.0:1",
    ]);
    assert_eq!(public.status.code(), Some(2));
    assert!(
        stderr(&public).contains("--metrics-public"),
        "{}",
        stderr(&public)
    );
}

#[test]
fn a_soak_refuses_a_port_in_use_and_metrics_on_jobs_before_anything_is_stored() {
    let scratch = Scratch::new();
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("address").to_string();
    let db = db_arg(&scratch);
    let soak = |extra: &[&str]| {
        let mut args = vec!["soak", "-a", "glibc", "--duration", "5s", "--db", &db];
        args.extend_from_slice(extra);
        args.extend(["--", "sleep", "10"]);
        scratch.run(&args)
    };
    let in_use = soak(&["--metrics", &address]);
    assert_eq!(in_use.status.code(), Some(2), "{}", stderr(&in_use));
    assert!(
        stderr(&in_use).contains("already in use"),
        "{}",
        stderr(&in_use)
    );
    let port = free_port().to_string();
    let on_jobs = soak(&["--metrics", &port, "--executor", "slurm", "--dry-run"]);
    assert_eq!(on_jobs.status.code(), Some(2), "{}", stderr(&on_jobs));
    assert!(
        stderr(&on_jobs).contains("soak --metrics serves the instances this process samples"),
        "{}",
        stderr(&on_jobs)
    );
    assert!(!scratch.db().exists(), "nothing stored");
}

#[test]
fn compare_serves_the_running_configurations_values() {
    let scratch = Scratch::new();
    let port = free_port();
    let db = db_arg(&scratch);
    let address = format!("127.0.0.1:{port}");
    let me = env!("CARGO_BIN_EXE_allocscope");
    let mut compare = Guard(
        scratch
            .command(&[
                "compare",
                "-a",
                "glibc",
                "-r",
                "1",
                "--db",
                &db,
                "--name",
                "live",
                "--metrics",
                &address,
                "--",
                me,
                "workload",
                "churn",
                "--threads",
                "2",
                "--hot-threads",
                "1",
                "--live-mib",
                "8",
                "--ops",
                "100000000000",
                "--seconds",
                "3",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("compare starts"),
    );
    let mut body = String::new();
    let seen = wait_until(Duration::from_secs(15), || {
        body = http_get(port, "/metrics").unwrap_or_default();
        body.contains(r#"allocscope_rss_bytes{recording="live",config="glibc"} "#)
    });
    assert!(seen, "no metrics from compare: {body}");
    let status = compare.0.wait().expect("compare ends");
    assert!(status.success());
}
