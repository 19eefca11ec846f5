//! What the heap probe itself keeps resident, as the figures see it: a
//! program holding 2 MiB (tests/programs/hold.c, 2 MiB in 8 KiB blocks
//! held 600 ms) run 5 times under GNU time (`%M`, the maximum resident set)
//! and 5 runs of `allocscope compare -a glibc` with the default heap probe
//! and with `--heap=off`; the median peak RSS of each (allocscope's
//! `max_hwm_bytes`, the kernel's high-water mark, and `peak_rss_bytes`, the
//! sampled peak) and the differences from GNU time's. The goal: within
//! 256 KiB of GNU time with the probe on (probe/PROTOCOL.md, "The probe's
//! own footprint"). GNU time's figure is wait4's, which the kernel takes from
//! its per-CPU RSS counters without their unflushed parts, while
//! /proc/PID/status sums them: so the program under GNU time also has its
//! VmHWM polled, and allocscope's figures are set against that too. Plain
//! `name value` lines. Needs GNU time (`apt-get install time`);
//! `PROBE_FOOTPRINT_REPS` sets the runs (default 5).

#[path = "common/programs.rs"]
mod programs;
use programs::compile;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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
    let mut polled = Vec::new();
    for _ in 0..reps {
        let (max_rss, hwm) = gnu_time_kib(&program)?;
        gnu.push(max_rss);
        polled.push(hwm);
    }
    let under: Vec<f64> = polled.iter().zip(&gnu).map(|(p, g)| p - g).collect();
    let (gnu, polled) = (median(gnu), median(polled));
    println!("program hold blocks 2 600");
    println!("gnu_time_max_rss_kib {gnu:.0}");
    println!("gnu_time_program_vmhwm_kib {polled:.0}");
    println!("gnu_time_below_vmhwm_kib {:.0}", median(under));
    for (label, heap) in [("probe_on", None), ("probe_off", Some("--heap=off"))] {
        let runs = compare_runs(work.path(), label, heap, reps, &program)?;
        let hwm = median(runs.iter().map(|r| r.0).collect());
        let sampled = median(runs.iter().map(|r| r.1).collect());
        println!("{label}_max_hwm_kib {hwm:.0}");
        println!("{label}_peak_rss_kib {sampled:.0}");
        println!("{label}_hwm_minus_gnu_time_kib {:.0}", hwm - gnu);
        println!("{label}_peak_rss_minus_gnu_time_kib {:.0}", sampled - gnu);
        println!("{label}_peak_rss_minus_vmhwm_kib {:.0}", sampled - polled);
    }
    Ok(())
}

/// GNU time's maximum resident set for one run, and the highest VmHWM of
/// the program it ran, read from /proc every 20 ms while it lived.
fn gnu_time_kib(program: &[String]) -> Result<(f64, f64), String> {
    let mut child = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .args(program)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running GNU time: {e}"))?;
    let time_pid = child.id();
    let children = format!("/proc/{time_pid}/task/{time_pid}/children");
    let mut workload = None;
    let mut hwm_kib = 0u64;
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        workload = workload.or_else(|| {
            let text = std::fs::read_to_string(&children).ok()?;
            text.split_whitespace().next()?.parse::<u32>().ok()
        });
        if let Some(hwm) = workload.and_then(vmhwm_kib) {
            hwm_kib = hwm_kib.max(hwm);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("running GNU time: {e}"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    let max_rss = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("GNU time printed no maximum resident set: {text}"))?;
    if hwm_kib == 0 {
        return Err("the program under GNU time was never read".to_string());
    }
    Ok((max_rss, hwm_kib as f64))
}

fn vmhwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
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
