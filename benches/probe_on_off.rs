//! What the heap probe's default costs: the same configurations with the
//! probe on (its default: stats mode under glibc, jemalloc and tcmalloc,
//! count mode under mimalloc) and off (`--heap=off`), run by `allocscope
//! compare` itself, one round each, on and off interleaved (on/off, then
//! off/on). Per configuration, the on/off ratio of mean RSS and of wall time
//! with its 95% interval, paired by round as compare's own ratios are
//! (`analyze::interval::paired_log_ratio`). Plain `name key=value` lines.
//!
//! Workloads: the `churn` scenario, tests/programs/threads.c (4 threads
//! handing blocks to each other) and a real multi-threaded program, Debian's
//! `zstd -T2 -15` compressing 16 MiB of generated text (skipped with a line
//! saying so when `zstd` is not installed; an error under `CI=true` or
//! with `PROBE_ONOFF_ONLY=zstd`). Environment: `PROBE_ONOFF_REPS`
//! (default 6 rounds per side), `PROBE_ONOFF_ONLY` (one workload's name).

#[path = "common/programs.rs"]
mod programs;
use programs::compile;

use allocscope_analyze::interval::paired_log_ratio;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const ALLOCATORS: [(&str, &str); 4] = [
    ("glibc", "libc.so.6"),
    ("jemalloc", "libjemalloc.so.2"),
    ("tcmalloc", "libtcmalloc_minimal.so.4"),
    ("mimalloc", "libmimalloc.so.2"),
];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// (round, value) per configuration, per side.
type Figures = Vec<(String, Vec<(u32, f64)>, Vec<(u32, f64)>)>;

fn run() -> Result<(), String> {
    let reps: u32 = std::env::var("PROBE_ONOFF_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let allocscope = env!("CARGO_BIN_EXE_allocscope").to_string();
    let threads = compile(work.path(), "threads")?;
    let listing = Command::new("ldconfig")
        .arg("-p")
        .output()
        .map_err(|e| format!("running ldconfig: {e}"))?;
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let allocators: Vec<&str> = ALLOCATORS
        .iter()
        .filter(|(_, soname)| listing.contains(soname))
        .map(|(name, _)| *name)
        .collect();
    println!("allocators {}", allocators.join(","));
    let mut workloads: Vec<(&str, Vec<String>)> = vec![
        (
            "churn",
            [
                &allocscope,
                "workload",
                "churn",
                "--ops",
                "600000",
                "--seconds",
                "0",
            ]
            .map(String::from)
            .to_vec(),
        ),
        (
            "threads",
            vec![threads.display().to_string(), "4".into(), "300000".into()],
        ),
    ];
    let only = std::env::var("PROBE_ONOFF_ONLY").ok();
    match zstd_command(work.path())? {
        Some(command) => workloads.push(("zstd", command)),
        // Asked for by name, or under CI, a missing program is an error.
        None if only.as_deref() == Some("zstd")
            || std::env::var("CI").is_ok_and(|v| v == "true") =>
        {
            return Err("zstd is not installed: apt-get install zstd".to_string());
        }
        None => println!("zstd not installed (apt-get install zstd): its workload skipped"),
    }
    workloads.retain(|(name, _)| only.as_deref().is_none_or(|o| o == *name));
    for (name, command) in &workloads {
        let mut rss: Figures = Vec::new();
        let mut wall: Figures = Vec::new();
        for round in 0..reps {
            let sides = if round % 2 == 0 {
                [true, false]
            } else {
                [false, true]
            };
            for on in sides {
                let json = compare(&allocscope, work.path(), &allocators, on, command)?;
                for config in json["configs"].as_array().ok_or("no configs")? {
                    let run = &config["runs"][0];
                    let label = config["name"].as_str().unwrap_or("?").to_string();
                    let mode = run["probe_mode"].as_str().unwrap_or("off").to_string();
                    for (figures, key) in [(&mut rss, "mean_rss_bytes"), (&mut wall, "wall_s")] {
                        let value = run[key].as_f64().ok_or(format!("{label}: no {key}"))?;
                        let at = match figures.iter().position(|f| f.0 == label) {
                            Some(i) => i,
                            None => {
                                figures.push((label.clone(), Vec::new(), Vec::new()));
                                figures.len() - 1
                            }
                        };
                        let side = if on {
                            &mut figures[at].1
                        } else {
                            &mut figures[at].2
                        };
                        side.push((round, value));
                    }
                    if on && round == 0 {
                        println!("{name} config={label} probe_mode={mode}");
                    }
                }
            }
        }
        for (what, figures) in [("mean_rss", &rss), ("wall", &wall)] {
            for (label, on, off) in figures {
                let Some(r) = paired_log_ratio(on, off) else {
                    continue;
                };
                let r = r.ratio();
                println!(
                    "{name} config={label} {what}_ratio={:.4} ci95=[{:.4}, {:.4}] holds_1={} rounds={}",
                    r.value,
                    r.ci_low,
                    r.ci_high,
                    r.ci_low <= 1.0 && 1.0 <= r.ci_high,
                    on.len()
                );
            }
        }
    }
    Ok(())
}

/// One round of every configuration, the probe on (default) or off.
fn compare(
    allocscope: &str,
    work: &Path,
    allocators: &[&str],
    on: bool,
    command: &[String],
) -> Result<Value, String> {
    let json = work.join("out.json");
    let mut cmd = Command::new(allocscope);
    cmd.args(["compare", "--quiet", "-r", "1", "--db"])
        .arg(work.join("bench.db"))
        .arg("--export-json")
        .arg(&json);
    for a in allocators {
        cmd.args(["-a", a]);
    }
    if !on {
        cmd.arg("--heap=off");
    }
    let output = cmd
        .arg("--")
        .args(command)
        .output()
        .map_err(|e| format!("running allocscope: {e}"))?;
    let text = std::fs::read_to_string(&json).map_err(|_| {
        format!(
            "no JSON export; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// `zstd -T2 -15` on 16 MiB of generated words (compressible as text is,
/// so its two worker threads allocate and free their match state), or
/// `None` when zstd is not on the PATH.
fn zstd_command(dir: &Path) -> Result<Option<Vec<String>>, String> {
    let found = Command::new("zstd").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        return Ok(None);
    }
    const WORDS: [&str; 8] = [
        "heap", "arena", "trim", "page", "free", "live", "chunk", "mmap",
    ];
    let mut text = String::with_capacity(16 << 20);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    while text.len() < 16 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(WORDS[(x % 8) as usize]);
        text.push_str(if x.is_multiple_of(13) { ".\n" } else { " " });
        if x.is_multiple_of(5) {
            text.push_str(&(x % 100_000).to_string());
        }
    }
    let input = dir.join("input.txt");
    std::fs::write(&input, text).map_err(|e| e.to_string())?;
    let output = dir.join("input.txt.zst");
    Ok(Some(
        ["zstd", "-q", "-f", "-T2", "-15"]
            .map(String::from)
            .into_iter()
            .chain([
                input.display().to_string(),
                "-o".into(),
                output.display().to_string(),
            ])
            .collect(),
    ))
}
