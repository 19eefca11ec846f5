//! The verdict's part of the JSON document: its sentences under the keys
//! they always had (`reason`, `explanation`, the kept limit's `words`, the
//! cause's `lines`, the deploy snippets with their limit comment), and
//! beside them the same as data (`reason_data`, `explanation_data`: each a
//! `code` with its figures; the limits' `memory_limit`; the cause's
//! `configs` and `difference`).
//! Key names are a public interface: add keys, never rename them.

use super::cause_words::lines;
use super::verdict_words::{deploy_snippets, explanation, kept_words, reason};
use allocscope_analyze::cause::Cause;
use allocscope_analyze::limit::LimitNeed;
use allocscope_analyze::verdict::{Deploy, LimitLines, Outcome, Verdict};
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct VerdictOut<'a> {
    outcome: Outcome,
    config: Option<&'a str>,
    reason: String,
    explanation: Vec<String>,
    #[serde(flatten)]
    data: &'a Verdict,
    deploy: Option<Deploy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kept_limit: Option<KeptOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<CauseOut<'a>>,
}

/// `analyze::deploy::KeptLimit` with its sentence and its lines.
#[derive(Serialize)]
struct KeptOut<'a> {
    config: &'a str,
    memory_limit_bytes: u64,
    words: String,
    memory_limit: &'a LimitNeed,
    #[serde(flatten)]
    lines: LimitLines,
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
            deploy: v.deploy.as_ref().map(deploy_snippets),
            kept_limit: v.kept_limit.as_ref().map(|kept| KeptOut {
                config: &kept.config,
                memory_limit_bytes: kept.memory_limit.bytes,
                words: kept_words(kept),
                memory_limit: &kept.memory_limit,
                lines: LimitLines::of(&kept.memory_limit),
            }),
            cause: v.cause.as_ref().map(|cause| CauseOut {
                cause,
                lines: lines(cause),
            }),
        }
    }
}
