//! A scenario's knob out of its range: the message names the knob, its
//! range and the value given. It reaches `main` as a usage error (exit 2)
//! through `FeatureError`.

use allocscope_core::usage_error::FeatureError;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum KnobError {
    #[error("{knob} must be in {low}..={high} (got {value})")]
    OutOfRange {
        knob: &'static str,
        low: u64,
        high: u64,
        value: u64,
    },
    /// Out of a range whose top is another knob (`bound`).
    #[error("{knob} must be in {low}..={high} ({bound}); got {value}")]
    BeyondKnob {
        knob: &'static str,
        low: u64,
        high: u64,
        bound: &'static str,
        value: u64,
    },
    #[error("--marks must each be in 0..={items} (--items); got {mark}")]
    MarkBeyondItems { items: u64, mark: u64 },
    #[error("--worker-index must be in 0..{procs} (--procs); got {index}")]
    WorkerIndex { procs: u32, index: u32 },
    #[error("--ops must be at least --threads x --rotations = {least} (got {ops})")]
    TooFewOps { least: u64, ops: u64 },
    #[error("--seconds must be a number >= 0 (0: no limit); got {0}")]
    Seconds(f64),
}

/// Each `(knob, value, low, high)` with `value` in `low..=high`, else the
/// first that is not.
pub(crate) fn in_ranges(checks: &[(&'static str, u64, u64, u64)]) -> Result<(), KnobError> {
    match checks
        .iter()
        .find(|(_, value, low, high)| !(low..=high).contains(&value))
    {
        Some(&(knob, value, low, high)) => Err(KnobError::OutOfRange {
            knob,
            low,
            high,
            value,
        }),
        None => Ok(()),
    }
}

impl FeatureError for KnobError {}
