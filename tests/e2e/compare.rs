//! Measuring real workloads under every installed allocator.

use crate::common::*;
use std::process::Command;

fn as_u64(value: &serde_json::Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("expected a number, got {value}"))
}

#[test]
fn lists_glibc_and_every_installed_allocator_with_its_library() {
    let scratch = Scratch::new();
    let output = scratch.run(&["allocators"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for name in installed_allocators() {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    assert!(text.contains("libc.so.6"), "{text}");
    // Each found library carries the version dpkg gives its owning package
    // (glibc: the C library's own version, as `ldd --version` prints it).
    for line in text.lines().skip(1).filter(|l| l.ends_with(" found")) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let (name, library, version) = (cells[0], cells[1], cells[2]);
        let expected = if name == "glibc" {
            let ldd = Command::new("ldd")
                .arg("--version")
                .output()
                .expect("ldd runs");
            let first = stdout(&ldd).lines().next().unwrap_or_default().to_string();
            first.rsplit(' ').next().unwrap_or_default().to_string()
        } else {
            match dpkg_version_of(library) {
                Some(v) => v,
                None => continue,
            }
        };
        assert_eq!(version, expected, "{line}");
    }
}

/// `dpkg-query`'s version of the package owning `library` (under either
/// spelling of merged /usr), if dpkg knows it.
fn dpkg_version_of(library: &str) -> Option<String> {
    let other = match library.strip_prefix("/usr") {
        Some(rest) => rest.to_string(),
        None => format!("/usr{library}"),
    };
    let owner = [library, other.as_str()].into_iter().find_map(|path| {
        let out = Command::new("dpkg-query")
            .args(["-S", path])
            .output()
            .ok()?;
        out.status.success().then(|| stdout(&out))
    })?;
    let package = owner
        .split(": ")
        .next()?
        .split(',')
        .next()?
        .trim()
        .to_string();
    let version = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", &package])
        .output()
        .ok()?;
    Some(stdout(&version)).filter(|v| version.status.success() && !v.is_empty())
}

#[test]
fn single_threaded_program_runs_and_maps_every_installed_allocator() {
    let scratch = Scratch::new();
    let single = program("single");
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-r", "2", "--interval", "20ms"]);
    let (output, json) = scratch.compare(&options, &[single.to_str().expect("utf-8"), "48", "200"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(configs(&json).len(), installed_allocators().len());
    for config in configs(&json) {
        assert_eq!(runs(config).len(), 2);
        for run in runs(config) {
            assert_eq!(run["status"], "ok", "{run}");
            // The library was seen mapped, not merely assumed.
            assert!(run["message"].is_null(), "{run}");
            let peak = as_u64(&run["peak_rss_bytes"]);
            assert!(
                peak > 40 << 20 && peak < 200 << 20,
                "peak {peak} for {}",
                config["name"]
            );
            assert!(as_u64(&run["samples"]) >= 3, "{run}");
        }
    }
}

#[test]
fn single_process_peak_rss_equals_gnu_time_within_2_percent() {
    let scratch = Scratch::new();
    let single = program("single");
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1"],
        &[single.to_str().expect("utf-8"), "96", "100"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let ours = as_u64(&config(&json, "glibc")["runs"][0]["peak_rss_bytes"]) as f64;
    let timed = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(&single)
        .args(["96", "100"])
        .output()
        .expect("GNU time is installed (scripts/bootstrap)");
    let kib: f64 = String::from_utf8_lossy(&timed.stderr)
        .trim()
        .lines()
        .last()
        .and_then(|l| l.parse().ok())
        .expect("a number");
    let theirs = kib * 1024.0;
    let error = (ours - theirs).abs() / theirs;
    assert!(
        error < 0.02,
        "allocscope {ours} vs /usr/bin/time {theirs}: {:.2}%",
        error * 100.0
    );
}

#[test]
fn multithreaded_program_is_compared_under_every_allocator_with_ratios() {
    let scratch = Scratch::new();
    let threads = program("threads");
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-a", "glibc:arena_max=1", "-r", "3", "--interval", "20ms"]);
    let (output, json) =
        scratch.compare(&options, &[threads.to_str().expect("utf-8"), "4", "300000"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(table.contains("baseline"), "{table}");
    for config in configs(&json) {
        let summary = &config["summary"];
        for key in ["peak_rss_bytes", "mean_rss_bytes", "wall_s"] {
            // Three runs: a median, but no interval for it below six.
            let estimate = &summary[key];
            assert!(estimate["median"].as_f64().is_some_and(|m| m > 0.0));
            assert!(estimate["ci_low"].is_null() && estimate["ci_high"].is_null());
            // Three rounds pair into a ratio with its interval.
            let ratio = &summary["ratio"][key];
            let (low, value, high) = (
                ratio["ci_low"].as_f64().expect("ci_low"),
                ratio["value"].as_f64().expect("value"),
                ratio["ci_high"].as_f64().expect("ci_high"),
            );
            assert!(0.0 < low && low <= value && value <= high, "{key}: {ratio}");
        }
        assert!(
            table.contains(config["name"].as_str().expect("name")),
            "{table}"
        );
    }
    // Threads really ran: every run's samples saw the main thread and its
    // four workers (the workload joins them all before it exits).
    let db = rusqlite::Connection::open(scratch.db()).expect("the store opens");
    let most_threads: Vec<i64> = db
        .prepare("SELECT MAX(threads) FROM samples GROUP BY run_id ORDER BY run_id")
        .and_then(|mut q| {
            q.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .expect("samples");
    let total_runs: usize = configs(&json).iter().map(|c| runs(c).len()).sum();
    assert_eq!(most_threads, vec![5; total_runs]);
}

#[test]
fn tree_pss_of_forked_children_is_n_times_their_private_memory() {
    let _quiet = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let forks = program("forks");
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-r", "1", "--interval", "50ms"]);
    let (children, mib) = (4u64, 128u64);
    let (output, json) = scratch.compare(
        &options,
        &[forks.to_str().expect("utf-8"), "4", "128", "3000"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let expected = (children * mib) as f64 * 1048576.0;
    for config in configs(&json) {
        let run = &config["runs"][0];
        let pss = as_u64(&run["peak_pss_bytes"]) as f64;
        // PSS is read within the sampler's CPU budget, a pass every few
        // hundred ms on this tree: on a loaded machine a pass may catch a
        // child still touching its pages (-5.1% once), and the allocators'
        // metadata adds a little (+5.2% once). Counting the children's
        // shared pages once per process would be far off.
        let error = (pss - expected) / expected;
        assert!(
            (-0.08..0.08).contains(&error),
            "{}: tree PSS {pss} vs {expected} ({:.1}%)",
            config["name"],
            error * 100.0
        );
        let peak_rss = as_u64(&run["peak_rss_bytes"]) as f64;
        assert!(
            peak_rss >= expected,
            "{}: tree RSS {peak_rss} below {expected}",
            config["name"]
        );
    }
}

#[test]
fn environment_passes_through_plus_the_configuration_variables() {
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(
        &["-a", "glibc:arena_max=2,env.ALLOCSCOPE_TEST_VAR=from-config", "-r", "1"],
        &["sh", "-c", "echo \"$CALLER_VAR $ALLOCSCOPE_TEST_VAR $GLIBC_TUNABLES\"; read line; echo \"stdin:$line\""],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &configs(&json)[0]["runs"][0];
    let stdout_path = run["stdout_path"].as_str().expect("stdout_path");
    let printed = std::fs::read_to_string(stdout_path).expect("stdout kept");
    assert!(printed.contains("from-config"), "{printed}");
    assert!(printed.contains("glibc.malloc.arena_max=2"), "{printed}");
    // stdin is closed: `read` gets nothing.
    assert!(
        printed.contains("stdin:\n") || printed.ends_with("stdin:"),
        "{printed}"
    );
}

#[test]
fn caller_environment_reaches_the_workload() {
    let scratch = Scratch::new();
    let json_path = scratch.path("env.json");
    let db = scratch.db();
    let output = scratch
        .command(&[
            "compare",
            "--db",
            db.to_str().expect("utf-8"),
            "-a",
            "glibc",
            "-r",
            "1",
            "--export-json",
            json_path.to_str().expect("utf-8"),
            "--",
            "sh",
            "-c",
            "echo $CALLER_VAR",
        ])
        .env("CALLER_VAR", "from-caller")
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("json")).expect("valid");
    let path = json["configs"][0]["runs"][0]["stdout_path"]
        .as_str()
        .expect("path")
        .to_string();
    assert_eq!(
        std::fs::read_to_string(path).expect("stdout kept").trim(),
        "from-caller"
    );
}

#[test]
fn static_program_is_reported_not_loaded_with_the_reason() {
    // cc names libc.a by its full path only where it has one.
    let libc_a = Command::new("cc")
        .arg("-print-file-name=libc.a")
        .output()
        .expect("cc runs");
    if !require(
        String::from_utf8_lossy(&libc_a.stdout).starts_with('/'),
        "a static libc (libc.a)",
        "apt-get install libc6-dev",
    ) {
        return;
    }
    let static_single = program_with("single", &["-static"]);
    let scratch = Scratch::new();
    let mut options = vec!["-r", "1"];
    if installed_allocators().contains(&"jemalloc") {
        options.extend(["-a", "jemalloc"]);
    } else {
        options.extend(["-a", "glibc"]);
    }
    let (output, json) = scratch.compare(
        &options,
        &[static_single.to_str().expect("utf-8"), "8", "50"],
    );
    assert_first_run_not_loaded(&output, &json, "static");
}

#[test]
fn setuid_program_is_reported_not_loaded_when_preload_is_ignored() {
    if !require_allocator("jemalloc") {
        return;
    }
    let scratch = Scratch::new();
    let Some(copy) = setuid_copy(&scratch, "single") else {
        return;
    };
    let (output, json) = scratch.compare(
        &["-a", "jemalloc", "-r", "1"],
        &[copy.to_str().expect("utf-8"), "8", "50"],
    );
    assert_first_run_not_loaded(&output, &json, "set-user-ID");
}

#[test]
fn go_program_is_reported_not_loaded_with_the_reason() {
    let scratch = Scratch::new();
    let source = scratch.path("main.go");
    std::fs::write(
        &source,
        "package main\n\nfunc main() { b := make([]byte, 8<<20); b[0] = 1; println(len(b)) }\n",
    )
    .expect("writes");
    let binary = scratch.path("gohello");
    if !require_program("go", "golang-go") {
        return;
    }
    let built = std::process::Command::new("go")
        .args(["build", "-o"])
        .arg(&binary)
        .arg(&source)
        .env("GOCACHE", scratch.path("gocache"))
        .env("GOPATH", scratch.path("gopath"))
        .env("GO111MODULE", "off")
        .output()
        .expect("go runs");
    assert!(built.status.success(), "go build: {}", stderr(&built));
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1"],
        &[binary.to_str().expect("utf-8")],
    );
    assert_first_run_not_loaded(&output, &json, "Go");
}

#[test]
fn program_with_its_own_malloc_is_reported_not_loaded_with_the_reason() {
    let allocator = if installed_allocators().contains(&"jemalloc") {
        "jemalloc"
    } else {
        "glibc"
    };
    let scratch = Scratch::new();
    let program = crate::common::program("own_malloc");
    let (output, json) = scratch.compare(
        &["-a", allocator, "-r", "1"],
        &[program.to_str().expect("utf-8"), "32"],
    );
    assert_first_run_not_loaded(&output, &json, "defines malloc itself");
}

/// The experiment failed (exit 1) because its first run was `not_loaded`,
/// with a message that names `reason`.
fn assert_first_run_not_loaded(
    output: &std::process::Output,
    json: &serde_json::Value,
    reason: &str,
) {
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    let run = &configs(json)[0]["runs"][0];
    assert_eq!(run["status"], "not_loaded", "{run}");
    assert!(
        run["message"].as_str().is_some_and(|m| m.contains(reason)),
        "{run}"
    );
}
