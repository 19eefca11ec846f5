//! `cell`'s checks (its own flags are clap's, `cli::CellArgs`): the
//! `compare` settings of a cluster plan, its arguments parsed and checked on
//! this node exactly as a local `compare` would check them, against this
//! node's allocators; and the plan's configurations a round runs
//! (`--configs`, for a round of an adaptive plan after the rounds before
//! dropped some).

use super::compare::{compare_args, CompareSettings};
use allocscope_cluster::error::ClusterError;
use allocscope_core::usage_error::UsageError;
use std::path::Path;

/// The round's configurations: `--configs` checked against the plan (each
/// index one of its configurations, which this node must resolve to the
/// same names in the same order, since the indices name them), or every one.
pub fn round_configs(
    chosen: Option<&[usize]>,
    plan_configs: &[String],
    resolved: &[String],
) -> Result<Vec<usize>, UsageError> {
    let Some(chosen) = chosen else {
        return Ok((0..resolved.len()).collect());
    };
    if plan_configs != resolved {
        return Err(ClusterError::ConfigsDiffer {
            plan: plan_configs.to_vec(),
            resolved: resolved.to_vec(),
        }
        .into());
    }
    match chosen.iter().find(|&&i| i >= plan_configs.len()) {
        Some(&index) => Err(ClusterError::ConfigOutside {
            index,
            count: plan_configs.len(),
        }
        .into()),
        None => Ok(chosen.to_vec()),
    }
}

/// The settings of the `compare` arguments a plan (read from `plan`) keeps.
pub fn plan_settings(
    plan: &Path,
    args: &[String],
    registry: &allocscope_core::alloc::Registry,
) -> Result<CompareSettings, UsageError> {
    let args =
        compare_args(args.iter().map(Into::into)).map_err(|e| ClusterError::PlanArguments {
            path: plan.into(),
            reason: e.kind().to_string(),
        })?;
    CompareSettings::from_args(&args, registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn configs_are_distinct_indices_kept_in_the_plans_order() {
        use crate::cli::values::parse_indices;
        assert_eq!(
            parse_indices("5, 0,3").ok().map(|i| i.0),
            Some(vec![0, 3, 5])
        );
        for bad in ["", "1,x", "-1", "2,2"] {
            let error = parse_indices(bad).err().map(|e| e.to_string());
            assert!(
                error
                    .as_deref()
                    .is_some_and(|e| e.contains("--configs 0,3,5")),
                "{bad}: {error:?}"
            );
        }
    }

    #[test]
    fn a_round_runs_the_chosen_configurations_of_a_plan_this_node_resolves_alike() {
        let plan = names(&["glibc", "glibc:arena_max=2", "jemalloc"]);
        assert_eq!(round_configs(None, &plan, &plan).ok(), Some(vec![0, 1, 2]));
        assert_eq!(
            round_configs(Some(&[0, 2]), &plan, &plan).ok(),
            Some(vec![0, 2])
        );
        let outside = round_configs(Some(&[3]), &plan, &plan).err();
        assert!(outside.is_some_and(|e| e.to_string().contains("the plan has 3 (0 to 2)")));
        let other = names(&["glibc", "jemalloc", "glibc:arena_max=2"]);
        let differ = round_configs(Some(&[1]), &plan, &other).err();
        assert!(differ.is_some_and(|e| e.to_string().contains("same allocators")));
    }
}
