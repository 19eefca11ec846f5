//! Markers at scale: what a marker line costs in `allocscope compare`, how
//! long `allocscope report` takes on the experiment, and that every marker
//! was kept, with the real binary and a real program
//! (`tests/programs/many_marks.c`, compiled with `cc`, printing N lines
//! `allocscope:mark event-I` as fast as C stdio writes them to a pipe).
//! Prints plain `markers_at_scale key=value` lines.
//!
//! The per-marker cost is the wall (and CPU) time of `compare -r 1 -a glibc
//! -- many_marks N` less that of `many_marks 0`, over N, each the median of
//! `REPEAT` runs. `report` renders the table (markers thinned) to
//! /dev/null; `exports` writes the JSON and the CSVs (every marker), whose
//! marker counts are checked against the store's and N.
//!
//! `N=...` sets the marker count (default 1,000,000), `REPEAT=...` the runs
//! per figure (default 3). Goals (docs/usage.md, "Markers"): under 10 us a
//! marker in `compare`, `report` under 2 s, nothing lost.

use allocscope_core::sample::machine_cpu::rusage_cpu_seconds;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn run() -> anyhow::Result<()> {
    let n = env_count("N", 1_000_000);
    let repeat = env_count("REPEAT", 3).max(1);
    let dir = tempfile::tempdir()?;
    let program = compile(dir.path())?;

    let mut empty = Vec::new();
    let mut full = Vec::new();
    for i in 0..repeat {
        empty.push(compare(
            &dir.path().join(format!("empty{i}.db")),
            &program,
            0,
        )?);
        full.push(compare(
            &dir.path().join(format!("full{i}.db")),
            &program,
            n,
        )?);
    }
    let (empty, full) = (median(empty), median(full));
    let per_marker_us = |full: f64, empty: f64| (full - empty) / n.max(1) as f64 * 1e6;
    println!(
        "markers_at_scale compare markers={n} runs={repeat} wall_s={:.2} cpu_s={:.2} \
         empty_wall_s={:.2} empty_cpu_s={:.2} us_per_marker_wall={:.2} us_per_marker_cpu={:.2} \
         goal_us=10",
        full.wall_s,
        full.cpu_s,
        empty.wall_s,
        empty.cpu_s,
        per_marker_us(full.wall_s, empty.wall_s),
        per_marker_us(full.cpu_s, empty.cpu_s),
    );

    let db = dir.path().join("full0.db");
    let mut reports = Vec::new();
    for _ in 0..repeat {
        reports.push(timed(&["report", "--db", path_str(&db)?], None)?);
    }
    let report = median(reports);
    println!(
        "markers_at_scale report wall_s={:.2} cpu_s={:.2} goal_s=2",
        report.wall_s, report.cpu_s
    );

    let json = dir.path().join("out.json");
    let csv = dir.path().join("out.csv");
    let exports = timed(
        &[
            "report",
            "--db",
            path_str(&db)?,
            "--export-json",
            path_str(&json)?,
            "--export-csv",
            path_str(&csv)?,
        ],
        None,
    )?;
    let stored = stored_markers(&db)?;
    let in_json = json_markers(&json)?;
    let in_csv = std::fs::read_to_string(csv.with_extension("markers.csv"))?
        .lines()
        .count()
        .saturating_sub(1);
    println!(
        "markers_at_scale exports wall_s={:.2} printed={n} stored={stored} json={in_json} csv={in_csv}",
        exports.wall_s
    );
    anyhow::ensure!(
        [stored, in_json, in_csv].iter().all(|&c| c == n),
        "markers lost: printed {n}, stored {stored}, JSON {in_json}, CSV {in_csv}"
    );
    Ok(())
}

/// Compiles the marker program into `dir`.
fn compile(dir: &Path) -> anyhow::Result<PathBuf> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/many_marks.c");
    let out = dir.join("many_marks");
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(&source)
        .status()?;
    anyhow::ensure!(status.success(), "cc {} failed", source.display());
    Ok(out)
}

fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .ok_or_else(|| anyhow::anyhow!("'{}' is not UTF-8", path.display()))
}

/// One `compare` of the program printing `n` markers into `db`.
fn compare(db: &Path, program: &Path, n: usize) -> anyhow::Result<Cost> {
    let count = n.to_string();
    timed(
        &[
            "compare",
            "--db",
            path_str(db)?,
            "-r",
            "1",
            "-a",
            "glibc",
            "--",
            path_str(program)?,
            &count,
        ],
        db.parent(),
    )
}

#[derive(Clone, Copy)]
struct Cost {
    wall_s: f64,
    cpu_s: f64,
}

/// The figure of each kind's median over the runs.
fn median(costs: Vec<Cost>) -> Cost {
    let pick = |f: fn(&Cost) -> f64| {
        let mut v: Vec<f64> = costs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Cost {
        wall_s: pick(|c| c.wall_s),
        cpu_s: pick(|c| c.cpu_s),
    }
}

/// Wall time and CPU time (user + system, allocscope and what it waited
/// for) of one run of the binary, which must succeed.
fn timed(args: &[&str], dir: Option<&Path>) -> anyhow::Result<Cost> {
    let before = rusage_cpu_seconds(libc::RUSAGE_CHILDREN);
    let start = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_allocscope"));
    command
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command.output()?;
    let wall_s = start.elapsed().as_secs_f64();
    anyhow::ensure!(
        output.status.success(),
        "allocscope {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(Cost {
        wall_s,
        cpu_s: rusage_cpu_seconds(libc::RUSAGE_CHILDREN) - before,
    })
}

fn stored_markers(db: &Path) -> anyhow::Result<usize> {
    let conn = rusqlite::Connection::open(db)?;
    let count: i64 = conn.query_row("SELECT count(*) FROM markers", [], |r| r.get(0))?;
    Ok(usize::try_from(count)?)
}

/// The markers of every run in the JSON export.
fn json_markers(path: &Path) -> anyhow::Result<usize> {
    #[derive(Deserialize)]
    struct Export {
        configs: Vec<ConfigOut>,
    }
    #[derive(Deserialize)]
    struct ConfigOut {
        runs: Vec<RunOut>,
    }
    #[derive(Deserialize)]
    struct RunOut {
        markers: Vec<serde::de::IgnoredAny>,
    }
    let export: Export =
        serde_json::from_reader(std::io::BufReader::new(std::fs::File::open(path)?))?;
    Ok(export
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .map(|r| r.markers.len())
        .sum())
}
