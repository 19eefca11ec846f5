//! The `-a/--alloc` grammar: `NAME[:key=value[,key=value...]]` or
//! `LABEL=/path/to/lib.so[:key=value...]`. Parsing yields a `Spec` (syntax
//! only); `build` turns a spec plus what discovery found into the launch
//! environment of a `model::Config`.
//!
//! The spec splits at its first ':' so that `env.NAME=value` values may hold
//! further ':' (e.g. a PATH-like list); values cannot hold ','.

use super::error::AllocError;
use super::keys::{self, BoolStyle};
use super::known::{Builtin, EnvStyle};
use crate::model::Config;
use std::fmt;
use std::path::Path;

/// Prefix of settings that set an arbitrary environment variable.
pub(crate) const ENV_PREFIX: &str = "env.";

/// What the configuration names: a built-in allocator or a user library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `NAME`: not yet checked against the built-in table.
    Named(String),
    /// `LABEL=/path/to/lib.so`.
    Library { label: String, path: String },
}

/// A parsed `-a` value, before any lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub target: Target,
    /// `key=value` pairs in the order given; keys are unique.
    pub settings: Vec<(String, String)>,
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Named(name) => write!(f, "{name}")?,
            Target::Library { label, path } => write!(f, "{label}={path}")?,
        }
        for (i, (key, value)) in self.settings.iter().enumerate() {
            let sep = if i == 0 { ':' } else { ',' };
            write!(f, "{sep}{key}={value}")?;
        }
        Ok(())
    }
}

fn is_label(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
}

/// A POSIX-portable environment variable name.
pub(crate) fn is_env_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses the grammar; checks syntax and `env.NAME` names, not allocator keys.
pub fn parse_spec(text: &str) -> Result<Spec, AllocError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AllocError::EmptySpec);
    }
    let (head, tail) = match text.split_once(':') {
        Some((head, tail)) => (head.trim(), Some(tail)),
        None => (text, None),
    };
    let target = match head.split_once('=') {
        Some((label, path)) => {
            let (label, path) = (label.trim(), path.trim());
            if !is_label(label) {
                return Err(AllocError::BadLabel {
                    label: label.to_string(),
                    spec: text.to_string(),
                });
            }
            if path.is_empty() {
                return Err(AllocError::EmptyPath {
                    label: label.to_string(),
                    spec: text.to_string(),
                });
            }
            Target::Library {
                label: label.to_string(),
                path: path.to_string(),
            }
        }
        None if head.is_empty() => {
            return Err(AllocError::UnknownAllocator {
                name: String::new(),
                builtins: super::known::names(),
            })
        }
        None => Target::Named(head.to_string()),
    };
    let mut settings: Vec<(String, String)> = Vec::new();
    // "glibc:" is taken as "glibc": a trailing ':' is harmless.
    for pair in tail
        .filter(|t| !t.trim().is_empty())
        .into_iter()
        .flat_map(|t| t.split(','))
    {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(AllocError::MalformedPair {
                pair: pair.to_string(),
                spec: text.to_string(),
            });
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            return Err(AllocError::EmptyKey {
                pair: pair.to_string(),
                spec: text.to_string(),
            });
        }
        if value.is_empty() {
            return Err(AllocError::EmptyValue {
                key: key.to_string(),
                spec: text.to_string(),
            });
        }
        if let Some(name) = key.strip_prefix(ENV_PREFIX) {
            if !is_env_name(name) {
                return Err(AllocError::BadEnvName {
                    name: name.to_string(),
                });
            }
        }
        if settings.iter().any(|(k, _)| k == key) {
            return Err(AllocError::DuplicateKey {
                key: key.to_string(),
                spec: text.to_string(),
            });
        }
        settings.push((key.to_string(), value.to_string()));
    }
    Ok(Spec { target, settings })
}

/// The allocator's own variables for its converted settings, in the style
/// it reads them.
fn allocator_variables(style: EnvStyle, own: Vec<(String, String)>) -> Vec<(String, String)> {
    match style {
        EnvStyle::GlibcTunables => {
            let joined: Vec<String> = own
                .iter()
                .map(|(k, v)| format!("glibc.malloc.{k}={v}"))
                .collect();
            vec![("GLIBC_TUNABLES".to_string(), joined.join(":"))]
        }
        EnvStyle::MallocConf => {
            let joined: Vec<String> = own.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            vec![("MALLOC_CONF".to_string(), joined.join(","))]
        }
        EnvStyle::Prefixed(prefix) => own
            .into_iter()
            .map(|(k, v)| (format!("{prefix}{}", k.to_ascii_uppercase()), v))
            .collect(),
    }
}

/// Builds the launch environment for a parsed spec.
///
/// `builtin` is `None` for a user library, which accepts only `env.*` keys.
/// `library` is what must be mapped in the workload; it is preloaded unless
/// the allocator is glibc's own (`EnvStyle::GlibcTunables`).
pub fn build(
    typed: &str,
    spec: &Spec,
    allocator: &str,
    builtin: Option<&Builtin>,
    library: Option<&Path>,
    version: Option<String>,
) -> Result<Config, AllocError> {
    let mut env: Vec<(String, String)> = Vec::new();
    let preload = !matches!(builtin.map(|b| b.env), Some(EnvStyle::GlibcTunables));
    if let (true, Some(lib)) = (preload, library) {
        env.push(("LD_PRELOAD".to_string(), lib.display().to_string()));
    }
    let mut own: Vec<(String, String)> = Vec::new();
    let mut extra: Vec<(String, String)> = Vec::new();
    for (key, value) in &spec.settings {
        if let Some(name) = key.strip_prefix(ENV_PREFIX) {
            extra.push((name.to_string(), value.clone()));
            continue;
        }
        let own_thp = builtin.is_some_and(|b| keys::find(b.keys, keys::THP_KEY).is_some());
        if key == keys::THP_KEY && (value == "never" || !own_thp) {
            // Every configuration's key, done by the run (a prctl before
            // exec), not by the allocator.
            extra.push(keys::thp_disable(allocator, value)?);
            continue;
        }
        let Some(b) = builtin else {
            return Err(AllocError::UnknownKey {
                allocator: allocator.to_string(),
                key: key.clone(),
                valid: "thp=never, env.NAME=value (a user library takes no allocator keys)"
                    .to_string(),
            });
        };
        let Some(k) = keys::find(b.keys, key) else {
            return Err(AllocError::UnknownKey {
                allocator: allocator.to_string(),
                key: key.clone(),
                valid: match own_thp {
                    true => format!("{}, env.NAME", keys::key_names(b.keys)),
                    false => format!("{}, thp, env.NAME", keys::key_names(b.keys)),
                },
            });
        };
        let style = match b.env {
            EnvStyle::MallocConf => BoolStyle::Word,
            _ => BoolStyle::Digit,
        };
        let converted = keys::convert(allocator, &k, value, style)?;
        if k.kind == keys::Kind::ProbeTrim {
            // Done by the heap probe, which `probe::plan` loads for it.
            extra.push((keys::PROBE_TRIM_MS_ENV.to_string(), converted));
            continue;
        }
        own.push((key.clone(), converted));
    }
    if let (Some(b), false) = (builtin, own.is_empty()) {
        env.extend(allocator_variables(b.env, own));
    }
    for (name, value) in extra {
        if env.iter().any(|(n, _)| *n == name) {
            return Err(AllocError::EnvConflict {
                name,
                spec: typed.to_string(),
            });
        }
        env.push((name, value));
    }
    Ok(Config {
        name: typed.trim().to_string(),
        allocator: allocator.to_string(),
        library: library.map(Path::to_path_buf),
        version,
        env,
        command: None,
    })
}
