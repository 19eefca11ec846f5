//! `report --section runs`'s table of what ran beside each run: its wall
//! and tree CPU time, the foreign CPU the machine spent outside allocscope
//! and the tree (in cores), the time tasks waited for a CPU, and whether
//! the run counts as disturbed (`analyze::disturbed`). Left out when no run
//! measured foreign CPU (a file stored before schema 17).

use allocscope_analyze::disturbed::{foreign_cores, Rule};
use allocscope_analyze::types::Analysis;
use allocscope_core::units::format_seconds;
use anyhow::Result;
use std::fmt::Write as _;

pub(super) fn foreign_block(out: &mut String, analysis: &Analysis, width: usize) -> Result<()> {
    let e = &analysis.experiment;
    let Some(rule) = Rule::of(e) else {
        return Ok(());
    };
    let rows: Vec<Vec<String>> = e
        .configs
        .iter()
        .flat_map(|c| c.runs.iter().map(move |r| (&c.config.name, &r.record)))
        .map(|(name, r)| {
            vec![
                format!("{name} #{}", r.index),
                format_seconds(r.wall_s),
                format_seconds(r.user_s + r.sys_s),
                foreign_cores(r).map_or("-".into(), |c| format!("{c:.2}")),
                r.cpu_pressure_s.map_or("-".into(), format_seconds),
                if rule.is_disturbed(r) {
                    "disturbed"
                } else {
                    ""
                }
                .into(),
            ]
        })
        .collect();
    let width = rows
        .iter()
        .map(|r| r[0].chars().count())
        .fold(width, usize::max);
    let heads = [
        "beside each run",
        "wall",
        "tree CPU",
        "foreign cores",
        "CPU waits",
        "",
    ];
    writeln!(out)?;
    super::section::terminal(out, width, &heads, &rows, |k| (1..=4).contains(&k))?;
    writeln!(
        out,
        "foreign cores: CPU the machine ran outside allocscope and the tree, per second of the \
         run;\n  disturbed: over {:.2} (the typical {:.2} + {:.2}). CPU waits: time some task \
         waited for a CPU.",
        rule.limit_cores(),
        rule.typical_cores,
        rule.excess_cores()
    )?;
    Ok(())
}
