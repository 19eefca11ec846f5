//! The verdict's part of the JSON document: its sentences under the keys
//! they always had (`reason`, `explanation`, the cause's `lines`), and
//! beside them the same as data (`reason_data`, `explanation_data`: each a
//! `code` with its figures; the cause's `configs` and `difference`).
//! Key names are a public interface: add keys, never rename them.

use super::cause_words::lines;
use super::verdict_words::{explanation, reason};
use crate::analyze::cause::Cause;
use crate::analyze::verdict::{Outcome, Verdict};
use serde::Serialize;

#[derive(Serialize)]
pub struct VerdictOut<'a> {
    outcome: Outcome,
    config: Option<&'a str>,
    reason: String,
    explanation: Vec<String>,
    #[serde(flatten)]
    data: &'a Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<CauseOut<'a>>,
}

#[derive(Serialize)]
struct CauseOut<'a> {
    #[serde(flatten)]
    cause: &'a Cause,
    lines: Vec<String>,
}

impl<'a> VerdictOut<'a> {
    pub fn of(v: &'a Verdict) -> Self {
        VerdictOut {
            outcome: v.outcome,
            config: v.config.as_deref(),
            reason: reason(v),
            explanation: explanation(v),
            data: v,
            cause: v.cause.as_ref().map(|cause| CauseOut {
                cause,
                lines: lines(cause),
            }),
        }
    }
}
