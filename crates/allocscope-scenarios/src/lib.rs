//! Built-in scenarios, run as ordinary processes (`allocscope workload NAME`)
//! so that any allocator can be preloaded into them. Each models the
//! allocation pattern of one reported case (docs/scenarios.md). They allocate
//! through the C allocator (Rust's default global allocator is the system
//! malloc), so LD_PRELOAD reaches them. They report progress with marker
//! lines `allocscope:mark LABEL` on stdout.

mod churn;
mod events;
mod grow;
mod knob;
mod kv;
mod marker;
mod rng;
mod server;
mod server_app;
mod server_http;

pub use marker::mark;
pub use rng::Rng;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum Scenario {
    /// The RocksDB-based service: many threads, cross-thread frees, a rotating hot set.
    Churn(churn::ChurnArgs),
    /// The physics reconstruction job: events of widely varying memory need.
    Events(events::EventsArgs),
    /// The long-running service: memory grows a step at a time, into new glibc arenas or a leak.
    Grow(grow::GrowArgs),
    /// The key-value server: items inserted into a hash table, memory per item count.
    Kv(kv::KvArgs),
    /// The threaded web app: an HTTP/1.1 server on 127.0.0.1 allocating per request.
    Server(server::ServerArgs),
}

impl Scenario {
    pub fn run(&self) -> anyhow::Result<i32> {
        match self {
            Scenario::Churn(args) => churn::run(args),
            Scenario::Events(args) => events::run(args),
            Scenario::Grow(args) => grow::run(args),
            Scenario::Kv(args) => kv::run(args),
            Scenario::Server(args) => server::run(args),
        }
    }
}

/// A scenario's knobs parsed from `extra`, for the scenarios' unit tests.
#[cfg(test)]
pub(crate) fn parse_knobs<T: clap::Args + clap::FromArgMatches>(
    name: &'static str,
    extra: &[&str],
) -> T {
    let command = T::augment_args(clap::Command::new(name));
    let matches = command
        .try_get_matches_from(std::iter::once(name).chain(extra.iter().copied()))
        .unwrap_or_else(|e| panic!("{name} {extra:?}: {e}"));
    T::from_arg_matches(&matches).unwrap_or_else(|e| panic!("{name} {extra:?}: {e}"))
}
