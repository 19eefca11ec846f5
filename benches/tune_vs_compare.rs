//! What `allocscope tune` costs and finds against `compare`'s five default
//! configurations, on the churn scenario, both with `--runs auto` and the
//! same `--max-runs`: runs, seconds, the recommended configuration and its
//! memory and wall-time ratios to glibc's default (95% intervals), and the
//! runs a full grid (every phase-one candidate, every round) would take.
//! Plain `name key=value` lines, then the table docs/tuning.md shows.
//!
//! Environment: `TUNE_BENCH_MAX_RUNS` (default 6), `TUNE_BENCH_OPS`
//! (churn operations per run, default 1000000), `TUNE_BENCH_FLAGS` (more
//! flags for both, e.g. `--max-slowdown 100`), `TUNE_BENCH_DIR` (keep the
//! stores, exports and each command's output there; default a temporary
//! directory).

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

/// One command's result.
struct Outcome {
    runs: u64,
    seconds: f64,
    recommended: String,
    memory: String,
    wall: String,
}

fn run() -> Result<(), String> {
    let max_runs = env_or("TUNE_BENCH_MAX_RUNS", "6");
    let ops = env_or("TUNE_BENCH_OPS", "1000000");
    let flags = env_or("TUNE_BENCH_FLAGS", "");
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let work = match std::env::var_os("TUNE_BENCH_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => temporary.path().to_path_buf(),
    };
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    println!(
        "flags max_runs={max_runs} ops={ops} extra='{flags}' dir={}",
        work.display()
    );
    let allocscope = env!("CARGO_BIN_EXE_allocscope");
    let churn = [
        allocscope,
        "workload",
        "churn",
        "--ops",
        &ops,
        "--seconds",
        "0",
    ];
    let mut rows = Vec::new();
    for command in ["compare", "tune"] {
        let json = work.join(format!("{command}.json"));
        let db = work.join(format!("{command}.db"));
        let mut args: Vec<&str> = vec![command, "--quiet", "--max-runs", &max_runs];
        args.extend(flags.split_whitespace());
        args.extend(["--db", path(&db)?, "--export-json", path(&json)?, "--"]);
        args.extend(churn);
        let began = Instant::now();
        let status = Command::new(allocscope)
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
        let outcome = outcome(&doc, seconds);
        println!(
            "{command} runs={} seconds={:.1} recommended={} mean_rss={} wall={}",
            outcome.runs, outcome.seconds, outcome.recommended, outcome.memory, outcome.wall
        );
        if command == "tune" {
            let candidates = doc["tune"]["phases"][0]["rows"]
                .as_array()
                .map_or(0, Vec::len)
                + 1;
            let grid = candidates as u64 * max_runs.parse::<u64>().unwrap_or(0);
            println!("grid candidates={candidates} runs={grid}");
        }
        rows.push((command, outcome));
    }
    println!("\n| | runs | time | recommended | mean RSS | wall time |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (command, o) in &rows {
        println!(
            "| {command} | {} | {:.0} s | {} | {} | {} |",
            o.runs, o.seconds, o.recommended, o.memory, o.wall
        );
    }
    Ok(())
}

fn path(p: &std::path::Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// Runs, the recommendation and its ratios from a JSON export (a race's
/// runs over both phases).
fn outcome(doc: &Value, seconds: f64) -> Outcome {
    let configs = doc["configs"].as_array().cloned().unwrap_or_default();
    let runs = doc["tune"]["runs"].as_u64().unwrap_or_else(|| {
        configs
            .iter()
            .map(|c| c["runs"].as_array().map_or(0, Vec::len) as u64)
            .sum()
    });
    let recommended = doc["verdict"]["config"].as_str().unwrap_or("none");
    let config = configs.iter().find(|c| c["name"] == recommended);
    let ratio = |id: &str| {
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
    };
    Outcome {
        runs,
        seconds,
        recommended: format!("{} ({})", recommended, doc["verdict"]["outcome"]),
        memory: ratio("mean_rss_bytes"),
        wall: ratio("wall_s"),
    }
}
