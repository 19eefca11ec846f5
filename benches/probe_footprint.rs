//! What the heap probe itself keeps resident, as the figures see it: a
//! program holding 2 MiB (tests/programs/hold.c, 2 MiB in 8 KiB blocks
//! held 600 ms) run 5 times under GNU time (`%M`, the maximum resident set)
//! and 5 runs of `allocscope compare -a glibc` with the default heap probe
//! and with `--heap=off`; the median peak RSS of each (allocscope's
//! `max_hwm_bytes`, the kernel's high-water mark, and `peak_rss_bytes`, the
//! sampled peak) and the differences from GNU time's. The goal: within
//! 256 KiB of GNU time with the probe on (probe/PROTOCOL.md, "The probe's
//! own footprint"). Plain `name value` lines. Needs GNU time (`apt-get
//! install time`); `PROBE_FOOTPRINT_REPS` sets the runs (default 5).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let reps: usize = std::env::var("PROBE_FOOTPRINT_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    if !Path::new("/usr/bin/time").is_file() {
        return Err("GNU time is missing: apt-get install time".to_string());
    }
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hold = compile(work.path(), "hold")?;
    let program = [
        hold.display().to_string(),
        "blocks".into(),
        "2".into(),
        "600".into(),
    ];
    let mut gnu = Vec::new();
    for _ in 0..reps {
        gnu.push(gnu_time_kib(&program)?);
    }
    let gnu = median(gnu);
    println!("program hold blocks 2 600");
    println!("gnu_time_max_rss_kib {gnu:.0}");
    for (label, heap) in [("probe_on", None), ("probe_off", Some("--heap=off"))] {
        let runs = compare_runs(work.path(), label, heap, reps, &program)?;
        let hwm = median(runs.iter().map(|r| r.0).collect());
        let sampled = median(runs.iter().map(|r| r.1).collect());
        println!("{label}_max_hwm_kib {hwm:.0}");
        println!("{label}_peak_rss_kib {sampled:.0}");
        println!("{label}_hwm_minus_gnu_time_kib {:.0}", hwm - gnu);
        println!("{label}_peak_rss_minus_gnu_time_kib {:.0}", sampled - gnu);
    }
    Ok(())
}

fn gnu_time_kib(program: &[String]) -> Result<f64, String> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .args(program)
        .output()
        .map_err(|e| format!("running GNU time: {e}"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("GNU time printed no maximum resident set: {text}"))
}

/// Each run's (max_hwm, peak_rss) in KiB.
fn compare_runs(
    dir: &Path,
    label: &str,
    heap: Option<&str>,
    reps: usize,
    program: &[String],
) -> Result<Vec<(f64, f64)>, String> {
    let json = dir.join(format!("{label}.json"));
    let db = dir.join(format!("{label}.db"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_allocscope"));
    cmd.args(["compare", "-a", "glibc", "-r", &reps.to_string(), "--db"])
        .arg(&db)
        .arg("--export-json")
        .arg(&json)
        .args(heap)
        .arg("--")
        .args(program);
    let out = cmd
        .output()
        .map_err(|e| format!("running allocscope: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "compare failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let kib = |v: &Value| v.as_f64().unwrap_or(f64::NAN) / 1024.0;
    Ok(value["configs"][0]["runs"]
        .as_array()
        .ok_or("no runs in the export")?
        .iter()
        .map(|r| (kib(&r["max_hwm_bytes"]), kib(&r["peak_rss_bytes"])))
        .collect())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn compile(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let out = dir.join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.c"));
    let status = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .map_err(|e| format!("running cc: {e}"))?;
    status
        .success()
        .then_some(out)
        .ok_or_else(|| format!("compiling {}", source.display()))
}
