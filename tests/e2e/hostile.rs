//! The hostile-programs suite: programs that do what daemons, launchers and
//! runtimes do (drop privileges before or after exec, close every
//! descriptor, clear the environment, fork thousands of children, exit from
//! a thread, install a seccomp filter, enter a user namespace) run with the
//! heap probe exactly as without it: same exit status, same output. Each
//! runs under every installed allocator, the probe preloaded as a run
//! preloads it and polling every millisecond, so that its thread is
//! awake whenever the program acts. docs/reliability.md lists the cases.

use crate::common::*;
use allocscope_core::probe::{install, ProbeBuild};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

/// What a run of a program gave: its exit code or signal, and its stdout.
#[derive(Debug, PartialEq)]
struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
}

fn outcome(words: &[String], env: &[(String, String)]) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let out = Command::new(&words[0])
        .args(&words[1..])
        .env_remove("LD_PRELOAD")
        .env_remove("ALLOCSCOPE_PROBE_SHM")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .expect("the program starts");
    Outcome {
        code: out.status.code(),
        signal: out.status.signal(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

/// The allocator libraries to preload (glibc: none) and the probe build a
/// run of that allocator loads before it.
fn allocators() -> Vec<(&'static str, Option<&'static str>, ProbeBuild)> {
    let mut found = Vec::new();
    for name in installed_allocators() {
        let (soname, build) = match name {
            "glibc" => (None, ProbeBuild::Stats),
            "jemalloc" => (Some("libjemalloc.so.2"), ProbeBuild::Stats),
            "tcmalloc" => (Some("libtcmalloc_minimal.so.4"), ProbeBuild::Stats),
            _ => (Some("libmimalloc.so.2"), ProbeBuild::Count),
        };
        found.push((name, soname, build));
    }
    found
}

/// Runs `words` under every installed allocator without and with the
/// probe; fails naming the allocator when the two differ. Returns the
/// outcome without the probe under glibc, for the case's own checks.
fn same_with_and_without_probe(words: &[String]) -> Outcome {
    let scratch = Scratch::new();
    // The probe's directory as allocscope makes it: its own user's, 0700.
    let dir = scratch.path("probe");
    std::fs::create_dir(&dir).expect("probe dir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let mut baseline = None;
    for (name, soname, build) in allocators() {
        let library = install(build).expect("installs the probe");
        let preload = |with_probe: bool| {
            let mut libs: Vec<String> = Vec::new();
            if with_probe {
                libs.push(library.display().to_string());
            }
            libs.extend(soname.map(String::from));
            libs.join(" ")
        };
        let without = outcome(words, &[("LD_PRELOAD".into(), preload(false))]);
        let with = outcome(
            words,
            &[
                ("LD_PRELOAD".into(), preload(true)),
                ("ALLOCSCOPE_PROBE_SHM".into(), dir.display().to_string()),
                ("ALLOCSCOPE_PROBE_INTERVAL_MS".into(), "1".into()),
            ],
        );
        assert_eq!(
            with, without,
            "{words:?} under {name}: with the probe (left) differs from without it (right)"
        );
        baseline.get_or_insert(without);
    }
    baseline.expect("glibc is always there")
}

fn hostile(mode: &[&str]) -> Vec<String> {
    let mut words = vec![program("hostile").display().to_string()];
    words.extend(mode.iter().map(|w| w.to_string()));
    words
}

#[test]
fn a_uid_switch_at_run_time_after_starting_threads_runs_as_without_the_probe() {
    if !require_root("to switch to nobody") {
        return;
    }
    let out = same_with_and_without_probe(&hostile(&["threads-setuid"]));
    assert_eq!(out.stdout, "uid=65534 gid=65534\n");
}

#[test]
fn keeping_capabilities_across_a_uid_switch_does_not_abort_the_program() {
    if !require_root("to switch to nobody keeping capabilities") {
        return;
    }
    let out = same_with_and_without_probe(&hostile(&["keepcaps"]));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "uid=65534 gid=65534\n")
    );
}

#[test]
fn a_uid_switch_before_exec_through_setpriv_runs_as_without_the_probe() {
    if !require_root("to switch to nobody") || !require_program("setpriv", "util-linux") {
        return;
    }
    let words: Vec<String> = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "/bin/sh",
        "-c",
        "id -u; id -g",
    ]
    .map(String::from)
    .to_vec();
    let out = same_with_and_without_probe(&words);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "65534\n65534\n"));
}

#[test]
fn a_program_that_closes_every_descriptor_finds_none_of_the_probes() {
    // The count inherited from the test harness varies (cargo's jobserver);
    // with and without the probe it must be the same.
    let out = same_with_and_without_probe(&hostile(&["closefds"]));
    assert!(
        out.stdout.ends_with("child beyond stdio: 0\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_child_started_after_clearenv_runs_without_the_probe_and_keeps_its_status() {
    let out = same_with_and_without_probe(&hostile(&["clearenv"]));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(4), "child preload=[]\n")
    );
}

#[test]
fn thousands_of_short_children_exit_with_their_own_statuses() {
    let out = same_with_and_without_probe(&hostile(&["forks", "2000"]));
    // 2000 children exiting with i % 7: 285 full cycles of 0..6 (21 each) plus 0..4.
    assert_eq!(out.stdout, "sum=5995\n");
}

#[test]
fn exit_from_a_secondary_thread_keeps_its_status() {
    let out = same_with_and_without_probe(&hostile(&["thread-exit"]));
    assert_eq!(out.code, Some(3));
}

#[test]
fn underscore_exit_and_abort_keep_their_own_statuses() {
    assert_eq!(
        same_with_and_without_probe(&hostile(&["exit"])).code,
        Some(7)
    );
    assert_eq!(
        same_with_and_without_probe(&hostile(&["abort"])).signal,
        Some(6)
    );
}

#[test]
fn a_seccomp_filtered_program_is_not_killed_by_the_probes_system_calls() {
    let out = same_with_and_without_probe(&hostile(&["seccomp"]));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "before the filter\nsurvived the filter\n")
    );
}

#[test]
fn entering_a_user_namespace_works_as_in_a_single_threaded_program() {
    // unshare(CLONE_NEWUSER) refuses a multithreaded caller; the result
    // (ok, or refused by this machine's own policy) must not change.
    same_with_and_without_probe(&hostile(&["unshare"]));
}

#[test]
fn fork_from_a_signal_handler_keeps_the_childs_status() {
    let out = same_with_and_without_probe(&hostile(&["fork-in-handler"]));
    assert_eq!(out.stdout, "child status 5\n");
}

#[test]
fn a_jvm_runs_as_without_the_probe() {
    if !require_program("java", "default-jre-headless") {
        return;
    }
    let scratch = Scratch::new();
    let source = scratch.path("Hello.java");
    std::fs::write(
        &source,
        "public class Hello { public static void main(String[] a) throws Exception {\n\
         java.util.List<byte[]> l = new java.util.ArrayList<>();\n\
         for (int i = 0; i < 2000; i++) l.add(new byte[4096]);\n\
         Thread t = new Thread(() -> System.out.println(\"thread\")); t.start(); t.join();\n\
         System.out.println(\"held \" + l.size()); System.exit(9); } }\n",
    )
    .expect("writes the source");
    let words: Vec<String> = ["java", "-Xmx64m", "-XX:+UseSerialGC"]
        .into_iter()
        .map(String::from)
        .chain([source.display().to_string()])
        .collect();
    let out = same_with_and_without_probe(&words);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(9), "thread\nheld 2000\n")
    );
}

#[test]
fn a_run_whose_probe_turned_off_for_a_seccomp_filter_is_ok_and_says_why() {
    let scratch = Scratch::new();
    let program = program("hostile").display().to_string();
    let (output, json) = scratch.compare(&["-a", "glibc", "-r", "1"], &[&program, "seccomp"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(run["status"], "ok", "{run}");
    let message = run["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("heap probe off in PID ")
            && message.contains("the program installed a seccomp filter"),
        "{message}"
    );
}

#[test]
fn forked_children_that_make_a_credential_call_keep_their_status_and_keep_polling() {
    // Each child stops and restarts its probe thread, which sleeps on a
    // condition variable: the parent's copy unless made anew in the child
    // (a pre-forking server's worker once stopped polling after one read).
    let out = same_with_and_without_probe(&hostile(&["fork-setgid", "20"]));
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "forked 20\n"));
    let scratch = Scratch::new();
    let dir = scratch.path("probe");
    std::fs::create_dir(&dir).expect("probe dir");
    let library = install(ProbeBuild::Stats).expect("installs the probe");
    let words = hostile(&["fork-setgid", "20"]);
    let env = [
        ("LD_PRELOAD".to_string(), library.display().to_string()),
        (
            "ALLOCSCOPE_PROBE_SHM".to_string(),
            dir.display().to_string(),
        ),
        ("ALLOCSCOPE_PROBE_INTERVAL_MS".to_string(), "5".to_string()),
    ];
    assert_eq!(outcome(&words, &env).code, Some(0));
    // Word 10: polls so far. 300 ms idle at one poll per 5 ms: dozens.
    let polls: Vec<u64> = std::fs::read_dir(&dir)
        .expect("lists the probe files")
        .flatten()
        .map(|f| {
            let bytes = std::fs::read(f.path()).expect("reads a probe file");
            u64::from_le_bytes(bytes[80..88].try_into().expect("8 bytes"))
        })
        .collect();
    assert_eq!(polls.len(), 21, "{polls:?}");
    assert!(
        polls.iter().all(|&p| p >= 10),
        "a process stopped polling: {polls:?}"
    );
}
