//! `--cpus N`: a configuration's launch environment as on a host of N CPUs.
//! Each built-in allocator's CPU-derived default (`known::CpuRule`: glibc's
//! `arena_max`, jemalloc's `narenas`) is given the value the allocator would
//! derive there, merged into the variable the allocator reads it from,
//! unless the configuration sets it itself, which it keeps. The stored
//! configuration is left as the user gave it, so its deploy lines carry no
//! emulation; only its launch environment changes.

use super::known::{self, EnvStyle};
use crate::model::{Config, CpuSizing, CpuSizingAction};

/// The launch configuration of `config` as on `cpus` CPUs, and what was
/// done to it.
pub fn size_for(config: &Config, cpus: u32) -> (Config, CpuSizing) {
    let mut launch = config.clone();
    let sizing = |action, setting| CpuSizing {
        config: config.name.clone(),
        action,
        setting,
    };
    let Some(builtin) = known::builtin(&config.allocator) else {
        return (launch, sizing(CpuSizingAction::Unknown, None));
    };
    let Some(rule) = &builtin.cpu_sizing else {
        return (launch, sizing(CpuSizingAction::None, None));
    };
    let own = own_value(&config.env, builtin.env, rule.key).or_else(|| {
        rule.alias
            .and_then(|alias| variable(&config.env, alias).map(str::to_string))
    });
    if let Some(value) = own {
        let setting = format!("{}={value}", rule.key);
        return (launch, sizing(CpuSizingAction::Kept, Some(setting)));
    }
    let value = (rule.default_on)(cpus).to_string();
    set_value(&mut launch.env, builtin.env, rule.key, &value);
    let setting = format!("{}={value}", rule.key);
    (launch, sizing(CpuSizingAction::Set, Some(setting)))
}

fn variable<'e>(env: &'e [(String, String)], name: &str) -> Option<&'e str> {
    env.iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| value.as_str())
}

/// Where `key` lives in the allocator's variables: the variable, and for
/// the styles that list several settings in one, the item's name and the
/// separators between items and between an item's name and value.
fn place(style: EnvStyle, key: &str) -> (String, Option<(String, char, char)>) {
    match style {
        EnvStyle::GlibcTunables => (
            "GLIBC_TUNABLES".to_string(),
            Some((format!("glibc.malloc.{key}"), ':', '=')),
        ),
        EnvStyle::MallocConf => ("MALLOC_CONF".to_string(), Some((key.to_string(), ',', ':'))),
        EnvStyle::Prefixed(prefix) => (format!("{prefix}{}", key.to_ascii_uppercase()), None),
    }
}

/// The value the configuration gives `key` itself, through its own key or
/// an `env.` setting of the same variable.
fn own_value(env: &[(String, String)], style: EnvStyle, key: &str) -> Option<String> {
    let (name, item) = place(style, key);
    let value = variable(env, &name)?;
    let Some((item, between, within)) = item else {
        return Some(value.to_string());
    };
    value
        .split(between)
        .filter_map(|setting| setting.split_once(within))
        .find(|(name, _)| name.trim() == item)
        .map(|(_, value)| value.trim().to_string())
}

/// Adds `key=value` to the allocator's variables, after any settings the
/// configuration already has there.
fn set_value(env: &mut Vec<(String, String)>, style: EnvStyle, key: &str, value: &str) {
    let (name, item) = place(style, key);
    let Some((item, between, within)) = item else {
        env.push((name, value.to_string()));
        return;
    };
    let setting = format!("{item}{within}{value}");
    match env.iter_mut().find(|(n, _)| *n == name) {
        Some((_, existing)) if !existing.is_empty() => {
            existing.push(between);
            existing.push_str(&setting);
        }
        Some((_, existing)) => *existing = setting,
        None => env.push((name, setting)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allocator: &str, env: &[(&str, &str)]) -> Config {
        Config {
            name: allocator.to_string(),
            allocator: allocator.to_string(),
            library: None,
            version: None,
            command: None,
            env: env
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn var<'c>(config: &'c Config, name: &str) -> Option<&'c str> {
        variable(&config.env, name)
    }

    #[test]
    fn glibc_gets_8_arenas_per_cpu_merged_with_its_other_tunables() {
        let (launch, sizing) = size_for(&config("glibc", &[]), 16);
        assert_eq!(
            var(&launch, "GLIBC_TUNABLES"),
            Some("glibc.malloc.arena_max=128")
        );
        assert_eq!(sizing.action, CpuSizingAction::Set);
        assert_eq!(sizing.setting.as_deref(), Some("arena_max=128"));
        let tuned = config(
            "glibc",
            &[("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0")],
        );
        let (launch, _) = size_for(&tuned, 1);
        assert_eq!(
            var(&launch, "GLIBC_TUNABLES"),
            Some("glibc.malloc.trim_threshold=0:glibc.malloc.arena_max=8")
        );
        // The stored configuration is untouched.
        assert_eq!(
            var(&tuned, "GLIBC_TUNABLES"),
            Some("glibc.malloc.trim_threshold=0")
        );
    }

    #[test]
    fn a_configuration_that_sets_its_own_arena_limit_keeps_it() {
        for own in [
            config("glibc", &[("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")]),
            config("glibc", &[("MALLOC_ARENA_MAX", "2")]),
        ] {
            let (launch, sizing) = size_for(&own, 16);
            assert_eq!(launch, own);
            assert_eq!(sizing.action, CpuSizingAction::Kept);
            assert_eq!(sizing.setting.as_deref(), Some("arena_max=2"));
        }
        let je = config("jemalloc", &[("MALLOC_CONF", "narenas:2,dirty_decay_ms:0")]);
        let (launch, sizing) = size_for(&je, 16);
        assert_eq!(launch, je);
        assert_eq!(sizing.setting.as_deref(), Some("narenas=2"));
    }

    #[test]
    fn jemalloc_gets_4_arenas_per_cpu_and_one_on_a_single_cpu() {
        let je = config("jemalloc", &[("MALLOC_CONF", "dirty_decay_ms:0")]);
        let (launch, _) = size_for(&je, 16);
        assert_eq!(
            var(&launch, "MALLOC_CONF"),
            Some("dirty_decay_ms:0,narenas:64")
        );
        let (launch, sizing) = size_for(&config("jemalloc", &[]), 1);
        assert_eq!(var(&launch, "MALLOC_CONF"), Some("narenas:1"));
        assert_eq!(sizing.setting.as_deref(), Some("narenas=1"));
        // narenas_ratio is another key, not an own narenas.
        let ratio = config("jemalloc", &[("MALLOC_CONF", "narenas_ratio:2")]);
        assert_eq!(size_for(&ratio, 2).1.action, CpuSizingAction::Set);
    }

    #[test]
    fn allocators_that_size_nothing_by_cpus_and_user_libraries_are_left_alone() {
        for (allocator, action) in [
            ("tcmalloc", CpuSizingAction::None),
            ("mimalloc", CpuSizingAction::None),
            ("mylib", CpuSizingAction::Unknown),
        ] {
            let given = config(allocator, &[("LD_PRELOAD", "/lib/x.so")]);
            let (launch, sizing) = size_for(&given, 16);
            assert_eq!(launch, given, "{allocator}");
            assert_eq!(sizing.action, action, "{allocator}");
            assert_eq!(sizing.setting, None);
        }
    }
}
