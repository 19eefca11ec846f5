//! The `thp=never` key: transparent huge pages turned off for the
//! workload's whole tree by a prctl before exec, under every allocator,
//! without the variable that carries it reaching the workload.

use crate::common::*;

/// The lines tests/programs/thp_status.c printed in `run`.
fn status_lines(run: &serde_json::Value) -> String {
    let path = run["stdout_path"].as_str().expect("stdout path");
    std::fs::read_to_string(path).expect("stdout file")
}

#[test]
fn thp_never_disables_huge_pages_for_the_workload_and_its_children() {
    let scratch = Scratch::new();
    let workload = program("thp_status");
    let mut options: Vec<String> = vec!["-r".into(), "1".into(), "-a".into(), "glibc".into()];
    let never: Vec<String> = installed_allocators()
        .iter()
        .map(|a| format!("{a}:thp=never"))
        .collect();
    for config in &never {
        options.extend(["-a".to_string(), config.clone()]);
    }
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (output, json) = scratch.compare(&options, &[workload.to_str().expect("utf-8")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let default = status_lines(&runs(config(&json, "glibc"))[0]);
    assert!(
        default.contains("parent THP_enabled:\t1") && default.contains("child THP_enabled:\t1"),
        "{default}"
    );
    for name in &never {
        let run = &runs(config(&json, name))[0];
        assert_eq!(run["status"], "ok", "{name}: {run}");
        let lines = status_lines(run);
        assert!(lines.contains("parent THP_enabled:\t0"), "{name}: {lines}");
        assert!(lines.contains("child THP_enabled:\t0"), "{name}: {lines}");
        assert!(lines.contains("variable unset"), "{name}: {lines}");
    }
}

#[test]
fn thp_values_other_than_never_are_refused_with_the_reason() {
    let scratch = Scratch::new();
    let output = scratch.run(&["compare", "-a", "glibc:thp=always", "--", "true"]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains("expected never") && message.contains("not forced on"),
        "{message}"
    );
}
