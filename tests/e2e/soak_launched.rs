//! `allocscope soak -- COMMAND`: configurations started side by side, two
//! instances each, with the heap probe. A program whose glibc arenas keep
//! what it freed (its live heap flat) is told apart from one that leaks; a
//! server gets a port of its own per instance and its load; an instance
//! that crashes is recorded as such while the other goes on, and
//! `--restart` starts it again.

use crate::common::*;
use crate::record::db_arg;
use std::process::Output;

/// The recordings' (name, status, samples, samples with a live heap).
pub fn recordings(scratch: &Scratch) -> Vec<(String, String, i64, i64)> {
    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    conn.prepare(
        "SELECT name, status,
                (SELECT count(*) FROM recording_samples s WHERE s.recording_id = r.id),
                (SELECT count(live_heap_bytes) FROM recording_samples s WHERE s.recording_id = r.id)
         FROM recordings r ORDER BY id",
    )
    .and_then(|mut q| {
        q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect()
    })
    .expect("recordings read")
}

/// A soak's arguments before its command: glibc and glibc:arena_max=1,
/// `replicas` instances each, for `duration` (not until settled), sampled
/// every 200 ms into `db`.
pub fn glibc_soak_args<'a>(db: &'a str, replicas: &'a str, duration: &'a str) -> Vec<&'a str> {
    vec![
        "soak",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=1",
        "--replicas",
        replicas,
        "--duration",
        duration,
        "--until",
        "duration",
        "--interval",
        "200ms",
        "--db",
        db,
    ]
}

/// `soak` of `grow MODE` (4 MiB a second for 15 s) under glibc and
/// glibc:arena_max=1, two instances each, for 14 s.
fn soak_grow(scratch: &Scratch, mode: &str) -> String {
    let grow = program("grow");
    let db = db_arg(scratch);
    let mut args = glibc_soak_args(&db, "2", "14s");
    args.extend(["--", grow.to_str().expect("utf-8"), mode, "1000", "4"]);
    let output = scratch.run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("allocscope: soak complete after 14."),
        "{}",
        stderr(&output)
    );
    stdout(&output)
}

/// `report --soak 1` judges the stored soak as the soak did (its verdict's
/// sentence), and writes its JSON (four instances) and HTML (the projection
/// dashed).
fn reported_again(scratch: &Scratch, soaked: &str) {
    let (json, html) = (scratch.path("soak.json"), scratch.path("soak.html"));
    let db = db_arg(scratch);
    let paths = [json.to_str().expect("utf-8"), html.to_str().expect("utf-8")];
    let output = scratch.run(&[
        "report",
        "--db",
        &db,
        "--soak",
        "1",
        "--export-json",
        paths[0],
        "--html",
        paths[1],
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let verdict = soaked.lines().last().expect("a verdict");
    assert!(text.contains(verdict), "{verdict}\n{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).expect("JSON");
    assert_eq!(json["soak"]["instances"].as_array().map(Vec::len), Some(4));
    let html = std::fs::read_to_string(&html).expect("HTML written");
    assert!(html.contains("stroke-dasharray"), "no projection drawn");
}

#[test]
fn soak_tells_the_allocators_fragmentation_from_the_programs_leak() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let text = soak_grow(&scratch, "arenas");
    // Each step a new arena keeps 4 MiB it was given back; with one arena
    // the next step reuses it.
    assert!(
        text.contains("glibc still grows ")
            && text.contains(
                " while its live heap is flat: the allocator holds it (fragmentation), not a leak"
            ),
        "{text}"
    );
    assert!(text.starts_with("glibc (2 instances, "), "{text}");
    for name in [
        "glibc#1",
        "glibc#2",
        "glibc:arena_max=1#1",
        "glibc:arena_max=1#2",
    ] {
        assert!(
            text.contains(&format!("  {name} ran to the end: RSS ")),
            "{name}:\n{text}"
        );
    }
    let stored = recordings(&scratch);
    assert_eq!(stored.len(), 4, "{stored:?}");
    for (name, status, samples, live) in &stored {
        assert_eq!(status, "complete", "{name}");
        // 14 s at 200 ms is 70 ticks; a loaded machine takes fewer.
        assert!(
            *samples >= 35 && *live >= 35,
            "{name}: {samples} samples, {live} live"
        );
    }
    reported_again(&scratch, &text);

    let scratch = Scratch::new();
    let text = soak_grow(&scratch, "leak");
    assert!(
        text.contains(
            "All configurations grow with their live heap: a leak in the program, which no \
             allocator fixes (glibc "
        ),
        "{text}"
    );
}

/// The soak's report, once it has kept glibc and ruled glibc:arena_max=1
/// out on `cost` (`CPU time `, `the load's rtt `) over the 5% budget.
fn kept_glibc_ruling_out(output: Output, cost: &str) -> String {
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let verdict = text.lines().last().unwrap_or_default();
    assert!(
        verdict.starts_with("Keep glibc: ")
            && verdict.contains(&format!("glibc:arena_max=1 not chosen: {cost}"))
            && verdict.contains("of glibc's, over the 5% budget"),
        "{text}"
    );
    text
}

/// A server whose lower plateau (glibc:arena_max=1 holds 8 MiB of ballast,
/// glibc 16) answers each request 20 ms late, under a load that prints its
/// round trip's median every half second: the load's figure, read by
/// `--metric` as the load prints it, rules the candidate out, and the
/// readings are in the store and the JSON.
#[test]
fn a_lower_plateau_whose_load_is_slower_beyond_the_budget_is_not_chosen() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let server = "import os, socket, sys, time\n\
        slow = 'arena_max' in os.environ.get('GLIBC_TUNABLES', '')\n\
        ballast = b'x' * ((8 if slow else 16) << 20)\n\
        s = socket.socket()\n\
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
        s.bind(('127.0.0.1', int(sys.argv[1])))\n\
        s.listen(8)\n\
        while True:\n\
        \x20   c, _ = s.accept()\n\
        \x20   while c.recv(64):\n\
        \x20       time.sleep(0.02 if slow else 0)\n\
        \x20       c.sendall(b'pong')\n";
    let load = "python3 -c 'import socket, sys, time\n\
        c = socket.create_connection((\"127.0.0.1\", int(sys.argv[1])))\n\
        while True:\n\
        \x20   rtts = []\n\
        \x20   for i in range(5):\n\
        \x20       t = time.perf_counter(); c.sendall(b\"ping\"); c.recv(64)\n\
        \x20       rtts.append((time.perf_counter() - t) * 1000); time.sleep(0.1)\n\
        \x20   print(\"rtt_ms %.3f\" % sorted(rtts)[2], flush=True)' {port}";
    let mut args = glibc_soak_args(&db, "2", "16s");
    args.extend([
        "--server",
        "--load",
        load,
        "--metric",
        "rtt=rtt_ms ([0-9.]+)",
        "--",
        "python3",
        "-c",
        server,
        "{port}",
    ]);
    let text = kept_glibc_ruling_out(scratch.run(&args), "the load's rtt ");
    assert!(text.contains("  load rtt "), "{text}");
    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    let readings: i64 = conn
        .query_row(
            "SELECT count(*) FROM recording_readings WHERE name = 'rtt'",
            [],
            |r| r.get(0),
        )
        .expect("readings counted");
    // 4 instances printing every half second for most of 16 s.
    assert!(readings >= 40, "{readings} readings");
    let report = scratch.run(&["report", "--db", &db, "--soak", "1", "--export-json", "-"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).expect("JSON");
    let candidate = &json["soak"]["verdict"]["configurations"][1];
    assert_eq!(candidate["label"], "glibc:arena_max=1", "{candidate}");
    assert_eq!(candidate["load"][0]["name"], "rtt", "{candidate}");
    // The rows carry it too, for pandas: the candidate's ratio over 1.05.
    let row = &json["soak"]["configurations"][1];
    let ratio = row["load_rtt_ratio_ci_low"].as_f64().unwrap_or(0.0);
    assert!(ratio > 1.05, "{row}");
    assert!(
        json["soak"]["instances"][0]["load_rtt"].as_f64().is_some(),
        "{json}"
    );
    assert_eq!(candidate["load"][0]["over_budget"], true, "{candidate}");
    let reasons = candidate["reasons"].as_array().expect("reasons");
    assert!(
        reasons
            .iter()
            .any(|r| r["reason"] == "load_over_budget" && r["metric"] == "rtt"),
        "{candidate}"
    );
    assert_eq!(json["soak"]["verdict"]["outcome"]["kind"], "keep_baseline");
}

#[test]
fn a_server_soak_gives_each_instance_its_own_port_and_load() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    // 20000 values of 1000 B set in each instance, then the load idles.
    let load = "python3 -c 'import socket,sys,time\n\
        s = socket.create_connection((\"127.0.0.1\", int(sys.argv[1])))\n\
        for i in range(20000): s.sendall(b\"set k%d 0 0 1000 noreply\\r\\n\" % i + b\"x\" * 1000 + b\"\\r\\n\")\n\
        time.sleep(3600)' {port}";
    let output = scratch.run(&[
        "soak",
        "-a",
        "glibc",
        "--duration",
        "8s",
        "--interval",
        "200ms",
        "--until",
        "duration",
        "--server",
        "--load",
        load,
        "--db",
        &db,
        "--",
        "memcached",
        "-p",
        "{port}",
        "-l",
        "127.0.0.1",
        "-U",
        "0",
        "-u",
        "nobody",
        "-m",
        "64",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    // Each instance's live heap holds the ~19 MiB its own load set.
    for name in ["glibc#1", "glibc#2"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  {name} ran to the end: ")))
            .unwrap_or_else(|| panic!("{name}:\n{text}"));
        let live: f64 = line
            .split("live heap ")
            .nth(1)
            .and_then(|l| l.split(" MiB").next())
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("a live heap in MiB: {line}"));
        assert!(live > 19.0, "{line}");
    }
    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    let commands: Vec<String> = conn
        .prepare("SELECT command FROM recordings ORDER BY id")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
        .expect("commands read");
    assert_eq!(commands.len(), 2);
    assert!(!commands[0].contains("{port}"), "{commands:?}");
    assert_ne!(commands[0], commands[1], "two instances, two ports");
}

#[test]
fn an_instance_that_crashes_is_recorded_and_the_others_go_on_or_it_restarts() {
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let hold = program("hold");
    // The second instance kills itself with SIGSEGV after a second.
    let script = format!(
        "case {{instance}} in *#2) sleep 1; kill -SEGV $$;; esac; exec {} blocks 16 60000",
        hold.display()
    );
    let soak = |restart: bool| {
        let mut args = vec![
            "soak",
            "-a",
            "glibc",
            "--duration",
            "5s",
            "--until",
            "duration",
            "--interval",
            "200ms",
            "--db",
            &db,
        ];
        if restart {
            args.push("--restart");
        }
        args.extend(["--", "sh", "-c", &script]);
        let output = scratch.run(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let text = soak(false);
    assert!(
        text.contains("  glibc#2 crashed: killed by signal 11 (SIGSEGV) after "),
        "{text}"
    );
    assert!(text.contains("  glibc#1 ran to the end: RSS "), "{text}");
    let stored = recordings(&scratch);
    let statuses: Vec<&str> = stored.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(statuses, ["complete", "crashed"], "{stored:?}");

    let text = soak(true);
    assert!(
        text.contains("  glibc#2: killed by signal 11 (SIGSEGV) after 1.")
            && text.contains("; restarted"),
        "{text}"
    );
    assert!(text.contains("  glibc#2 ran to the end: RSS "), "{text}");
    // The page marks the restart on the memory plot, why on hover.
    let page = scratch.path("restarted.html");
    let page_arg = page.to_str().expect("utf-8");
    let report = scratch.run(&["report", "--db", &db, "--soak", "2", "--html", page_arg]);
    assert!(report.status.success(), "{}", stderr(&report));
    let html = std::fs::read_to_string(&page).expect("page written");
    assert!(
        html.contains("<title>glibc#2 restarted at 1.") && html.contains("dotted: a restart"),
        "no restart drawn"
    );
    // It crashes a second after each start: every restart stored, drawn once.
    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM recording_restarts WHERE recording_id IN \
             (SELECT id FROM recordings WHERE soak_id = 2)",
            [],
            |r| r.get(0),
        )
        .expect("restarts counted");
    assert!(stored >= 1);
    let drawn = html.matches(" restarted at ").count();
    assert_eq!(i64::try_from(drawn).ok(), Some(stored), "each restart once");
}

/// Under glibc:arena_max=1 the command holds half the memory and spins a
/// loop 0.5 s in every 0.6 s (under glibc 0.1 s): the lower plateau costs
/// several times the CPU, over the 5% budget, so glibc is kept, the
/// candidate named "not chosen" with its CPU figure, and each instance's
/// CPU time is in the JSON.
#[test]
fn a_lower_plateau_that_costs_cpu_beyond_the_budget_is_not_chosen() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let hold = program("hold");
    let script = format!(
        "case \"$GLIBC_TUNABLES\" in *arena_max*) spin=0.5 mib=8;; *) spin=0.1 mib=16;; esac\n\
         (while :; do timeout $spin sh -c 'while :; do :; done'; sleep 0.1; done) &\n\
         exec {} blocks $mib 60000",
        hold.display()
    );
    let mut args = glibc_soak_args(&db, "2", "16s");
    args.extend(["--", "sh", "-c", &script]);
    kept_glibc_ruling_out(scratch.run(&args), "CPU time ");
    let report = scratch.run(&["report", "--db", &db, "--soak", "1", "--export-json", "-"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).expect("JSON");
    let soak = &json["soak"];
    for instance in soak["instances"].as_array().expect("instances") {
        let cores = instance["cpu_cores"].as_f64().unwrap_or_default();
        assert!(cores > 0.05, "{instance}");
    }
    let candidate = &soak["verdict"]["configurations"][1];
    assert_eq!(candidate["label"], "glibc:arena_max=1", "{candidate}");
    assert_eq!(candidate["cpu"]["over_budget"], true, "{candidate}");
    assert!(
        candidate["cpu"]["ratio"]["ci_low"]
            .as_f64()
            .unwrap_or_default()
            > 1.05,
        "{candidate}"
    );
    let reasons = candidate["reasons"].as_array().expect("reasons");
    assert!(
        reasons.iter().any(|r| r["reason"] == "cpu_over_budget"),
        "{candidate}"
    );
    assert_eq!(soak["verdict"]["outcome"]["kind"], "keep_baseline");
}
