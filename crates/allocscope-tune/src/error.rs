//! The user's mistakes in `tune`'s own flags (`-a`, `--try`, `--runs`,
//! `--variant`), each message naming the fix. They reach `main` as usage
//! errors (exit 2) through `FeatureError`.

use allocscope_core::usage_error::FeatureError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TuneError {
    #[error("tune -a takes an allocator name, not '{0}'; give values to try with --try KEY=V1,V2 (e.g. -a glibc --try arena_max=3,6)")]
    NotAName(String),
    #[error("tune -a '{name}' is not a built-in allocator; use one of {builtins}")]
    NotBuiltin { name: String, builtins: String },
    #[error("--try '{0}': no '='; write KEY=V1,V2, e.g. --try arena_max=3,6")]
    TryWithoutEquals(String),
    #[error("--try '{0}': no values; write KEY=V1,V2, e.g. --try arena_max=3,6")]
    TryWithoutValues(String),
    #[error("--try '{text}': no allocator tuned here has a key '{key}'; keys with values worth trying: {keys}")]
    TryUnknownKey {
        text: String,
        key: String,
        keys: String,
    },
    #[error(
        "--try '{text}': '{key}' is a key of {}; name the allocator, e.g. --try {}:{key}=...",
        .owners.join(" and "),
        .owners[0]
    )]
    TryAmbiguousKey {
        text: String,
        key: String,
        owners: Vec<&'static str>,
    },
    #[error("tune races its candidates round by round and takes no --runs '{0}'; bound it with --max-runs N (rounds per phase) or --max-time DUR")]
    FixedRuns(String),
    #[error("tune races an allocator's settings on one build; compare builds with allocscope compare --variant LABEL=COMMAND")]
    Variants,
}

impl FeatureError for TuneError {}
