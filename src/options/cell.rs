//! `cell`'s arguments checked, and the `compare` settings of a cluster
//! plan: its arguments parsed and checked on this node exactly as a local
//! `compare` would check them, against this node's allocators.

use super::compare::{compare_args, CompareSettings};
use super::parse::parse_count;
use crate::cli::CellArgs;
use crate::usage_error::UsageError;
use std::path::{Path, PathBuf};

/// `cell`, checked.
pub struct CellSettings {
    /// The plan file `compare --executor` wrote.
    pub plan: PathBuf,
    /// Which round, from 0.
    pub round: u32,
    /// The shard to write.
    pub out: PathBuf,
    pub quiet: bool,
}

impl CellSettings {
    pub fn from_args(args: &CellArgs) -> Result<CellSettings, UsageError> {
        Ok(CellSettings {
            plan: args.plan.clone(),
            round: parse_count("--round", &args.round, 0)?,
            out: args.out.clone(),
            quiet: args.quiet,
        })
    }
}

/// The settings of the `compare` arguments a plan (read from `plan`) keeps.
pub fn plan_settings(
    plan: &Path,
    args: &[String],
    registry: &crate::alloc::Registry,
) -> Result<CompareSettings, UsageError> {
    let args = compare_args(args.iter().map(Into::into)).map_err(|e| {
        UsageError::Cluster(format!(
            "plan '{}' has arguments this allocscope does not accept ({}); run the same \
             allocscope version on every node",
            plan.display(),
            e.kind()
        ))
    })?;
    CompareSettings::from_args(&args, registry)
}
