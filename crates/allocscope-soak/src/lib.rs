//! The statistics over time of `allocscope soak`, which runs allocator
//! configurations side by side for hours, R replicas each: per instance the
//! plateau, the growth rate with a robust 95% interval and whether it has
//! settled, the live heap's and the allocator's free memory's growth apart;
//! per configuration the replicas combined, the plateau's ratio to the
//! baseline's, projections to a day and a week, and the verdict. The
//! statistics are pure functions over `(t_s, value)` series in time order,
//! with no I/O (docs/statistics.md, "Growth over time", has the methods and
//! their coverage); only `launch.rs`, `watched.rs` and `watch.rs` start
//! processes, read /proc and write the store.
//!
//! Files, each using only those before it: `warmup.rs` (where the warm-up
//! ends, MSER-5), `period.rs` (whether a series repeats), `window.rs` (the
//! segment after a restart, the growth window after the warm-up),
//! `theil_sen.rs` (the slope and Sen's
//! interval), `blocks.rs` (thinning to independent block medians),
//! `growth.rs` (growth rates, settled, time to settle), `level.rs` (the
//! plateau), `projection.rs`,
//! `instance.rs`, `config.rs`, `verdict.rs` (the verdict as data) and
//! `render.rs` (the verdict in sentences), `verdict_json.rs` (the verdict as
//! JSON data). The command: `error.rs` (the
//! user's mistakes with its arguments), `label.rs` (a `--pid` label checked
//! against the allocator the process maps), `launch.rs` (an instance of
//! `-- COMMAND` started), `watched.rs` (one instance followed: its tick,
//! series, ending, restarts), `watch.rs` (the one loop that samples and
//! stores them all), `progress.rs` (the block shown while it runs) and
//! `live.rs` (that block and `--html`'s page renewed), `job.rs` (an
//! instance run as a cluster job: what its node sends back), `canary.rs`
//! (the report). `simulate.rs` (series of known shape) and `corpus.rs` (the
//! labelled corpus they make, judged as `--until settled` judges, for the
//! tests and the `soak_corpus` bench). `report --soak`:
//! `stored.rs` (a soak read back from the store), `figures.rs` (its rows),
//! `export.rs` (Markdown, JSON, CSV) and `page.rs` (HTML).

pub mod blocks;
pub mod canary;
pub mod config;
pub mod corpus;
pub mod error;
pub mod export;
pub mod figures;
pub mod growth;
pub mod instance;
pub mod job;
pub mod label;
pub mod launch;
pub mod level;
pub mod live;
pub mod load_figures;
pub mod page;
pub mod period;
pub mod progress;
pub mod projection;
pub mod render;
pub mod simulate;
pub mod stored;
pub mod theil_sen;
pub mod verdict;
pub mod verdict_json;
pub mod warmup;
pub mod watch;
pub mod watched;
pub mod window;

#[cfg(test)]
mod config_coverage_tests;
#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod coverage_tests;
#[cfg(test)]
mod export_tests;
#[cfg(test)]
mod settle_time_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod verdict_tests;
