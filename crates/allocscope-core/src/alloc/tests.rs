//! Tests for the `-a` grammar, resolution into launch environments, discovery
//! parsers and the ELF checks (on this machine's real libraries and programs).

use super::config::{parse_spec, Spec, Target};
use super::keys::THP_DISABLE_ENV;
use super::known::allocator_of_library;
use super::registry::{Found, Registry};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn found(name: &'static str, lib: &str, package: &'static str) -> Found {
    Found {
        name,
        library: PathBuf::from(lib),
        mapped: PathBuf::from(lib),
        version: Some("1.0".into()),
        package,
    }
}

/// glibc and jemalloc only: tcmalloc and mimalloc are "missing".
fn scripted() -> Registry {
    Registry::from_found(vec![
        found("glibc", "/lib/libc.so.6", "libc6"),
        found("jemalloc", "/lib/libjemalloc.so.2", "libjemalloc2"),
    ])
}

fn env(cfg: &crate::model::Config) -> Vec<(&str, &str)> {
    cfg.env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

fn err(spec: &str) -> String {
    match scripted().resolve(spec) {
        Ok(cfg) => panic!("{spec} resolved to {cfg:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn parses_name_with_settings() {
    let spec = parse_spec("glibc:arena_max=2,trim_threshold=64k").expect("valid");
    assert_eq!(spec.target, Target::Named("glibc".into()));
    assert_eq!(spec.settings.len(), 2);
    assert_eq!(spec.to_string(), "glibc:arena_max=2,trim_threshold=64k");
}

#[test]
fn parses_label_path_and_env_values_with_colons() {
    let spec = parse_spec("mine=/opt/libfoo.so:env.LD_LIBRARY_PATH=/a:/b").expect("valid");
    assert_eq!(
        spec.target,
        Target::Library {
            label: "mine".into(),
            path: "/opt/libfoo.so".into()
        }
    );
    assert_eq!(
        spec.settings,
        vec![("env.LD_LIBRARY_PATH".into(), "/a:/b".into())]
    );
}

#[test]
fn rejects_malformed_specs_with_a_fix() {
    let cases = [
        ("", "empty allocator configuration"),
        ("glibc:arena_max", "malformed setting 'arena_max'"),
        ("glibc:=2", "empty key"),
        ("glibc:arena_max=", "empty value for key 'arena_max'"),
        ("glibc:arena_max=2,arena_max=3", "given twice"),
        ("glibc:env.1X=2", "invalid environment variable name '1X'"),
        ("my lib=/x.so", "invalid label 'my lib'"),
        ("mine=", "missing library path"),
    ];
    for (spec, want) in cases {
        let got = err(spec);
        assert!(got.contains(want), "{spec}: {got}");
        assert!(!got.contains('\n'), "{spec}: one line");
    }
}

#[test]
fn unknown_allocator_lists_the_built_ins() {
    assert_eq!(
        err("jemaloc"),
        "unknown allocator 'jemaloc'; built-in: glibc, jemalloc, tcmalloc, mimalloc, or LABEL=/path/to/lib.so"
    );
}

#[test]
fn unknown_key_lists_the_valid_ones() {
    let got = err("glibc:arena=2");
    assert!(
        got.starts_with("unknown key 'arena' for glibc; valid keys: arena_max, arena_test,"),
        "{got}"
    );
    assert!(err("jemalloc:decay=1").contains("dirty_decay_ms"));
}

#[test]
fn bad_values_say_what_is_expected() {
    assert!(err("glibc:arena_max=-1").contains("expected a non-negative integer"));
    assert!(err("glibc:mmap_threshold=1T").contains("64k"));
    assert!(err("jemalloc:thp=sometimes").contains("one of default, always, never"));
    assert!(err("jemalloc:tcache=perhaps").contains("true or false"));
}

#[test]
fn thp_never_is_every_configurations_key_and_nothing_else_is_accepted() {
    let glibc = scripted().resolve("glibc:thp=never").expect("valid");
    assert_eq!(env(&glibc), [(THP_DISABLE_ENV, "1")]);
    // jemalloc's own `thp` option keeps its other values, for its arenas.
    let je = scripted().resolve("jemalloc:thp=never").expect("valid");
    assert_eq!(env(&je)[1], (THP_DISABLE_ENV, "1"));
    assert!(!env(&je).iter().any(|(k, _)| *k == "MALLOC_CONF"));
    let always = scripted().resolve("jemalloc:thp=always").expect("valid");
    assert_eq!(env(&always)[1], ("MALLOC_CONF", "thp:always"));
    let got = err("glibc:thp=always");
    assert!(
        got.contains("expected never") && got.contains("not forced on"),
        "{got}"
    );
    assert!(err("glibc:x=1").contains(", thp, env.NAME"));
    assert!(!err("jemalloc:x=1").contains("thp, thp"));
}

#[test]
fn missing_allocator_names_the_debian_package() {
    assert_eq!(
        err("tcmalloc"),
        "tcmalloc is not installed; install the Debian package libtcmalloc-minimal4 (apt-get install libtcmalloc-minimal4)"
    );
    // A key typo is reported even where the allocator is missing.
    assert!(err("mimalloc:colour=1").contains("unknown key 'colour' for mimalloc"));
}

#[test]
fn glibc_keys_become_one_tunables_variable_without_preload() {
    let cfg = scripted()
        .resolve("glibc:arena_max=2,trim_threshold=128k")
        .expect("valid");
    assert_eq!(cfg.name, "glibc:arena_max=2,trim_threshold=128k");
    assert_eq!(cfg.allocator, "glibc");
    assert_eq!(cfg.library.as_deref(), Some(Path::new("/lib/libc.so.6")));
    assert_eq!(
        env(&cfg),
        vec![(
            "GLIBC_TUNABLES",
            "glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072"
        )]
    );
    assert!(scripted().resolve("glibc").expect("valid").env.is_empty());
}

#[test]
fn glibc_trim_goes_to_the_heap_probe_not_the_tunables() {
    let cfg = scripted()
        .resolve("glibc:arena_max=2,trim=1s")
        .expect("valid");
    assert_eq!(
        env(&cfg),
        vec![
            ("GLIBC_TUNABLES", "glibc.malloc.arena_max=2"),
            ("ALLOCSCOPE_PROBE_TRIM_MS", "1000"),
        ]
    );
    assert!(err("glibc:trim=never").contains("500ms or 1s"));
}

#[test]
fn jemalloc_keys_become_malloc_conf_after_the_preload() {
    let cfg = scripted()
        .resolve("jemalloc:dirty_decay_ms=0,background_thread=yes,env.FOO=bar")
        .expect("valid");
    assert_eq!(
        env(&cfg),
        vec![
            ("LD_PRELOAD", "/lib/libjemalloc.so.2"),
            ("MALLOC_CONF", "dirty_decay_ms:0,background_thread:true"),
            ("FOO", "bar"),
        ]
    );
    assert_eq!(cfg.version.as_deref(), Some("1.0"));
}

#[test]
fn tcmalloc_and_mimalloc_keys_become_prefixed_variables() {
    let reg = Registry::from_found(vec![
        found(
            "tcmalloc",
            "/lib/libtcmalloc_minimal.so.4",
            "libtcmalloc-minimal4",
        ),
        found("mimalloc", "/lib/libmimalloc.so.2", "libmimalloc2.0"),
    ]);
    let tc = reg
        .resolve("tcmalloc:release_rate=10,aggressive_decommit=true")
        .expect("valid");
    assert_eq!(
        env(&tc)[1..],
        [
            ("TCMALLOC_RELEASE_RATE", "10"),
            ("TCMALLOC_AGGRESSIVE_DECOMMIT", "1")
        ]
    );
    let mi = reg
        .resolve("mimalloc:reserve_os_memory=1g,show_stats=off")
        .expect("valid");
    assert_eq!(
        env(&mi)[1..],
        [
            ("MIMALLOC_RESERVE_OS_MEMORY", "1073741824"),
            ("MIMALLOC_SHOW_STATS", "0")
        ]
    );
}

#[test]
fn env_settings_may_not_override_what_the_keys_set() {
    assert!(err("glibc:arena_max=1,env.GLIBC_TUNABLES=x").contains("set twice"));
    assert!(err("jemalloc:env.LD_PRELOAD=/x.so").contains("LD_PRELOAD is set twice"));
}

#[test]
fn defaults_skip_missing_allocators_with_one_warning_each() {
    let (configs, warnings) = scripted().default_configs();
    let names: Vec<_> = configs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["glibc", "glibc:arena_max=2", "jemalloc"]);
    assert_eq!(warnings.len(), 2);
    assert!(
        warnings[0].contains("apt-get install libtcmalloc-minimal4"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("apt-get install libmimalloc2.0"),
        "{}",
        warnings[1]
    );
}

#[test]
fn user_library_takes_env_and_thp_keys_and_is_checked() {
    let reg = scripted();
    let lib = "/lib/x86_64-linux-gnu/libjemalloc.so.2";
    if !super::test_deps::require(Path::new(lib).exists(), lib, "libjemalloc2") {
        return;
    }
    let cfg = reg
        .resolve(&format!("je={lib}:env.MALLOC_CONF=narenas:1"))
        .expect("valid");
    assert_eq!(cfg.allocator, "je");
    assert_eq!(cfg.env[0].0, "LD_PRELOAD");
    assert_eq!(cfg.env[1], ("MALLOC_CONF".into(), "narenas:1".into()));
    assert!(cfg.version.is_some());
    let got = err(&format!("je={lib}:narenas=1"));
    assert!(got.contains("takes no allocator keys"), "{got}");
    let thp = reg.resolve(&format!("je={lib}:thp=never")).expect("valid");
    assert_eq!(thp.env[1], (THP_DISABLE_ENV.into(), "1".into()));
    assert!(err(&format!("jemalloc={lib}")).contains("built-in allocator name"));
    assert_eq!(
        err("x=/no/such.so"),
        "'/no/such.so' does not exist; give the path of an allocator shared library"
    );
    assert!(err("x=/etc/passwd").starts_with("'/etc/passwd' is not an ELF shared object"));
    let dir = tempfile::tempdir().expect("tempdir");
    let spaced = dir.path().join("my lib.so");
    std::fs::copy(lib, &spaced).expect("copy");
    let got = err(&format!("sp={}", spaced.display()));
    assert!(got.contains("contains a space"), "{got}");
}

#[test]
fn names_allocators_from_library_paths_and_maps() {
    assert_eq!(
        allocator_of_library(Path::new("libjemalloc.so.2")),
        Some("jemalloc")
    );
    assert_eq!(
        allocator_of_library(Path::new("/usr/lib/libtcmalloc_minimal.so.4.5.10")),
        Some("tcmalloc")
    );
    assert_eq!(
        allocator_of_library(Path::new("/usr/lib/libmimalloc.so.2.0")),
        Some("mimalloc")
    );
    assert_eq!(allocator_of_library(Path::new("/lib/libc.so.6")), None);
}

fn setting() -> impl Strategy<Value = (String, String)> {
    let key = prop_oneof!["[a-z][a-z_]{0,12}", "env\\.[A-Z_][A-Z0-9_]{0,8}"];
    (key, "[A-Za-z0-9_./+-][A-Za-z0-9_./+:=-]{0,10}")
}

fn valid_spec() -> impl Strategy<Value = Spec> {
    let target = prop_oneof![
        "[a-z][a-z0-9_]{0,10}".prop_map(Target::Named),
        ("[A-Za-z0-9_.+-]{1,8}", "/[A-Za-z0-9_./-]{1,20}")
            .prop_map(|(label, path)| Target::Library { label, path }),
    ];
    (target, proptest::collection::vec(setting(), 0..5)).prop_map(|(target, mut settings)| {
        let mut seen = std::collections::HashSet::new();
        settings.retain(|(k, _)| seen.insert(k.clone()));
        Spec { target, settings }
    })
}

proptest! {
    #[test]
    fn resolve_never_panics(text in "\\PC{0,40}") {
        let _ = scripted().resolve(&text);
    }

    #[test]
    fn resolve_never_panics_on_grammar_like_text(text in "[a-z=:,./ ]{0,30}") {
        let _ = scripted().resolve(&text);
    }

    #[test]
    fn valid_specs_round_trip(spec in valid_spec()) {
        let text = spec.to_string();
        prop_assert_eq!(parse_spec(&text).map_err(|e| e.to_string()), Ok(spec));
    }
}
