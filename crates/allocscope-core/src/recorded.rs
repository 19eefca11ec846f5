//! The plain records of long recordings (`allocscope record`): what is known
//! about one recording, and its memory over time as points that may stand for
//! one raw sample or a rolled-up minute or hour. They flow from the store to
//! the steady-state analysis and the reports; nothing here reads or writes.

use serde::Serialize;

/// What is recorded about one recording; `status` is `incomplete` when the
/// allocscope that wrote it died without finishing it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordingInfo {
    pub id: i64,
    pub name: String,
    /// The `-a` configuration, or `attached` for `record --pid`.
    pub config: String,
    pub command: Option<Vec<String>>,
    pub target_pid: i32,
    pub started_at: String,
    pub interval_ms: u64,
    pub status: String,
    pub finished_at: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub message: Option<String>,
    pub hostname: String,
    /// Seconds from the start to the last stored sample.
    pub elapsed_s: f64,
}

/// The memory of the recorded tree over `[t_s, t_s + span_s)`: one raw
/// sample (`span_s` 0, min = mean = max) or a rolled-up bucket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RecordedPoint {
    pub t_s: f64,
    pub span_s: f64,
    /// Raw samples behind the point.
    pub samples: u64,
    pub rss_min_bytes: u64,
    pub rss_mean_bytes: u64,
    pub rss_max_bytes: u64,
    pub pss_mean_bytes: Option<u64>,
    pub swap_bytes: Option<u64>,
    pub vsz_bytes: u64,
    pub processes: u32,
    pub threads: u32,
    pub minor_faults: u64,
    pub major_faults: u64,
}

/// One recording with its points in time order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recording {
    pub info: RecordingInfo,
    pub points: Vec<RecordedPoint>,
}
