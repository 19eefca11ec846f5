//! What a container needs, end to end with the real binary and real
//! cgroups: under `--memory-limit` a configuration the kernel's OOM killer
//! ends is settled out of the verdict with that reason while the others
//! are judged on their own runs; each configuration gets the memory limit
//! it needs, and the recommended one's is in the deploy lines.

use super::common::{program, require_allocator, require_root, stderr, Scratch};
use serde_json::Value;

const MIB: u64 = 1 << 20;

fn config<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["configs"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no configuration {name} in {json}"))
}

#[test]
fn a_configuration_oom_killed_under_the_limit_is_settled_out_and_another_recommended() {
    if !require_root("making a memory cgroup per run")
        || !require_allocator("jemalloc")
        || !require_allocator("tcmalloc")
    {
        return;
    }
    let scratch = Scratch::new();
    // The same program holds 8 MiB under jemalloc, 24 MiB under glibc and
    // 160 MiB under tcmalloc: only tcmalloc needs more than the 64 MiB
    // limit. Performance is judged by a figure it prints, the same under
    // all (wall time on a loaded machine could leave it open).
    let single = program("single");
    let script = format!(
        "echo 'ops: 100'; case \"$LD_PRELOAD\" in *jemalloc*) exec {s} 8 300;; \
         *tcmalloc*) exec {s} 160 300;; *) exec {s} 24 300;; esac",
        s = single.display()
    );
    let (output, json) = scratch.compare(
        &[
            "-r",
            "3",
            "--interval",
            "20ms",
            "--memory-limit",
            "64M",
            "-a",
            "glibc",
            "-a",
            "jemalloc",
            "-a",
            "tcmalloc",
            "--memory-metric",
            "peak_working_set",
            "--metric",
            "ops=ops: ([0-9]+)",
            "--higher-is-better",
            "ops",
            "--perf-metric",
            "ops",
        ],
        &["sh", "-c", &script],
    );
    let err = stderr(&output);
    let v = &json["verdict"];
    assert_eq!(v["outcome"], "recommend", "{v}\n{err}");
    assert_eq!(v["config"], "jemalloc", "{v}");
    let explanation = v["explanation"].to_string();
    assert!(
        explanation
            .contains("tcmalloc: not chosen: OOM-killed under the 64.0 MiB limit in 3 of 3 runs"),
        "{explanation}"
    );
    // The killed runs are kept as such, the others' results too.
    for run in config(&json, "tcmalloc")["runs"].as_array().expect("runs") {
        assert_eq!(run["status"], "oom", "{run}");
    }
    for name in ["glibc", "jemalloc"] {
        let c = config(&json, name);
        for run in c["runs"].as_array().expect("runs") {
            assert_eq!(run["status"], "ok", "{run}");
            let peak = run["peak_working_set_bytes"]
                .as_u64()
                .expect("a working set");
            assert!(
                run["cgroup"]["peak"]["anon_bytes"].as_u64().is_some(),
                "{run}"
            );
            assert!(run["cgroup_peak_kernel_bytes"].as_u64().is_some(), "{run}");
            assert!(peak < 64 * MIB, "{name}: {peak}");
        }
        // The limit it needs: its highest peak working set plus 20%.
        let limit = &c["memory_limit"];
        assert_eq!(limit["basis"], "peak_working_set_bytes", "{limit}");
        let needed = c["memory_limit_needed_bytes"].as_u64().expect("a limit");
        let peak = limit["peak_bytes"].as_u64().expect("a peak");
        assert_eq!(needed % MIB, 0);
        assert!(
            needed >= peak + peak / 5 && needed < peak + peak / 5 + MIB,
            "{limit}"
        );
    }
    let jemalloc = config(&json, "jemalloc")["memory_limit_needed_bytes"]
        .as_u64()
        .unwrap_or(0);
    let kubernetes = v["deploy"]["kubernetes"].as_str().expect("kubernetes");
    assert!(
        kubernetes.contains(&format!("limits:\n    memory: {}Mi\n", jemalloc / MIB)),
        "{kubernetes}"
    );
    assert!(
        v["deploy"]["systemd"]
            .as_str()
            .is_some_and(|s| s.contains(&format!("MemoryMax={}M", jemalloc / MIB))),
        "{v}"
    );
    assert_eq!(
        json["experiment"]["host"]["run_memory_limit_bytes"],
        64 * MIB
    );
}
