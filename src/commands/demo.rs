//! `allocscope demo`: `compare` with the default configurations on a built-in
//! scenario, so a newcomer sees the point without a program of their own.
//! Each scenario's settings come from `options::demo`, built as `compare`
//! builds its own.

use crate::options::demo::DemoSettings;
use std::path::Path;

pub fn demo(settings: &DemoSettings) -> anyhow::Result<i32> {
    let program = std::env::current_exe()?;
    let registry = allocscope_core::alloc::Registry::discover();
    std::fs::create_dir_all(&settings.out)?;
    let mut worst = 0;
    for scenario in &settings.scenarios {
        let compare = settings.compare(scenario, &program, &registry)?;
        eprintln!(
            "\nallocscope demo: scenario '{}' models {}\n",
            scenario.name, scenario.models
        );
        let code = super::compare::compare(&compare)?;
        let file = |ext| shown(&settings.file(scenario, ext));
        let models = format!("scenario '{}' models {}", scenario.name, scenario.models);
        let mut lines = vec![String::new()];
        lines.extend(allocscope_report::format::hanging(&models, 98, ""));
        lines.push(format!("store: {}", shown(&settings.db)));
        lines.push(format!("exports: {}, {}", file("json"), file("csv")));
        lines.push(format!("HTML report: {}", file("html")));
        lines.push(format!(
            "re-render: allocscope report --db {}",
            shown(&settings.db)
        ));
        allocscope_report::reporter::print(&(lines.join("\n") + "\n"))?;
        if code >= 128 {
            return Ok(code);
        }
        worst = worst.max(code);
    }
    Ok(worst)
}

fn shown(path: &Path) -> String {
    path.canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}
