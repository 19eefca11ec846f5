//! `allocscope tune`'s pure logic: the candidates (`candidates.rs`), the
//! early rounds' successive halving (`halving.rs`), the race's level and
//! reasons for dropping a candidate (`race.rs`), the
//! combinations of settings that helped on their own (`combine.rs`), the
//! Pareto front of memory against performance (`pareto.rs`), `--perf-metric
//! auto`'s figure kept through the race (`perf.rs`), what the store
//! keeps of a race (`record.rs`), its text (`render.rs`) and the user's
//! mistakes in its flags (`error.rs`). The command
//! that runs it is `commands::tune`.

pub mod candidates;
pub mod combine;
pub mod error;
pub mod halving;
pub mod pareto;
pub mod perf;
pub mod race;
pub mod record;
pub mod render;
#[cfg(test)]
mod test_fixture;
