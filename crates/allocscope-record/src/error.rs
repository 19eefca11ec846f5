//! The user's mistakes in `record`'s arguments (`--pid`, `--duration`, the command) and
//! in `--metrics`, each message naming the fix. They reach `main` as usage
//! errors (exit 2) through `FeatureError`.

use allocscope_core::usage_error::FeatureError;
use std::net::SocketAddr;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RecordError {
    #[error("nothing to record; give --pid PID, or a command after `--` (e.g. allocscope record -a glibc -- ./server)")]
    NothingToRecord,
    #[error("--pid '{0}' is not a process id; give a positive number (see `pgrep NAME`)")]
    NotAPid(String),
    #[error("--pid {0} is allocscope itself; give the pid of the program to record")]
    PidIsSelf(i32),
    #[error("no process {0}: it does not exist or has already exited (see `pgrep NAME`)")]
    NoProcess(i32),
    #[error("process {0} has already exited (it is a zombie waiting for its parent)")]
    Zombie(i32),
    #[error("process {pid} belongs to uid {owner} and allocscope runs as uid {me}, which may not read its memory; run allocscope as that user (or as root)")]
    NotPermitted { pid: i32, owner: String, me: u32 },
    #[error("cannot read the memory of process {pid} ({path}: {reason})")]
    Unreadable {
        pid: i32,
        path: String,
        reason: String,
    },
    #[error("--duration '{0}' is not a duration of at least 10ms; use e.g. 30s, 2h or 7d")]
    Duration(String),
    #[error("--metrics '{0}' is not ADDR:PORT; use e.g. --metrics 127.0.0.1:9464")]
    NotAnAddress(String),
    #[error(
        "--metrics {0} would serve this host's memory figures beyond this machine; add --metrics-public to allow that, or use 127.0.0.1:{port}",
        port = .0.port()
    )]
    NotLoopback(SocketAddr),
    #[error("--metrics {0} is already in use; stop what listens there or choose another port")]
    AddressInUse(SocketAddr),
    #[error("--metrics {address} cannot be listened on ({reason}); choose another address")]
    CannotListen { address: SocketAddr, reason: String },
}

impl FeatureError for RecordError {}
