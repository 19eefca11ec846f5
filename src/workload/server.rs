//! `server` scenario (being written).

#[derive(Debug, clap::Args)]
pub struct ServerArgs {}

pub fn run(_args: &ServerArgs) -> anyhow::Result<i32> {
    anyhow::bail!("the server scenario is not built yet")
}
