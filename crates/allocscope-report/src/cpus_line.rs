//! What `--cpus N` emulated, in words, for the host line of every
//! human-readable report and for `compare`'s opening lines: each
//! configuration's CPU-derived setting (given as on N CPUs, or its own
//! kept), the allocators that size nothing by the CPU count, and whether
//! the runs had N CPUs or only the sizing was emulated. A leaf: it imports
//! no sibling.

use allocscope_core::model::{CpuEmulation, CpuSizingAction};

/// `as on 16 CPUs (glibc arena_max=128; glibc:arena_max=2 keeps its own
/// arena_max=2; tcmalloc, mimalloc size nothing by the CPU count); only the
/// allocators' sizing is emulated, not CPU contention: the runs had this
/// machine's 2 CPUs`.
pub fn cpus_line(e: &CpuEmulation, machine_cpus: u32) -> String {
    let mut parts: Vec<String> = Vec::new();
    let named = |action| {
        e.configs
            .iter()
            .filter(move |s| s.action == action)
            .map(|s| s.config.as_str())
            .collect::<Vec<_>>()
    };
    for s in &e.configs {
        let setting = s.setting.as_deref().unwrap_or_default();
        match s.action {
            CpuSizingAction::Set => parts.push(format!("{} {setting}", s.config)),
            CpuSizingAction::Kept => {
                parts.push(format!("{} keeps its own {setting}", s.config));
            }
            CpuSizingAction::None | CpuSizingAction::Unknown => {}
        }
    }
    let none = named(CpuSizingAction::None);
    if !none.is_empty() {
        parts.push(format!("{} size nothing by the CPU count", none.join(", ")));
    }
    let unknown = named(CpuSizingAction::Unknown);
    if !unknown.is_empty() {
        parts.push(format!(
            "{}: what a user library derives from the CPU count is not known",
            unknown.join(", ")
        ));
    }
    let n = e.cpus;
    let how = if e.pinned {
        format!("the runs were pinned to {n} of this machine's {machine_cpus} CPUs")
    } else {
        format!(
            "only the allocators' sizing is emulated, not CPU contention: the runs had this \
             machine's {machine_cpus} CPUs"
        )
    };
    let cpus = if n == 1 { "CPU" } else { "CPUs" };
    format!("as on {n} {cpus} ({}); {how}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::model::CpuSizing;

    fn sizing(config: &str, action: CpuSizingAction, setting: Option<&str>) -> CpuSizing {
        CpuSizing {
            config: config.into(),
            action,
            setting: setting.map(str::to_string),
        }
    }

    #[test]
    fn says_what_was_set_kept_and_left_and_whether_contention_was_real() {
        let mut e = CpuEmulation {
            cpus: 16,
            pinned: false,
            configs: vec![
                sizing("glibc", CpuSizingAction::Set, Some("arena_max=128")),
                sizing(
                    "glibc:arena_max=2",
                    CpuSizingAction::Kept,
                    Some("arena_max=2"),
                ),
                sizing("tcmalloc", CpuSizingAction::None, None),
                sizing("mimalloc", CpuSizingAction::None, None),
                sizing("mine", CpuSizingAction::Unknown, None),
            ],
        };
        let line = cpus_line(&e, 2);
        assert_eq!(
            line,
            "as on 16 CPUs (glibc arena_max=128; glibc:arena_max=2 keeps its own arena_max=2; \
             tcmalloc, mimalloc size nothing by the CPU count; mine: what a user library \
             derives from the CPU count is not known); only the allocators' sizing is \
             emulated, not CPU contention: the runs had this machine's 2 CPUs"
        );
        e.cpus = 1;
        e.pinned = true;
        e.configs.truncate(1);
        assert_eq!(
            cpus_line(&e, 2),
            "as on 1 CPU (glibc arena_max=128); the runs were pinned to 1 of this machine's 2 CPUs"
        );
    }

    #[test]
    fn every_report_shows_what_was_emulated_beside_the_host() -> anyhow::Result<()> {
        use crate::{HtmlReporter, JsonReporter, MarkdownReporter, Reporter, TableReporter};
        let mut experiment = allocscope_core::fixture::experiment();
        experiment.info.host.cpus_emulated = Some(CpuEmulation {
            cpus: 16,
            pinned: false,
            configs: vec![sizing("glibc", CpuSizingAction::Set, Some("arena_max=128"))],
        });
        let analysis = allocscope_analyze::analyze(experiment, "glibc")?;
        let render = |r: &dyn Reporter| -> anyhow::Result<String> {
            Ok(String::from_utf8(r.render(&analysis)?)?)
        };
        let table = render(&TableReporter)?;
        assert!(
            table.contains("host emulated: --cpus 16, as on 16 CPUs (glibc arena_max=128); only"),
            "{table}"
        );
        let markdown = render(&MarkdownReporter)?;
        assert!(
            markdown.contains("Host emulated with `--cpus 16`: as on 16 CPUs"),
            "{markdown}"
        );
        let html = render(&HtmlReporter)?;
        assert!(
            html.contains("<dt>host emulated</dt><dd><code>--cpus 16</code>, as on 16"),
            "{html}"
        );
        let json: serde_json::Value = serde_json::from_str(&render(&JsonReporter {
            include_samples: false,
        })?)?;
        let emulated = &json["experiment"]["host"]["cpus_emulated"];
        assert_eq!(emulated["cpus"], 16, "{json}");
        assert_eq!(emulated["pinned"], false);
        assert_eq!(emulated["configs"][0]["action"], "set");
        assert_eq!(emulated["configs"][0]["setting"], "arena_max=128");
        Ok(())
    }
}
