//! What `record` follows: a running process, or a command it starts.

use allocscope_core::model::Config;
use std::ffi::OsString;
use std::path::PathBuf;

/// What to record, checked.
pub enum Target {
    /// A running process that allocscope may read: its pid and start time
    /// (clock ticks after boot), which name one process even after the pid
    /// is reused.
    Attach { pid: i32, start_ticks: u64 },
    /// A command to start under `config`.
    Launch {
        program: PathBuf,
        args: Vec<OsString>,
        config: Box<Config>,
        /// Where the command's stdout and stderr go.
        logs_dir: PathBuf,
    },
}
