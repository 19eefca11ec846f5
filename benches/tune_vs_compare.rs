//! What `allocscope tune` costs and finds against `compare`'s five default
//! configurations, both with `--runs auto` and the same `--max-runs`, on the
//! churn scenario or on a real program (`TUNE_BENCH_PROGRAM=redis`: Debian's
//! redis-server filled by redis-benchmark, then FLUSHALL): runs (and
//! rounds), seconds, compare's best default by the verdict's memory figure,
//! the recommended configuration and its memory and performance ratios to
//! glibc's default (95% intervals), and the runs a full grid (every
//! phase-one candidate, every round) would take. Plain `name key=value`
//! lines, then the table docs/tuning.md shows.
//!
//! Environment: `TUNE_BENCH_PROGRAM` (`churn`, the default, or `redis`;
//! redis needs `apt-get install redis-server redis-tools`),
//! `TUNE_BENCH_MAX_RUNS` (default 6), `TUNE_BENCH_OPS` (churn operations
//! per run, default 1000000), `TUNE_BENCH_KEYS` (redis keys of 1 KiB set
//! per run, default 200000), `TUNE_BENCH_FLAGS` (more flags for both, e.g.
//! `--max-slowdown 100`), `TUNE_BENCH_DIR` (keep the stores, exports and
//! each command's output there; default a temporary directory).

use serde_json::Value;
use std::process::Command;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The program both commands measure: the flags before `--`, the command
/// after it, and the ids of the figures its verdict judges by default.
struct Program {
    options: Vec<String>,
    command: Vec<String>,
    memory: &'static str,
    perf: &'static str,
}

/// The churn scenario of allocscope's own workload.
fn churn() -> Program {
    let ops = env_or("TUNE_BENCH_OPS", "1000000");
    let allocscope = env!("CARGO_BIN_EXE_allocscope");
    Program {
        options: Vec::new(),
        command: [
            allocscope,
            "workload",
            "churn",
            "--ops",
            &ops,
            "--seconds",
            "0",
        ]
        .map(String::from)
        .to_vec(),
        memory: "mean_rss_bytes",
        perf: "wall_s",
    }
}

/// Whether `program` is an executable on PATH.
fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Debian's redis-server (which links jemalloc: glibc's configurations run
/// allocscope's glibc shim) filled with `TUNE_BENCH_KEYS` values of 1 KiB by
/// redis-benchmark, then FLUSHALL; judged by its RSS at the end of that
/// load against the load's duration, a service's defaults.
fn redis() -> Result<Program, String> {
    for (program, package) in [
        ("redis-server", "redis-server"),
        ("redis-benchmark", "redis-tools"),
        ("redis-cli", "redis-tools"),
    ] {
        if !on_path(program) {
            return Err(format!(
                "TUNE_BENCH_PROGRAM=redis needs `{program}`: apt-get install {package}"
            ));
        }
    }
    let keys = env_or("TUNE_BENCH_KEYS", "200000");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("a free port: {e}"))?
        .port()
        .to_string();
    let load = format!(
        "redis-benchmark -p {port} -n {keys} -r {keys} -c 8 -P 16 -q -t set -d 1024 && \
         redis-cli -p {port} flushall"
    );
    let options = [
        "--server",
        "--load",
        &load,
        "--ready-log",
        "Ready to accept connections",
        "--settle",
        "1s",
    ];
    let command = [
        "redis-server",
        "--port",
        &port,
        "--save",
        "",
        "--appendonly",
        "no",
    ];
    Ok(Program {
        options: options.map(String::from).to_vec(),
        command: command.map(String::from).to_vec(),
        memory: "rss_end_load_bytes",
        perf: "load_s",
    })
}

/// One command's result.
struct Outcome {
    runs: u64,
    rounds: u64,
    seconds: f64,
    recommended: String,
    memory: String,
    perf: String,
    best: String,
}

fn run() -> Result<(), String> {
    let which = env_or("TUNE_BENCH_PROGRAM", "churn");
    let program = match which.as_str() {
        "churn" => churn(),
        "redis" => redis()?,
        other => {
            return Err(format!(
                "TUNE_BENCH_PROGRAM={other} is not known; use churn or redis"
            ))
        }
    };
    let max_runs = env_or("TUNE_BENCH_MAX_RUNS", "6");
    let flags = env_or("TUNE_BENCH_FLAGS", "");
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let work = match std::env::var_os("TUNE_BENCH_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => temporary.path().to_path_buf(),
    };
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    println!(
        "flags program={which} max_runs={max_runs} extra='{flags}' dir={} command='{}'",
        work.display(),
        program.command.join(" ")
    );
    let mut rows = Vec::new();
    for command in ["compare", "tune"] {
        let outcome = measure(command, &program, &work, &max_runs, &flags)?;
        println!(
            "{command} runs={} rounds={} seconds={:.1} recommended={} memory={} perf={} best={}",
            outcome.runs,
            outcome.rounds,
            outcome.seconds,
            outcome.recommended,
            outcome.memory,
            outcome.perf,
            outcome.best
        );
        rows.push((command, outcome));
    }
    if let [(_, compare), (_, tune)] = &rows[..] {
        println!(
            "tune/compare runs={:.2} (under 2: {})",
            tune.runs as f64 / compare.runs.max(1) as f64,
            tune.runs < 2 * compare.runs
        );
    }
    table(&rows, &program);
    Ok(())
}

/// The table docs/tuning.md shows.
fn table(rows: &[(&str, Outcome)], program: &Program) {
    println!(
        "\n| | runs (rounds) | time | recommended | {} | {} | least {} with an interval |",
        program.memory, program.perf, program.memory
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (command, o) in rows {
        println!(
            "| {command} | {} ({}) | {:.0} s | {} | {} | {} | {} |",
            o.runs, o.rounds, o.seconds, o.recommended, o.memory, o.perf, o.best
        );
    }
}

/// Runs `command` (compare or tune) on `program` and reads its export.
fn measure(
    command: &str,
    program: &Program,
    work: &std::path::Path,
    max_runs: &str,
    flags: &str,
) -> Result<Outcome, String> {
    let json = work.join(format!("{command}.json"));
    let db = work.join(format!("{command}.db"));
    let _ = std::fs::remove_file(&db);
    let mut args: Vec<&str> = vec![command, "--quiet", "--max-runs", max_runs];
    if command == "compare" {
        args.extend(["--runs", "auto"]);
    }
    args.extend(flags.split_whitespace());
    args.extend(program.options.iter().map(String::as_str));
    args.extend(["--db", path(&db)?, "--export-json", path(&json)?, "--"]);
    args.extend(program.command.iter().map(String::as_str));
    let began = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_allocscope"))
        .args(&args)
        .stdout(
            std::fs::File::create(work.join(format!("{command}.out")))
                .map_err(|e| e.to_string())?,
        )
        .status()
        .map_err(|e| format!("running {command}: {e}"))?;
    let seconds = began.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{command} exited with {status}"));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| e.to_string())?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    if command == "tune" {
        let candidates = doc["tune"]["phases"][0]["rows"]
            .as_array()
            .map_or(0, Vec::len)
            + 1;
        let grid = candidates as u64 * max_runs.parse::<u64>().unwrap_or(0);
        println!("grid candidates={candidates} runs={grid}");
    }
    Ok(outcome(&doc, seconds, program))
}

fn path(p: &std::path::Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// `0.54x [0.51, 0.59]`, or `-`.
fn ratio_words(config: Option<&Value>, id: &str) -> String {
    config
        .map(|c| &c["summary"]["ratio"][id])
        .filter(|r| r.is_object())
        .map_or("-".to_string(), |r| {
            format!(
                "{:.2}x [{:.2}, {:.2}]",
                r["value"].as_f64().unwrap_or(f64::NAN),
                r["ci_low"].as_f64().unwrap_or(f64::NAN),
                r["ci_high"].as_f64().unwrap_or(f64::NAN)
            )
        })
}

/// Runs, rounds, the recommendation and its ratios from a JSON export (a
/// race's runs over both phases), and the configuration of the export's
/// last phase with the least memory by point estimate among those with an
/// interval (compare's best default; a race's dropped one-run candidates
/// have none).
fn outcome(doc: &Value, seconds: f64, program: &Program) -> Outcome {
    let configs = doc["configs"].as_array().cloned().unwrap_or_default();
    let runs_of = |c: &Value| c["runs"].as_array().map_or(0, Vec::len) as u64;
    let runs = doc["tune"]["runs"]
        .as_u64()
        .unwrap_or_else(|| configs.iter().map(runs_of).sum());
    let rounds = configs.first().map_or(0, runs_of);
    let recommended = doc["verdict"]["config"].as_str().unwrap_or("none");
    let config = configs.iter().find(|c| c["name"] == recommended);
    let memory_of = |c: &&Value| {
        c["summary"]["ratio"][program.memory]["value"]
            .as_f64()
            .unwrap_or(f64::INFINITY)
    };
    let with_interval = |c: &&Value| {
        c["summary"]["ratio"][program.memory]["ci_low"]
            .as_f64()
            .is_some_and(f64::is_finite)
    };
    let best = configs
        .iter()
        .skip(1)
        .filter(with_interval)
        .min_by(|a, b| memory_of(a).total_cmp(&memory_of(b)));
    Outcome {
        runs,
        rounds,
        seconds,
        recommended: format!("{} ({})", recommended, doc["verdict"]["outcome"]),
        memory: ratio_words(config, program.memory),
        perf: ratio_words(config, program.perf),
        best: best.map_or("-".to_string(), |b| {
            format!(
                "{} {}",
                b["name"].as_str().unwrap_or("?"),
                ratio_words(Some(b), program.memory)
            )
        }),
    }
}
