//! `allocscope soak --pid`: two real instances of a program holding 64 MiB,
//! one under glibc and one under jemalloc preloaded, soaked in place; and a
//! label that contradicts the allocator a process maps, refused.

use crate::common::*;
use crate::record::{db_arg, Guard};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `hold blocks 64 60000` (64 MiB in 8 KiB blocks for a minute), with
/// `preload` in LD_PRELOAD when given; returns once it holds them.
fn holder(preload: Option<&str>) -> Guard {
    let mut command = Command::new(program("hold"));
    command
        .args(["blocks", "64", "60000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(library) = preload {
        command.env("LD_PRELOAD", library);
    }
    let child = command.spawn().expect("hold starts");
    let pid = child.id();
    let holds = wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{pid}/statm"))
            .ok()
            .and_then(|t| t.split_whitespace().nth(1)?.parse::<u64>().ok())
            .is_some_and(|pages| pages * 4096 > 64 << 20)
    });
    assert!(holds, "hold {pid} never held 64 MiB");
    Guard(child)
}

#[test]
fn soak_pid_compares_a_glibc_and_a_jemalloc_instance_in_place_and_stores_both() {
    if !require_allocator("jemalloc") {
        return;
    }
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let glibc = holder(None);
    let jemalloc = holder(Some("libjemalloc.so.2"));
    let (a, b) = (glibc.0.id().to_string(), jemalloc.0.id().to_string());
    let db = db_arg(&scratch);
    let output = scratch.run(&[
        "soak",
        "--pid",
        &format!("glibc={a}"),
        "--pid",
        &format!("jemalloc={b}"),
        "--duration",
        "20s",
        "--interval",
        "200ms",
        "--db",
        &db,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for (label, pid) in [("glibc", &a), ("jemalloc", &b)] {
        let block: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with(&format!("{label} (pid {pid}, ")))
            .take(4)
            .collect();
        assert_eq!(block.len(), 4, "{label}'s block in:\n{text}");
        // 64 MiB held flat: a level of 64 to 80 MiB that does not grow.
        let level: f64 = block[1]
            .trim_start()
            .strip_prefix("level ")
            .and_then(|l| l.split(" MiB").next())
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("a level in MiB: {}", block[1]));
        assert!(
            (64.0..80.0).contains(&level),
            "{label}: {level} MiB\n{text}"
        );
        assert!(block[1].contains(", settled: flat"), "{text}");
        // Flat: judged by its level, not carried on to a day.
        assert!(block[2].contains("at 24.0 h ("), "{text}");
        assert!(
            block[2].contains("no growth beyond noise to project; judged by its level"),
            "{text}"
        );
        assert!(
            block[3].contains(&format!("pid {pid} at the end: anon ")),
            "{text}"
        );
    }
    // An idle holder's CPU time, a few of /proc's 10 ms ticks in 20 s, is
    // under the second of CPU a rate is read from: no figure, no ratio.
    assert!(!text.contains("CPU time"), "{text}");
    assert!(
        text.contains("The heap probe cannot be injected into a running process"),
        "{text}"
    );
    assert!(
        text.contains(
            "Inconclusive: the plateaus and growth rates do not separate from glibc's yet"
        ),
        "{text}"
    );

    // Each instance is a recording of its own, under its label, with its
    // samples (20 s at 200 ms is 100 ticks; a loaded machine takes fewer).
    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    let rows: Vec<(String, i64, String, i64)> = conn
        .prepare(
            "SELECT config, target_pid, status,
                    (SELECT count(*) FROM recording_samples s WHERE s.recording_id = r.id)
             FROM recordings r ORDER BY id",
        )
        .and_then(|mut q| {
            q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect()
        })
        .expect("recordings read");
    assert_eq!(rows.len(), 2, "{rows:?}");
    for ((config, pid, status, samples), (label, given)) in
        rows.iter().zip([("glibc", &a), ("jemalloc", &b)])
    {
        assert_eq!(
            (config.as_str(), pid.to_string(), status.as_str()),
            (label, given.clone(), "complete")
        );
        assert!(*samples >= 50, "{label}: {samples} samples");
    }
}

#[test]
fn a_label_that_contradicts_the_mapped_allocator_exits_2_with_one_line() {
    let scratch = Scratch::new();
    let glibc = holder(None);
    let pid = glibc.0.id();
    let db = db_arg(&scratch);
    let output = scratch.run(&["soak", "--pid", &format!("tcmalloc={pid}"), "--db", &db]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!(
            "error: --pid tcmalloc={pid}: process {pid} maps no allocator library but the C \
             library's, not tcmalloc; label it glibc={pid}\n"
        )
    );
    assert!(!scratch.db().exists(), "nothing stored for a refused label");
}

#[test]
fn until_settled_stops_a_soak_of_a_flat_instance_before_its_duration() {
    let scratch = Scratch::new();
    let glibc = holder(None);
    let pid = glibc.0.id();
    let db = db_arg(&scratch);
    let started = std::time::Instant::now();
    let output = scratch.run(&[
        "soak",
        "--pid",
        &format!("glibc={pid}"),
        "--duration",
        "50s",
        "--interval",
        "100ms",
        "--until",
        "settled",
        "--db",
        &db,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stderr(&output).contains("allocscope: soak settled after "),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).contains(", settled: flat"),
        "{}",
        stdout(&output)
    );
}
