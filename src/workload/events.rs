//! `events` scenario (being written).

#[derive(Debug, clap::Args)]
pub struct EventsArgs {}

pub fn run(_args: &EventsArgs) -> anyhow::Result<i32> {
    anyhow::bail!("the events scenario is not built yet")
}
