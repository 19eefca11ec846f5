//! Mistakes on the command line: one line naming the problem and the fix,
//! exit 2, nothing run, nothing stored.

use crate::common::*;

fn rejected(args: &[&str], expected_words: &[&str]) {
    let scratch = Scratch::new();
    let db = scratch.db();
    let mut full = vec!["compare", "--db", db.to_str().expect("utf-8")];
    full.extend_from_slice(args);
    let output = scratch.run(&full);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    for word in expected_words {
        assert!(err.contains(word), "{args:?}: '{word}' missing from: {err}");
    }
    assert!(!db.exists(), "{args:?} created a store");
}

#[test]
fn missing_command_is_named_and_nothing_runs() {
    rejected(
        &["--", "no-such-program-xyz"],
        &["no-such-program-xyz", "not found"],
    );
}

#[test]
fn two_exports_to_one_file_are_rejected_before_anything_runs() {
    rejected(
        &[
            "--export-json",
            "out.txt",
            "--html",
            "out.txt",
            "--",
            "true",
        ],
        &["--export-json and --html", "'out.txt'", "a file of its own"],
    );
    // The sample CSV beside --export-csv counts as a file too.
    rejected(
        &[
            "--export-csv",
            "r.csv",
            "--samples",
            "--export-markdown",
            "r.samples.csv",
            "--",
            "true",
        ],
        &["--export-markdown and --samples", "r.samples.csv"],
    );
}

#[test]
fn directory_as_command_is_rejected() {
    rejected(&["--", "/tmp"], &["/tmp", "directory"]);
}

#[test]
fn unknown_allocator_lists_the_built_in_names() {
    rejected(
        &["-a", "jemaloc", "--", "true"],
        &["jemaloc", "glibc", "jemalloc", "tcmalloc", "mimalloc"],
    );
}

#[test]
fn unknown_glibc_key_lists_the_valid_keys() {
    rejected(
        &["-a", "glibc:arena=2", "--", "true"],
        &["arena", "arena_max", "trim_threshold"],
    );
}

#[test]
fn library_that_is_missing_or_not_elf_is_rejected() {
    rejected(
        &["-a", "mine=/no/such/lib.so", "--", "true"],
        &["/no/such/lib.so"],
    );
    rejected(
        &["-a", "mine=/etc/passwd", "--", "true"],
        &["/etc/passwd", "ELF"],
    );
}

#[test]
fn malformed_durations_and_counts_are_rejected() {
    rejected(&["--interval", "0", "--", "true"], &["--interval"]);
    rejected(&["--interval", "2h", "--", "true"], &["10ms", "1h"]);
    rejected(&["--timeout", "5parsecs", "--", "true"], &["5parsecs"]);
    rejected(&["--runs", "-1", "--", "true"], &["--runs"]);
    rejected(&["--runs", "0", "--", "true"], &["--runs"]);
    rejected(
        &["--memory-limit", "12 parsecs", "--", "true"],
        &["12 parsecs"],
    );
    rejected(
        &["--memory-limit", "100K", "--", "true"],
        &["--memory-limit", "1M"],
    );
}

#[test]
fn unknown_baseline_lists_the_configurations() {
    rejected(
        &["-a", "glibc", "--baseline", "jemalloc", "--", "true"],
        &["jemalloc", "glibc"],
    );
}

#[test]
fn unknown_option_or_scenario_is_one_line_listing_the_valid_ones() {
    let scratch = Scratch::new();
    for (args, expected) in [
        (
            vec!["compare", "--bogus", "--", "true"],
            vec!["--bogus", "--alloc", "--runs"],
        ),
        (
            vec!["workload", "nosuch"],
            vec!["nosuch", "churn", "events", "kv", "server"],
        ),
    ] {
        let output = scratch.run(&args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        for word in expected {
            assert!(err.contains(word), "'{word}' missing from {err}");
        }
    }
}

#[test]
fn library_that_is_32_bit_or_has_no_malloc_is_rejected() {
    let scratch = Scratch::new();
    // A minimal ELF32 shared-object header for i386.
    let mut header = b"\x7fELF\x01\x01\x01\x00".to_vec();
    header.extend([0u8; 8]);
    for (value, width) in [
        (3u32, 2),
        (3, 2),
        (1, 4),
        (0, 4),
        (0, 4),
        (0, 4),
        (0, 4),
        (52, 2),
        (32, 2),
        (0, 2),
        (40, 2),
        (0, 2),
        (0, 2),
    ] {
        header.extend(&value.to_le_bytes()[..width]);
    }
    let lib32 = scratch.path("lib32.so");
    std::fs::write(&lib32, header).expect("writes");
    let spec = format!("mine={}", lib32.display());
    rejected(&["-a", &spec, "--", "true"], &["32-bit"]);
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists());
    if let Some(libm) = libm {
        rejected(
            &["-a", &format!("mine={libm}"), "--", "true"],
            &["libm.so.6", "malloc"],
        );
    }
}

#[test]
fn a_variant_without_a_label_is_rejected_naming_the_form() {
    rejected(
        &["--variant", "nolabel", "--", "true"],
        &["--variant 'nolabel'", "LABEL=COMMAND"],
    );
}
