//! Start-up cost: the wall time of `allocscope allocators` (discovering the
//! built-in allocators and their versions) and of `allocscope compare -r 1
//! -a glibc -- true` (discovery, option checks, store, one run of a program
//! that exits at once, report), as the median of N runs of the real binary,
//! printed as plain `name key=value` lines. `N=...` sets the count
//! (default 21). The goal is under 50 ms for each.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(21);
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("startup.db");
    let db = db
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("temp path is not UTF-8"))?;
    let cases: [(&str, Vec<&str>); 2] = [
        ("allocators", vec!["allocators"]),
        (
            "compare_glibc_true",
            vec![
                "compare", "--db", db, "-r", "1", "-a", "glibc", "--", "true",
            ],
        ),
    ];
    for (name, args) in cases {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            times.push(time_once(&args)?);
        }
        times.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "startup {name} runs={n} median_ms={:.1} min_ms={:.1} max_ms={:.1}",
            ms(times[n / 2]),
            ms(times[0]),
            ms(times[n - 1]),
        );
    }
    Ok(())
}

/// One run of the binary, which must succeed.
fn time_once(args: &[&str]) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_allocscope"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let took = start.elapsed();
    anyhow::ensure!(
        status.success(),
        "allocscope {} failed: {status}",
        args.join(" ")
    );
    Ok(took)
}
