//! allocscope's load generator against wrk, on allocscope's own `server`
//! scenario, as plain `name key=value` lines.
//!
//! 1. Throughput, closed loop, 8 connections for 5 s each, same path
//!    (`/item/7`) for both: `wrk -t2 -c8` and `load::run` with concurrency 8,
//!    alternated twice; prints each round and the ratio of the means
//!    (floor: ours >= 0.5x wrk). Then ours on `/item/{rand:500}` for
//!    reference (not compared: wrk would need a Lua script).
//! 2. Latency, same path for both, on `/item/7` (~54 KB) and `/health`
//!    (2 bytes), p50/p90/p99 and the ratios ours / wrk (goal: within 20%):
//!    a. a light load, ~500 requests/s for 10 s. wrk has no rate limit, so
//!    it runs one connection with a 2 ms `delay()` (a Lua script that
//!    changes nothing else); ours `Rate(500)` on 4 connections, idle
//!    and on time almost always. Neither side saturates.
//!    b. one connection, closed loop, 5 s: `wrk -t1 -c1` against ours at
//!    concurrency 1, plus a sense check for both tools: with one
//!    connection the mean latency cannot exceed 1/throughput.
//! 3. Parsing a 1,000,000-line combined log.
//!
//! The server runs with 8 threads (a keep-alive connection holds a server
//! thread) and shares the machine's cores with the generator: both tools see
//! the same server under the same conditions. Needs wrk on PATH; without it
//! only our own figures are printed.

use allocscope::load::{self, LoadReport, Percentiles, Plan, Requests, Schedule};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const RUN_FOR: Duration = Duration::from_secs(5);
/// The light-load runs are longer: at 500/s, 10 s gives 5000 samples, 50
/// of them above p99.
const LIGHT_FOR: Duration = Duration::from_secs(10);
const PATH: &str = "/item/7";
const ROUNDS: usize = 2;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let (mut server, addr) = start_server()?;
    let result = compare(addr);
    // SIGTERM lets the server exit cleanly with its request count.
    // SAFETY: kill(2) on our own child's pid; no memory is involved.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let _ = server.wait();
    result?;
    replay_parse_speed();
    Ok(())
}

fn start_server() -> Result<(Child, SocketAddr), String> {
    let mut server = Command::new(env!("CARGO_BIN_EXE_allocscope"))
        .args(["workload", "server", "--port", "0", "--threads", "8"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the server scenario: {e}"))?;
    let stdout = server.stdout.take().ok_or("server without stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = lines
            .next()
            .ok_or("server exited before listening")?
            .map_err(|e| e.to_string())?;
        if let Some(rest) = line.strip_prefix("server: listening on http://127.0.0.1:") {
            break rest
                .trim_end_matches('/')
                .parse::<u16>()
                .map_err(|e| e.to_string())?;
        }
    };
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Ok((server, SocketAddr::from(([127, 0, 0, 1], port))))
}

fn compare(addr: SocketAddr) -> Result<(), String> {
    let url = format!("http://{addr}{PATH}");
    let wrk_found = Command::new("wrk").arg("--version").output().is_ok();
    if !wrk_found {
        println!("note wrk=missing comparison=skipped (apt-get install wrk)");
    }
    // Warm-up: fills the server's page cache and its allocator's heap.
    ours(
        addr,
        PATH,
        8,
        Schedule::AsFastAsPossible,
        Duration::from_secs(1),
    );

    let (mut wrk_rps, mut our_rps) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        if wrk_found {
            let w = wrk(&url, 2, 8, None, RUN_FOR)?;
            println!(
                "throughput tool=wrk round={round} connections=8 threads=2 rps={:.0}",
                w.rps
            );
            wrk_rps.push(w.rps);
        }
        let o = ours(addr, PATH, 8, Schedule::AsFastAsPossible, RUN_FOR);
        print_ours("throughput", round, 8, &o);
        our_rps.push(o.throughput_rps);
    }
    if wrk_found {
        let ratio = mean(&our_rps) / mean(&wrk_rps);
        println!(
            "throughput_ratio ours_over_wrk connections=8 wrk_rps={:.0} ours_rps={:.0} value={ratio:.3} floor=0.5 {}",
            mean(&wrk_rps),
            mean(&our_rps),
            if ratio >= 0.5 { "ok" } else { "BELOW_FLOOR" }
        );
    }
    let random = ours(
        addr,
        "/item/{rand:500}",
        8,
        Schedule::AsFastAsPossible,
        RUN_FOR,
    );
    print_ours("throughput_rand500", 1, 8, &random);

    for path in [PATH, "/health"] {
        latency(addr, path, wrk_found)?;
    }
    Ok(())
}

/// Two loads, same path for both tools: one connection in a closed loop
/// (as fast as possible), and about 500 requests per second (wrk: one
/// connection with a 2 ms `delay()` between requests; ours: `Rate(500)` on 4
/// connections, almost always idle and on time).
fn latency(addr: SocketAddr, path: &str, wrk_found: bool) -> Result<(), String> {
    let url = format!("http://{addr}{path}");
    let closed = ours(addr, path, 1, Schedule::AsFastAsPossible, RUN_FOR);
    print_ours(&format!("latency_closed path={path}"), 1, 1, &closed);
    let open = ours(addr, path, 4, Schedule::Rate(500.0), LIGHT_FOR);
    print_ours(&format!("latency_rate500 path={path}"), 1, 4, &open);
    if !wrk_found {
        return Ok(());
    }
    let closed_p = closed.latency.ok_or("no latency from our closed loop")?;
    let open_p = open.latency.ok_or("no latency from our open loop")?;
    let w = wrk(&url, 1, 1, None, RUN_FOR)?;
    print_wrk(&format!("latency_closed path={path}"), 1, &w);
    // One connection, closed loop: the mean latency cannot exceed the time
    // per request (1/rps), and the percentiles bound the mean from below
    // (40% of requests take at least p50, 9% p90, 1% p99). Checks either
    // tool's figures for sense.
    for (tool, p, rps) in [
        ("wrk", &w.latency, w.rps),
        ("allocscope", &closed_p, closed.throughput_rps),
    ] {
        let bound_ms = 0.4 * p.p50_ms + 0.09 * p.p90_ms + 0.01 * p.p99_ms;
        let cycle_ms = 1000.0 / rps;
        println!(
            "latency_consistency tool={tool} path={path} mean_lower_bound_ms={bound_ms:.4} time_per_request_ms={cycle_ms:.4} {}",
            if bound_ms <= cycle_ms { "ok" } else { "IMPOSSIBLE" }
        );
    }
    println!(
        "latency_consistency tool=wrk path={path} wrk_mean_ms={:.4} time_per_request_ms={:.4}",
        w.mean_ms,
        1000.0 / w.rps
    );
    print_ratios(
        &format!("latency_ratio ours_over_wrk load=closed_c1 path={path}"),
        &closed_p,
        &w.latency,
    );
    let script = std::env::temp_dir().join(format!("allocscope-delay-{}.lua", std::process::id()));
    std::fs::write(&script, "function delay()\n  return 2\nend\n")
        .map_err(|e| format!("writing {}: {e}", script.display()))?;
    let w = wrk(&url, 1, 1, Some(&script), LIGHT_FOR);
    let _ = std::fs::remove_file(&script);
    let w = w?;
    print_wrk(&format!("latency_delay2ms path={path}"), 1, &w);
    print_ratios(
        &format!("latency_ratio ours_rate500_over_wrk_delay2ms path={path}"),
        &open_p,
        &w.latency,
    );
    Ok(())
}

fn print_wrk(name: &str, connections: u32, w: &Wrk) {
    println!(
        "{name} tool=wrk connections={connections} rps={:.0} p50_ms={:.3} p90_ms={:.3} p99_ms={:.3}",
        w.rps, w.latency.p50_ms, w.latency.p90_ms, w.latency.p99_ms
    );
}

/// Runs our generator for `run_for` (the request count is unbounded; a
/// timer raises the stop flag).
fn ours(
    addr: SocketAddr,
    path: &str,
    concurrency: u32,
    schedule: Schedule,
    run_for: Duration,
) -> LoadReport {
    let plan = Plan {
        target_addr: addr,
        host_header: addr.to_string(),
        requests: Requests::Template {
            template: path.to_string(),
            count: u64::MAX,
        },
        concurrency,
        schedule,
        request_timeout: Duration::from_secs(5),
        seed: 1,
    };
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(run_for);
            stop.store(true, Ordering::Relaxed);
        });
        load::run(&plan, &stop)
    })
}

fn print_ours(name: &str, round: usize, connections: u32, r: &LoadReport) {
    let p = r.latency.unwrap_or(Percentiles {
        p50_ms: f64::NAN,
        p90_ms: f64::NAN,
        p95_ms: f64::NAN,
        p99_ms: f64::NAN,
        p999_ms: f64::NAN,
        max_ms: f64::NAN,
    });
    println!(
        "{name} tool=allocscope round={round} connections={connections} requests={} errors={} rps={:.0} p50_ms={:.3} p90_ms={:.3} p99_ms={:.3} generator_cpu_fraction={:.3} warnings={}",
        r.requests,
        r.errors,
        r.throughput_rps,
        p.p50_ms,
        p.p90_ms,
        p.p99_ms,
        r.generator_cpu_s / r.duration_s.max(1e-9),
        r.warnings.len()
    );
    for warning in &r.warnings {
        println!("warning {name}: {warning}");
    }
}

fn print_ratios(name: &str, ours: &Percentiles, theirs: &Percentiles) {
    let pairs = [
        ("p50", ours.p50_ms, theirs.p50_ms),
        ("p90", ours.p90_ms, theirs.p90_ms),
        ("p99", ours.p99_ms, theirs.p99_ms),
    ];
    let text: Vec<String> = pairs
        .iter()
        .map(|(q, a, b)| format!("{q}={:.3}", a / b))
        .collect();
    let within = pairs.iter().all(|(_, a, b)| (a / b - 1.0).abs() <= 0.2);
    println!(
        "{name} {} goal=within_20pct {}",
        text.join(" "),
        if within { "ok" } else { "OUTSIDE_GOAL" }
    );
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

struct Wrk {
    rps: f64,
    /// wrk's `Latency Avg`.
    mean_ms: f64,
    latency: Percentiles,
}

fn wrk(
    url: &str,
    threads: u32,
    connections: u32,
    script: Option<&std::path::Path>,
    run_for: Duration,
) -> Result<Wrk, String> {
    let mut command = Command::new("wrk");
    command.args([
        format!("-t{threads}"),
        format!("-c{connections}"),
        format!("-d{}s", run_for.as_secs()),
        "--latency".to_string(),
    ]);
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command
        .arg(url)
        .output()
        .map_err(|e| format!("running wrk: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    parse_wrk(&text).ok_or_else(|| format!("could not read wrk's output:\n{text}"))
}

/// Reads `Requests/sec:` and the `Latency Distribution` block of
/// `wrk --latency`.
fn parse_wrk(text: &str) -> Option<Wrk> {
    let mut rps = None;
    let mut mean_ms = None;
    let mut at = std::collections::HashMap::new();
    for line in text.lines().map(str::trim) {
        if let Some(value) = line.strip_prefix("Requests/sec:") {
            rps = value.trim().parse::<f64>().ok();
        }
        // `Latency  159.83us  333.83us ...` (not `Latency Distribution`).
        if let Some(stats) = line.strip_prefix("Latency ") {
            mean_ms = mean_ms.or(stats.split_whitespace().next().and_then(wrk_ms));
        }
        let mut words = line.split_whitespace();
        if let (Some(q @ ("50%" | "75%" | "90%" | "99%")), Some(v), None) =
            (words.next(), words.next(), words.next())
        {
            at.insert(q, wrk_ms(v)?);
        }
    }
    let p = |q| at.get(q).copied();
    Some(Wrk {
        rps: rps?,
        mean_ms: mean_ms?,
        latency: Percentiles {
            p50_ms: p("50%")?,
            p90_ms: p("90%")?,
            p95_ms: f64::NAN,
            p99_ms: p("99%")?,
            p999_ms: f64::NAN,
            max_ms: f64::NAN,
        },
    })
}

/// `123.45us`, `1.20ms`, `2.00s`, `1.5m` to milliseconds.
fn wrk_ms(value: &str) -> Option<f64> {
    let split = value.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = value.split_at(split);
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => return None,
    })
}

/// Times `parse_log` on a million varied combined-format lines.
fn replay_parse_speed() {
    let mut text = String::with_capacity(180 * 1_000_000);
    for i in 0..1_000_000u64 {
        let (minute, second) = (i / 60_000 % 60, i / 1000 % 60);
        let method = if i % 10 == 0 { "HEAD" } else { "GET" };
        text.push_str(&format!(
            "10.0.{}.{} - - [10/Oct/2024:13:{minute:02}:{second:02} +0200] \"{method} /item/{}?page={} HTTP/1.1\" 200 {} \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64)\"\n",
            i % 256, i / 256 % 256, i % 500, i % 7, 1000 + i % 9000
        ));
    }
    let started = Instant::now();
    let log = load::parse_log(&text);
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "replay_parse lines=1000000 bytes={} entries={} rejected={} seconds={seconds:.3} lines_per_second={:.0}",
        text.len(),
        log.entries.len(),
        log.rejected.count,
        1e6 / seconds
    );
}
