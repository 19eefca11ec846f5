//! The candidates `tune` races: each allocator's plain configuration, then
//! one candidate per value worth trying of each tunable key (the `tries`
//! written next to the key in `alloc::keys`), then the user's `--try`
//! values. Pure: which allocators this machine has is given.

use crate::error::TuneError;
use allocscope_core::alloc::known::{Builtin, BUILTINS};
use allocscope_core::usage_error::UsageError;

/// One `--try ALLOC:KEY=V1,V2` (or `KEY=...` for a key one allocator has).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Try {
    pub allocator: &'static str,
    pub key: &'static str,
    pub values: Vec<String>,
}

/// One configuration to race: its allocator and the keys it sets (none for
/// the allocator's plain configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub allocator: &'static str,
    pub settings: Vec<(&'static str, String)>,
}

impl Candidate {
    fn plain(allocator: &'static str) -> Candidate {
        Candidate {
            allocator,
            settings: Vec::new(),
        }
    }

    fn one(allocator: &'static str, key: &'static str, value: &str) -> Candidate {
        Candidate {
            allocator,
            settings: vec![(key, value.to_string())],
        }
    }

    /// The `-a` spec (`glibc:arena_max=2`), which is also its name.
    pub fn spec(&self) -> String {
        if self.settings.is_empty() {
            return self.allocator.to_string();
        }
        let pairs: Vec<String> = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{}:{}", self.allocator, pairs.join(","))
    }

    /// The one key this candidate sets, if it sets exactly one.
    pub(crate) fn single_key(&self) -> Option<&'static str> {
        match self.settings.as_slice() {
            [(key, _)] => Some(key),
            _ => None,
        }
    }
}

/// The allocators `tune -a NAME` names (all built-ins without any), each
/// checked to be a built-in's name; `installed` says which this machine has.
pub fn allocators(
    named: &[String],
    installed: &dyn Fn(&str) -> bool,
) -> Result<Vec<&'static Builtin>, UsageError> {
    for name in named {
        if name.contains([':', '=']) {
            return Err(TuneError::NotAName(name.clone()).into());
        }
        if !BUILTINS.iter().any(|b| b.name == name) {
            return Err(TuneError::NotBuiltin {
                name: name.clone(),
                builtins: allocscope_core::alloc::known::names(),
            }
            .into());
        }
    }
    let chosen: Vec<&'static Builtin> = BUILTINS
        .iter()
        .filter(|b| named.is_empty() || named.iter().any(|n| n == b.name))
        .filter(|b| installed(b.name))
        .collect();
    if chosen.is_empty() {
        return Err(UsageError::NoConfigs {
            packages: allocscope_core::alloc::known::packages_to_install(),
        });
    }
    Ok(chosen)
}

/// Parses one `--try [ALLOC:]KEY=V1,V2,...` against `allocators`.
pub fn parse_try(text: &str, allocators: &[&'static Builtin]) -> Result<Try, UsageError> {
    let Some((lhs, values)) = text.split_once('=') else {
        return Err(TuneError::TryWithoutEquals(text.to_string()).into());
    };
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(TuneError::TryWithoutValues(text.to_string()).into());
    }
    let (named, key) = match lhs.split_once(':') {
        Some((a, k)) => (Some(a), k),
        None => (None, lhs),
    };
    // Each allocator that has the key, with the key's own (static) name.
    let owners: Vec<(&'static str, &'static str)> = allocators
        .iter()
        .filter(|b| named.is_none_or(|n| n == b.name))
        .filter_map(|b| Some((b.name, b.keys.iter().find(|k| k.name == key)?.name)))
        .collect();
    match owners.as_slice() {
        &[(allocator, key)] => Ok(Try {
            allocator,
            key,
            values,
        }),
        [] => Err(TuneError::TryUnknownKey {
            text: text.to_string(),
            key: key.to_string(),
            keys: tunable_keys(allocators),
        }
        .into()),
        many => Err(TuneError::TryAmbiguousKey {
            text: text.to_string(),
            key: key.to_string(),
            owners: many.iter().map(|&(allocator, _)| allocator).collect(),
        }
        .into()),
    }
}

/// `glibc:arena_max, glibc:trim, jemalloc:narenas, ...`: for messages.
fn tunable_keys(allocators: &[&'static Builtin]) -> String {
    let keys: Vec<String> = allocators
        .iter()
        .flat_map(|b| {
            b.keys
                .iter()
                .filter(|k| !k.tries.is_empty())
                .map(move |k| format!("{}:{}", b.name, k.name))
        })
        .collect();
    keys.join(", ")
}

/// Every candidate, in table order: per allocator its plain configuration,
/// then each key's values worth trying, then the user's values for its keys
/// (a value already listed is not repeated).
pub fn candidates(allocators: &[&'static Builtin], tries: &[Try]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for b in allocators {
        out.push(Candidate::plain(b.name));
        for key in b.keys {
            for value in key.tries {
                out.push(Candidate::one(b.name, key.name, value));
            }
        }
        for t in tries.iter().filter(|t| t.allocator == b.name) {
            for value in &t.values {
                let c = Candidate::one(b.name, t.key, value);
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<&'static Builtin> {
        allocators(&[], &|_| true).expect("built-ins")
    }

    #[test]
    fn at_least_twenty_candidates_by_default_across_the_four_allocators() {
        let c = candidates(&all(), &[]);
        // Besides the baseline (glibc's plain configuration).
        assert!(c.len() > 20, "{}", c.len());
        for name in ["glibc", "jemalloc", "tcmalloc", "mimalloc"] {
            assert!(
                c.iter().filter(|c| c.allocator == name).count() >= 2,
                "{name}"
            );
        }
        let specs: Vec<String> = c.iter().map(Candidate::spec).collect();
        for spec in [
            "glibc",
            "glibc:arena_max=1",
            "glibc:arena_max=8",
            "glibc:trim=1s",
            "glibc:mmap_threshold=64k",
            "jemalloc:narenas=1",
            "jemalloc:dirty_decay_ms=0",
            "jemalloc:background_thread=true",
            "tcmalloc:release_rate=10",
            "mimalloc:decommit_delay=0",
        ] {
            assert!(specs.iter().any(|s| s == spec), "{spec} in {specs:?}");
        }
        let mut unique = specs.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), specs.len());
    }

    #[test]
    fn every_default_value_is_one_its_key_accepts() {
        for c in candidates(&all(), &[]) {
            let b = allocscope_core::alloc::known::builtin(c.allocator).expect("built-in");
            for (key, value) in &c.settings {
                let k = allocscope_core::alloc::keys::find(b.keys, key).expect("key");
                let style = allocscope_core::alloc::keys::BoolStyle::Digit;
                assert!(
                    allocscope_core::alloc::keys::convert(b.name, &k, value, style).is_ok(),
                    "{}",
                    c.spec()
                );
            }
        }
    }

    #[test]
    fn restricting_and_installed_allocators_narrow_the_candidates() {
        let only = allocators(&["jemalloc".into()], &|_| true).expect("jemalloc");
        let c = candidates(&only, &[]);
        assert!(c.iter().all(|c| c.allocator == "jemalloc"), "{c:?}");
        let without_tcmalloc = allocators(&[], &|n| n != "tcmalloc").expect("some");
        assert!(without_tcmalloc.iter().all(|b| b.name != "tcmalloc"));
        let err = allocators(&["glibc:arena_max=2".into()], &|_| true);
        assert!(err.is_err_and(|e| e.to_string().contains("--try")));
        let err = allocators(&["hoard".into()], &|_| true);
        assert!(err.is_err_and(|e| e.to_string().contains("not a built-in")));
    }

    #[test]
    fn user_values_join_their_key_and_bad_keys_are_one_line_errors() {
        let alloc = all();
        let t = parse_try("arena_max=3,2,6", &alloc).expect("glibc key");
        assert_eq!((t.allocator, t.key), ("glibc", "arena_max"));
        let specs: Vec<String> = candidates(&alloc, &[t])
            .iter()
            .map(Candidate::spec)
            .collect();
        assert!(specs.contains(&"glibc:arena_max=3".to_string()));
        assert_eq!(
            specs.iter().filter(|s| *s == "glibc:arena_max=2").count(),
            1
        );
        let t = parse_try("jemalloc:narenas=2", &alloc).expect("named");
        assert_eq!(t.allocator, "jemalloc");
        for (text, words) in [
            ("nokey=1", "no allocator tuned here has a key 'nokey'"),
            ("tcache_max=64k", "name the allocator"),
            ("arena_max", "no '='"),
            ("arena_max=", "no values"),
            ("mimalloc:arena_max=2", "no allocator tuned here"),
        ] {
            let err = parse_try(text, &alloc).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(words), "{text}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
}
