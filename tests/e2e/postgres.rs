//! `compare --server` on a real multi-process server: Debian's PostgreSQL,
//! a fresh cluster in a scratch directory (Unix socket only, no TCP port),
//! pgbench as the load, under glibc and jemalloc. As root the server runs
//! as the `postgres` user through `runuser`, the privilege drop that once
//! left every postgres process without its heap probe (the library sat in
//! root's cache, the probe files in a 0700 root directory): its readings
//! must cover the run. Each configuration's working set is reported, and
//! the verdict carries the memory limit lines.

use crate::common::{
    config, configs, installed_allocators, require, require_allocator, require_program,
    require_root, runs, stderr, stdout, Scratch,
};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest installed PostgreSQL's program directory, if any.
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("postgres").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// The words that run `program` as the `postgres` user (PostgreSQL
/// refuses root).
fn as_postgres(program: &Path) -> Vec<String> {
    let program = program.display().to_string();
    ["runuser", "-u", "postgres", "--", &program]
        .map(String::from)
        .to_vec()
}

fn run_ok(words: &[String]) {
    let out = Command::new(&words[0])
        .args(&words[1..])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{words:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh cluster in `dir/data`, owned by postgres, with pgbench's tables, its socket in
/// `dir/sock`, stopped again.
fn make_cluster(bin: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let (data, sock) = (dir.join("data"), dir.join("sock"));
    // The scratch directory is root's 0700: let postgres through to its own.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    for own in [&data, &sock] {
        std::fs::create_dir(own).expect("a directory for postgres");
        std::fs::set_permissions(own, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        run_ok(&[
            "chown".into(),
            "postgres:".into(),
            own.display().to_string(),
        ]);
    }
    let user = |p: &str| as_postgres(&bin.join(p));
    let s = |p: &Path| p.display().to_string();
    let mut initdb = user("initdb");
    initdb.extend([
        "-D".into(),
        s(&data),
        "-A".into(),
        "trust".into(),
        "--no-sync".into(),
    ]);
    run_ok(&initdb);
    let options = format!("-c listen_addresses= -k {} -c fsync=off", s(&sock));
    let mut ctl = user("pg_ctl");
    ctl.extend([
        "-D".into(),
        s(&data),
        "-o".into(),
        options,
        "-w".into(),
        "-l".into(),
    ]);
    ctl.push(s(&data.join("setup.log")));
    run_ok(&[ctl.clone(), vec!["start".into()]].concat());
    let mut init = user("pgbench");
    init.extend([
        "-h".into(),
        s(&sock),
        "-i".into(),
        "-s".into(),
        "2".into(),
        "-q".into(),
    ]);
    init.push("postgres".into());
    run_ok(&init);
    run_ok(&[ctl, vec!["-m".into(), "fast".into(), "stop".into()]].concat());
    (data, sock)
}

fn bytes(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// The limit lines of the verdict: a recommendation's deploy lines, else
/// the kept configuration's, each naming the same MiB in every target.
fn assert_limit_lines(json: &Value, table: &str, markdown: &str) {
    let verdict = &json["verdict"];
    let (name, systemd, kubernetes) = if verdict["deploy"].is_null() {
        let kept = &verdict["kept_limit"];
        assert_eq!(kept["config"], "glibc", "{verdict}");
        let words = kept["words"].as_str().expect("kept limit words");
        assert!(
            words.starts_with("if you keep glibc: memory limit "),
            "{words}"
        );
        assert!(words.contains("peak working set"), "{words}");
        assert!(table.contains(&format!("{words}:")), "{table}");
        assert!(markdown.contains("#### Memory limit"), "{markdown}");
        ("glibc", &kept["systemd"], &kept["kubernetes"])
    } else {
        let name = verdict["config"].as_str().expect("recommended");
        assert!(markdown.contains("#### Deploy"), "{markdown}");
        (
            name,
            &verdict["deploy"]["systemd"],
            &verdict["deploy"]["kubernetes"],
        )
    };
    let mib = config(json, name)["memory_limit_needed_bytes"]
        .as_u64()
        .expect("the limit")
        >> 20;
    let systemd = systemd.as_str().unwrap_or_default();
    let kubernetes = kubernetes.as_str().unwrap_or_default();
    assert!(systemd.contains(&format!("MemoryMax={mib}M")), "{systemd}");
    assert!(
        kubernetes.contains(&format!("limits:\n    memory: {mib}Mi")),
        "{kubernetes}"
    );
    assert!(table.contains(&format!("MemoryMax={mib}M")), "{table}");
    assert!(
        table.contains(&format!("docker run --memory={mib}m")),
        "{table}"
    );
}

#[test]
fn postgresql_with_pgbench_reports_each_configurations_working_set_and_limit() {
    let Some(bin) = postgres_bin() else {
        require(
            false,
            "PostgreSQL (/usr/lib/postgresql/N/bin)",
            "apt-get install postgresql",
        );
        return;
    };
    if !require(
        bin.join("pgbench").is_file(),
        "pgbench",
        "apt-get install postgresql",
    ) || !require_allocator("jemalloc")
        || !require_root("PostgreSQL then runs as postgres through runuser: the privilege drop")
    {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let (data, sock) = make_cluster(&bin, scratch.dir.path());
    let s = |p: &Path| p.display().to_string();
    let load = as_postgres(&bin.join("pgbench")).join(" ");
    let load = format!("{load} -h {} -c 8 -T 3 postgres", s(&sock));
    let md = scratch.path("report.md");
    let options = [
        "-r",
        "1",
        "-a",
        "glibc",
        "-a",
        "jemalloc",
        "--server",
        "--load",
        &load,
        "--ready-log",
        "ready to accept connections",
        "--export-markdown",
        &s(&md),
    ];
    let mut server = as_postgres(&bin.join("postgres"));
    server.extend(["-D".into(), s(&data), "-k".into(), s(&sock)]);
    server.extend([
        "-c".into(),
        "listen_addresses=".into(),
        "-c".into(),
        "fsync=off".into(),
    ]);
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (output, json) = scratch.compare(&options, &server);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    for c in configs(&json) {
        let run = &runs(c)[0];
        let name = c["name"].as_str().unwrap_or_default();
        assert_eq!(run["status"], "ok", "{run}");
        assert_eq!(run["service"]["load_exit"], "exit 0", "{run}");
        // The working set, per run and per configuration, and the limit from it.
        let peak = bytes(&run["peak_working_set_bytes"]);
        let mean = bytes(&run["mean_working_set_bytes"]);
        assert!(
            mean > 8e6 && mean <= peak,
            "{name}: working set {mean} / {peak}"
        );
        assert_eq!(
            bytes(&c["summary"]["peak_working_set_bytes"]["median"]),
            peak
        );
        assert_eq!(c["memory_limit"]["basis"], "peak_working_set_bytes", "{c}");
        assert!(bytes(&c["memory_limit_needed_bytes"]) >= peak * 1.2, "{c}");
        // The probe reached every postgres process behind runuser: readings
        // on (nearly) every tick, a live heap of megabytes (it was 0.16 MiB,
        // the runuser processes' alone), and its CPU its own thread's, not
        // the backends' (an exit handler once published theirs).
        let message = run["message"].as_str().unwrap_or_default();
        assert!(!message.contains("could not reach"), "{message}");
        let coverage = run["breakdown"]["coverage"].as_f64().expect("a breakdown");
        eprintln!("{name}: working set peak {peak} mean {mean}, coverage {coverage}");
        assert!(coverage >= 0.9, "{name}: breakdown coverage {coverage}");
        assert!(bytes(&run["peak_live_heap_bytes"]) > 4e6, "{name}: {run}");
        let cpu_s = bytes(&run["user_s"]) + bytes(&run["sys_s"]);
        assert!(bytes(&run["probe_cpu_s"]) < 0.25 * cpu_s, "{name}: {run}");
    }
    assert!(table.contains("memory limit needed"), "{table}");
    assert!(table.contains("peak working set"), "{table}");
    let markdown = std::fs::read_to_string(&md).expect("markdown written");
    assert_limit_lines(&json, &table, &markdown);
}

/// The script a user wrote to measure PostgreSQL as a batch job: a
/// throw-away cluster made by `initdb` started through `setpriv` (the uid
/// switch before exec that once made every configuration die of SIGABRT
/// in 20 ms: capset and PR_SET_KEEPCAPS on one thread, then setresgid
/// failing on the probe's), the server started, pgbench's tables and a
/// short pgbench, the server stopped.
fn setpriv_script(bin: &Path, dir: &Path) -> String {
    let as_pg = "setpriv --reuid=postgres --regid=postgres --init-groups";
    let b = |p: &str| bin.join(p).display().to_string();
    let (data, sock) = (dir.join("data"), dir.join("sock"));
    format!(
        "set -e\nrm -rf {data} && mkdir -p {data} {sock} && chown postgres: {data} {sock}\n\
         {as_pg} {initdb} -D {data} -A trust --no-sync >/dev/null\n\
         {as_pg} {ctl} -D {data} -o '-c listen_addresses= -k {sock} -c fsync=off' -w -l {data}/log start >/dev/null\n\
         {as_pg} {pgbench} -h {sock} -i -s 1 -q postgres 2>/dev/null\n\
         {as_pg} {pgbench} -h {sock} -c 4 -t 300 postgres >/dev/null\n\
         {as_pg} {ctl} -D {data} -m fast -w stop >/dev/null\n",
        data = data.display(),
        sock = sock.display(),
        initdb = b("initdb"),
        ctl = b("pg_ctl"),
        pgbench = b("pgbench"),
    )
}

#[test]
fn postgresql_initialised_through_setpriv_runs_under_every_default_configuration() {
    let Some(bin) = postgres_bin() else {
        require(
            false,
            "PostgreSQL (/usr/lib/postgresql/N/bin)",
            "apt-get install postgresql",
        );
        return;
    };
    if !require_root("initdb runs as postgres through setpriv")
        || !require_program("setpriv", "util-linux")
    {
        return;
    }
    installed_allocators(); // under CI=true, every default configuration's allocator
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    std::fs::set_permissions(scratch.dir.path(), std::fs::Permissions::from_mode(0o711))
        .expect("chmod");
    let script = scratch.path("pg.sh");
    std::fs::write(&script, setpriv_script(&bin, scratch.dir.path())).expect("script");
    let (output, json) = scratch.compare(&["-r", "1"], &["bash", script.to_str().expect("utf-8")]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(configs(&json).len() >= 2, "{json}");
    for c in configs(&json) {
        let name = c["name"].as_str().unwrap_or_default();
        let run = &runs(c)[0];
        assert_eq!(run["status"], "ok", "{name}: {run}");
        // The backends' heap is read: megabytes, not the shell's kilobytes.
        let live = bytes(&run["peak_live_heap_bytes"]);
        eprintln!("{name}: peak live heap {live}, wall {}", run["wall_s"]);
        assert!(live > 2e6, "{name}: peak live heap {live}: {run}");
    }
}
