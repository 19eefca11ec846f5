//! `kv` scenario (being written).

#[derive(Debug, clap::Args)]
pub struct KvArgs {}

pub fn run(_args: &KvArgs) -> anyhow::Result<i32> {
    anyhow::bail!("the kv scenario is not built yet")
}
