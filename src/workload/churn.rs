//! `churn` scenario (being written).

#[derive(Debug, clap::Args)]
pub struct ChurnArgs {}

pub fn run(_args: &ChurnArgs) -> anyhow::Result<i32> {
    anyhow::bail!("the churn scenario is not built yet")
}
