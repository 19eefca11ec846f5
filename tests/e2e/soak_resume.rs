//! Nothing lost over days: a soak whose allocscope is killed with SIGKILL
//! takes its instances with it, and `soak --resume ID` continues it with new
//! instances, every sample from before kept and the restart marked; SIGTERM
//! then stops every instance and keeps everything.

use crate::common::*;
use crate::record::db_arg;
use std::process::Child;
use std::time::Duration;

/// Each recording's id, instance pid and sample times, in order; none
/// before allocscope has made the store.
fn stored(scratch: &Scratch) -> Vec<(i64, i32, Vec<f64>)> {
    let read_only = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let read = || -> rusqlite::Result<Vec<(i64, i32, Vec<f64>)>> {
        let conn = rusqlite::Connection::open_with_flags(scratch.db(), read_only)?;
        let mut query = conn.prepare("SELECT id, target_pid FROM recordings ORDER BY id")?;
        let ids: Vec<(i64, i32)> = query
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut times =
            conn.prepare("SELECT t_s FROM recording_samples WHERE recording_id = ?1 ORDER BY t_s")?;
        (ids.into_iter())
            .map(|(id, pid)| {
                let t = times
                    .query_map([id], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                Ok((id, pid, t))
            })
            .collect()
    };
    read().unwrap_or_default()
}

/// Whether `pid` is gone (or a zombie, dead and not reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// Waits until every recording holds more than `samples` samples.
fn wait_for_samples(scratch: &Scratch, child: &mut Child, samples: usize) {
    let enough = wait_until(Duration::from_secs(60), || {
        let recordings = stored(scratch);
        recordings.len() == 2 && recordings.iter().all(|r| r.2.len() > samples)
    });
    if !enough {
        let _ = child.kill();
    }
    assert!(enough, "{:?}", stored(scratch));
}

#[test]
fn a_soak_killed_with_sigkill_resumes_with_every_sample_kept_and_the_restart_marked() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let grow = program("grow");
    let mut first = scratch
        .command(&[
            "soak",
            "-a",
            "glibc",
            "--replicas",
            "2",
            "--interval",
            "500ms",
            "--until",
            "duration",
            "--duration",
            "10m",
            "--db",
            &db,
            "--",
            grow.to_str().expect("utf-8"),
            "leak",
            "1000",
            "1",
        ])
        .spawn()
        .expect("allocscope starts");
    wait_for_samples(&scratch, &mut first, 15);
    first.kill().expect("SIGKILL");
    first.wait().expect("reaped");
    let before = stored(&scratch);
    for (_, pid, _) in &before {
        let died = wait_until(Duration::from_secs(5), || gone(*pid));
        assert!(died, "instance {pid} outlived its allocscope");
    }

    let mut resumed = scratch
        .command(&["soak", "--resume", "1", "--db", &db])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("allocscope resumes");
    let most = before.iter().map(|r| r.2.len()).max().unwrap_or(0);
    wait_for_samples(&scratch, &mut resumed, most + 15);
    let during = stored(&scratch);
    let term = std::process::Command::new("kill")
        .args(["-TERM", &resumed.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(term.success());
    let output = resumed.wait_with_output().expect("allocscope ends");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("allocscope: resuming soak 1: glibc x2 every 500 ms")
            && stderr(&output).contains("allocscope: soak interrupted after "),
        "{}",
        stderr(&output)
    );
    let text = stdout(&output);
    for name in ["glibc#1", "glibc#2"] {
        let marked = format!("  {name}: allocscope stopped after ");
        assert!(text.contains(&marked), "{text}");
    }

    let after = stored(&scratch);
    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    for ((id, pid, earlier), (_, new_pid, now)) in before.iter().zip(&during) {
        assert!(gone(*new_pid) && new_pid != pid, "{new_pid} after {pid}");
        let kept = &after[(*id - 1) as usize].2;
        assert_eq!(&kept[..earlier.len()], &earlier[..], "recording {id}");
        let last = *earlier.last().expect("samples before the kill");
        let restart: f64 = conn
            .query_row(
                "SELECT t_s FROM recording_restarts WHERE recording_id = ?1",
                [id],
                |r| r.get(0),
            )
            .expect("the restart is marked");
        // The new samples follow the restart, on the soak's clock.
        assert!(restart > last, "restart {restart} after {last}");
        assert!(now.len() > earlier.len() + 15 && kept[earlier.len()] >= restart);
        let status: String = conn
            .query_row("SELECT status FROM recordings WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .expect("status");
        assert_eq!(status, "interrupted");
    }
}
