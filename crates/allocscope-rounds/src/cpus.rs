//! `--cpus N` for one experiment, set up once: each configuration's launch
//! environment as on N CPUs (`alloc::cpus`), the CPUs to pin the workload to
//! when this machine has N to give (`run::CpuPin`), and what was emulated,
//! for the host record and the opening lines.

use allocscope_core::model::{Config, CpuEmulation};
use allocscope_core::run::CpuPin;

pub(crate) struct CpuSetup {
    /// What each configuration is launched with, in configuration order.
    pub launch_configs: Vec<Config>,
    pub pin: Option<CpuPin>,
    /// `None` without `--cpus`.
    pub emulation: Option<CpuEmulation>,
}

pub(crate) fn setup(configs: &[Config], cpus: Option<u32>) -> anyhow::Result<CpuSetup> {
    let Some(n) = cpus else {
        return Ok(CpuSetup {
            launch_configs: configs.to_vec(),
            pin: None,
            emulation: None,
        });
    };
    let (launch_configs, sizings) = configs
        .iter()
        .map(|c| allocscope_core::alloc::cpus::size_for(c, n))
        .unzip();
    let pin = CpuPin::first(n)?;
    Ok(CpuSetup {
        launch_configs,
        emulation: Some(CpuEmulation {
            cpus: n,
            pinned: pin.is_some(),
            configs: sizings,
        }),
        pin,
    })
}
