//! `allocscope soak --pid LABEL=PID ...`: the instances checked by
//! `options::soak`, soaked in place by `soak::watch` (nothing started or
//! stopped), then the report and verdict of `soak::canary` printed.

use crate::options::soak::SoakSettings;
use crate::run::Interrupt;
use crate::soak::canary::report;
use crate::soak::verdict::verdict;
use crate::soak::watch::{by_label, summaries, watch, Settings};
use crate::store::Store;
use crate::units::format_seconds;

pub fn soak(options: SoakSettings) -> anyhow::Result<i32> {
    let interrupt = Interrupt::install()?;
    let mut store = Store::open(&options.db)?;
    if !options.quiet {
        let given: Vec<String> = options
            .instances
            .iter()
            .map(|a| format!("{}={}", a.label, a.pid))
            .collect();
        eprintln!(
            "allocscope: soaking {} every {} into {}; Ctrl-C stops and keeps everything",
            given.join(", "),
            format_seconds(options.interval.as_secs_f64()),
            options.db.display()
        );
    }
    let settings = Settings {
        interval: options.interval,
        duration: options.duration,
        until_settled: options.until_settled,
    };
    let soaked = watch(&mut store, &options.instances, &settings, &interrupt)?;
    let summaries = summaries(&soaked.instances);
    let judged = by_label(&soaked.instances, &summaries)
        .and_then(|configs| verdict(&configs, soaked.elapsed_s));
    print!("{}", report(&soaked.instances, judged.as_ref()));
    if !options.quiet {
        let ids: Vec<String> = soaked
            .instances
            .iter()
            .map(|w| w.recording.to_string())
            .collect();
        eprintln!(
            "allocscope: soak {} after {}, sampler CPU {}; `allocscope report --recordings {}` \
             shows the instances",
            soaked.status,
            format_seconds(soaked.elapsed_s),
            format_seconds(soaked.sampler_cpu_s),
            ids.join(" ")
        );
    }
    Ok(0)
}
