//! allocscope's load generator against wrk, on allocscope's own `server`
//! scenario, as plain `name key=value` lines.
//!
//! 1. Throughput, closed loop, 8 connections for 5 s each, same path
//!    (`/item/7`) for both: `wrk -t2 -c8` and `load::run` with concurrency 8,
//!    alternated twice; prints each round and the ratio of the means
//!    (floor: ours >= 0.5x wrk). Then ours on `/item/{rand:500}` for
//!    reference (not compared: wrk would need a Lua script).
//! 2. Latency, same path for both, on `/item/7` (~54 KB) and `/health`
//!    (2 bytes), p50/p90/p99, in `LATENCY_ROUNDS` alternated rounds; the
//!    goal compares the medians over the rounds (ours / wrk within 20%):
//!    a. a light load at the same request spacing for both, one
//!    connection each: wrk has no rate limit, so it sends with a 2 ms
//!    `delay()` after each response (a Lua script that changes nothing
//!    else), and ours runs `Rate(r)` at the rate wrk achieved, r ~450/s
//!    (2 ms plus the response plus the wake-up). Neither side saturates.
//!    b. one connection, closed loop: `wrk -t1 -c1` against ours at
//!    concurrency 1, plus a sense check for both tools: with one
//!    connection the mean latency cannot exceed 1/throughput. Not a goal:
//!    on 2 cores its figures depend on whether the OS puts the client and
//!    the server thread on one CPU (~100k/s on `/health`) or two (~10k/s,
//!    two cross-CPU wake-ups a request), for either tool, run to run.
//! 3. Parsing a 1,000,000-line combined log.
//!
//! The server runs with 8 threads (a keep-alive connection holds a server
//! thread) and shares the machine's cores with the generator: both tools see
//! the same server under the same conditions. Needs wrk on PATH; without it
//! only our own figures are printed.

#[path = "loadgen_vs_wrk/wrk.rs"]
mod wrk;

use allocscope_core::load::{self, LoadReport, Percentiles, Plan, Requests, Schedule};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wrk::{wrk, Wrk};

const RUN_FOR: Duration = Duration::from_secs(5);
/// The light-load runs are longer: at ~450/s, 8 s gives ~3600 samples, 36
/// of them above p99.
const LIGHT_FOR: Duration = Duration::from_secs(8);
const CLOSED_FOR: Duration = Duration::from_secs(3);
/// Alternated rounds per latency comparison; medians are compared.
const LATENCY_ROUNDS: usize = 5;
/// wrk's think time between a response and the next request, in ms.
const DELAY_MS: u32 = 2;
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

/// The light load and the closed loop on one connection, same path for both
/// tools, alternated over `LATENCY_ROUNDS` rounds (the tool that goes first
/// swaps each round); prints each run, the medians and their ratios.
fn latency(addr: SocketAddr, path: &str, wrk_found: bool) -> Result<(), String> {
    let url = format!("http://{addr}{path}");
    if !wrk_found {
        let open = ours(addr, path, 1, Schedule::Rate(450.0), LIGHT_FOR);
        print_ours(&format!("latency_rate path={path} rate=450"), 1, 1, &open);
        return Ok(());
    }
    let script = std::env::temp_dir().join(format!("allocscope-delay-{}.lua", std::process::id()));
    std::fs::write(
        &script,
        format!("function delay()\n  return {DELAY_MS}\nend\n"),
    )
    .map_err(|e| format!("writing {}: {e}", script.display()))?;
    let result = latency_rounds(addr, path, &url, &script);
    let _ = std::fs::remove_file(&script);
    result
}

fn latency_rounds(
    addr: SocketAddr,
    path: &str,
    url: &str,
    script: &std::path::Path,
) -> Result<(), String> {
    let (mut wrk_open, mut our_open, mut wrk_closed, mut our_closed) =
        (vec![], vec![], vec![], vec![]);
    // Ours runs at the rate wrk's delay loop achieved in its latest run
    // (round 1 starts with wrk).
    let mut rate = 0.0;
    for round in 1..=LATENCY_ROUNDS {
        for wrk_turn in [round % 2 == 1, round % 2 == 0] {
            if wrk_turn {
                let w = wrk(url, 1, 1, Some(script), LIGHT_FOR)?;
                print_wrk(
                    &format!("latency_rate path={path} delay_ms={DELAY_MS} round={round}"),
                    &w,
                );
                rate = w.rps;
                wrk_open.push((w.rps, w.latency));
                let w = wrk(url, 1, 1, None, CLOSED_FOR)?;
                print_wrk(&format!("latency_closed path={path} round={round}"), &w);
                consistency("wrk", path, &w.latency, w.rps);
                wrk_closed.push((w.rps, w.latency));
            } else {
                let o = ours(addr, path, 1, Schedule::Rate(rate), LIGHT_FOR);
                print_ours(
                    &format!("latency_rate path={path} rate={rate:.0}"),
                    round,
                    1,
                    &o,
                );
                our_open.push((
                    o.throughput_rps,
                    o.latency.ok_or("no latency from our open loop")?,
                ));
                let o = ours(addr, path, 1, Schedule::AsFastAsPossible, CLOSED_FOR);
                print_ours(&format!("latency_closed path={path}"), round, 1, &o);
                let p = o.latency.ok_or("no latency from our closed loop")?;
                consistency("allocscope", path, &p, o.throughput_rps);
                our_closed.push((o.throughput_rps, p));
            }
        }
    }
    for (load, ours, theirs) in [
        ("rate", &our_open, &wrk_open),
        ("closed_c1", &our_closed, &wrk_closed),
    ] {
        let (o, w) = (medians(ours), medians(theirs));
        for (tool, (rps, p)) in [("allocscope", &o), ("wrk", &w)] {
            println!(
                "latency_median load={load} path={path} tool={tool} rounds={} rps={rps:.0} p50_ms={:.3} p90_ms={:.3} p99_ms={:.3}",
                ours.len().min(theirs.len()), p.p50_ms, p.p90_ms, p.p99_ms
            );
        }
        let goal = load == "rate";
        print_ratios(
            &format!(
                "latency_ratio ours_over_wrk load={load} path={path} rps={:.3}",
                o.0 / w.0
            ),
            &o.1,
            &w.1,
            goal,
        );
    }
    Ok(())
}

/// One connection, closed loop: the mean latency cannot exceed the time per
/// request (1/rps), and the percentiles bound the mean from below (40% of
/// requests take at least p50, 9% p90, 1% p99). Meaningless for the delay
/// loop, whose time per request includes the delay.
fn consistency(tool: &str, path: &str, p: &Percentiles, rps: f64) {
    let bound_ms = 0.4 * p.p50_ms + 0.09 * p.p90_ms + 0.01 * p.p99_ms;
    let cycle_ms = 1000.0 / rps;
    println!(
        "latency_consistency tool={tool} path={path} mean_lower_bound_ms={bound_ms:.4} time_per_request_ms={cycle_ms:.4} {}",
        if bound_ms <= cycle_ms { "ok" } else { "IMPOSSIBLE" }
    );
}

/// Median throughput and median of each percentile over rounds.
fn medians(runs: &[(f64, Percentiles)]) -> (f64, Percentiles) {
    let median = |f: &dyn Fn(&(f64, Percentiles)) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    };
    let p = Percentiles {
        p50_ms: median(&|r| r.1.p50_ms),
        p90_ms: median(&|r| r.1.p90_ms),
        p95_ms: f64::NAN,
        p99_ms: median(&|r| r.1.p99_ms),
        p999_ms: f64::NAN,
        max_ms: f64::NAN,
    };
    (median(&|r| r.0), p)
}

fn print_wrk(name: &str, w: &Wrk) {
    println!(
        "{name} tool=wrk connections=1 rps={:.0} p50_ms={:.3} p90_ms={:.3} p99_ms={:.3} mean_ms={:.3}",
        w.rps, w.latency.p50_ms, w.latency.p90_ms, w.latency.p99_ms, w.mean_ms
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

/// Ratios ours / wrk; `goal` marks the comparison the 20% goal is for.
fn print_ratios(name: &str, ours: &Percentiles, theirs: &Percentiles, goal: bool) {
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
    let verdict = match (goal, within) {
        (false, _) => "goal=none",
        (true, true) => "goal=within_20pct ok",
        (true, false) => "goal=within_20pct OUTSIDE_GOAL",
    };
    println!("{name} {} {verdict}", text.join(" "));
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
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
