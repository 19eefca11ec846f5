//! The answer on one screen, the default output of `compare`, `tune`,
//! `demo` and `report`: one line of what ran, one table (per configuration
//! the memory and performance measures the verdict judged by, each a value
//! and a ratio with its interval, and where its memory went), the verdict in
//! a few lines (the pick, its saving and cost, the cause said once, who was
//! not chosen and why, the shell's deploy line) and where the rest is.
//! A rendering of the verdict's data, never new judging: the Markdown
//! summary and the HTML card lay out the same `Screen`.

use super::format::{hanging, ratio, ratio_bounds};
use super::reporter::Reporter;
use super::verdict_words::{pct, reason, side_words_of};
use allocscope_analyze::cause::{Cause, WhereWent};
use allocscope_analyze::cause_figures::heap_measured;
use allocscope_analyze::decide::{more_rounds_words, Side, MANY_MORE_ROUNDS};
use allocscope_analyze::types::Analysis;
use allocscope_analyze::verdict::{Figures, Note, Place, Reason, Verdict};
use allocscope_core::model::RunStatus;
use allocscope_core::units::{format_seconds, ColumnUnit, Unit};
use anyhow::Result;
use std::fmt::Write as _;

/// The summary's parts, each already in words.
pub struct Screen {
    /// What ran: the experiment, its configurations, rounds and runs, the
    /// time they took, the host in a few words.
    pub ran: String,
    /// The table's heads and one row per configuration.
    pub heads: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The verdict's lines as (label, sentence): `verdict`, `why`, `not
    /// chosen`, `deploy`.
    pub verdict: Vec<(&'static str, String)>,
    /// The shell's deploy line of the pick, when there is one.
    pub deploy: Option<String>,
    pub warnings: Vec<String>,
}

/// The terminal's one screen; `report` is the command that re-renders this
/// experiment (`allocscope report 7`), for the pointer to the rest.
pub struct ScreenReporter {
    pub report: String,
}

/// Lines are wrapped to fit 100 columns.
const WIDTH: usize = 98;

impl Reporter for ScreenReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let s = Screen::of(analysis);
        let mut out = String::new();
        writeln!(out, "{}\n", hanging(&s.ran, WIDTH, "").join("\n"))?;
        let right = |k: usize| k == 1 || k == 3 || k == 6;
        let width = s.rows.iter().map(|r| r[0].chars().count()).max();
        let (mut heads, mut rows) = (s.heads.clone(), s.rows.clone());
        // Past 100 columns (a service's long measures, wide intervals), the
        // baseline row's `baseline` alone says what the ratios are to; then
        // the arenas go (`--section heap` has them).
        if columns(&heads, &rows) > 100 {
            heads[2] = analysis.verdict.memory.label.clone();
            heads[4] = analysis.verdict.performance.label.clone();
        }
        if columns(&heads, &rows) > 100 {
            heads[6].clear();
            rows.iter_mut().for_each(|r| r[6].clear());
        }
        super::section::terminal(&mut out, width.unwrap_or(0), &heads, &rows, right)?;
        writeln!(out)?;
        for (label, text) in &s.verdict {
            labelled(&mut out, label, text)?;
        }
        if let Some(line) = &s.deploy {
            writeln!(out, "deploy: {line}")?;
            let rest = format!(
                "(systemd, Dockerfile, Kubernetes, memory limit: {} --section deploy)",
                self.report
            );
            writeln!(out, "{}", hanging(&rest, WIDTH, "  ").join("\n"))?;
        }
        for warning in &s.warnings {
            labelled(&mut out, "warning", warning)?;
        }
        writeln!(out, "full report: {} --full", self.report)?;
        let parts = super::part::Section::ALL.map(super::part::Section::name);
        let (one_part, parts) = (
            format!("one part:    {} --section", self.report),
            parts.join("|"),
        );
        // A long --db path puts the parts on a line of their own.
        match one_part.chars().count() + 1 + parts.len() > 100 {
            true => writeln!(out, "{one_part}\n  {parts}")?,
            false => writeln!(out, "{one_part} {parts}")?,
        }
        Ok(out.into_bytes())
    }
}

/// `label: text`, wrapped with its later lines indented by two.
fn labelled(out: &mut String, label: &str, text: &str) -> std::fmt::Result {
    let lines = hanging(&format!("{label}: {text}"), WIDTH, "");
    writeln!(out, "{}", lines.join("\n"))
}

impl Screen {
    pub fn of(a: &Analysis) -> Screen {
        let v = &a.verdict;
        let mut verdict = vec![("verdict", verdict_line(a))];
        verdict.extend(cause_line(v).map(|line| ("why", line)));
        verdict.extend(open_line(v).map(|line| ("open", line)));
        verdict.extend(not_chosen(v).map(|line| ("not chosen", line)));
        verdict.extend(failed_lines(a).into_iter().map(|line| ("failed", line)));
        let (heads, rows) = table(a);
        Screen {
            ran: ran(a),
            heads,
            rows,
            verdict,
            deploy: v.deploy.as_ref().map(|d| d.shell.trim_end().to_string()),
            warnings: a.warnings.clone(),
        }
    }
}

/// `experiment 7 "nightly": 3 configs x 5 rounds, 14/15 ok, 0 disturbed,
/// 23.9 s on 2 CPUs`: the runs ok, and how many runs other work on the
/// machine disturbed (`analyze::disturbed`) where the runs measured it, 0
/// included (which, in a warning below); the host's name, kernel and glibc
/// are in `--section runs`, so the line fits 98 columns for a short name.
fn ran(a: &Analysis) -> String {
    let e = &a.experiment;
    let name = super::table::quoted_name(e);
    let runs = e.configs.iter().flat_map(|c| &c.runs);
    let total = runs.clone().count();
    let ok = runs
        .clone()
        .filter(|r| r.record.status == RunStatus::Ok)
        .count();
    let wall: f64 = runs.map(|r| r.record.wall_s).sum();
    let status = match e.status.as_str() {
        "complete" => String::new(),
        other => format!(" ({other})"),
    };
    let disturbed = allocscope_analyze::disturbed::Disturbance::of(e)
        .map(|d| format!(", {} disturbed", d.runs.len()))
        .unwrap_or_default();
    format!(
        "experiment {}{name}{status}: {} configs x {} rounds, {ok}/{total} ok{disturbed}, {} on \
         {} CPUs",
        e.id,
        e.configs.len(),
        super::columns::runs_each(a, e.info.runs_per_config),
        format_seconds(wall),
        e.info.host.cpus,
    )
}

/// A configuration's name and the indices of some of its runs.
type ConfigRuns<'a> = (&'a str, Vec<u32>);

/// `jemalloc runs 1-3, tcmalloc run 2: exited with code 1; stderr: initdb:
/// cannot write /nonexistent`: the runs not `ok`, one line per distinct
/// reason (`--section runs` lists each run), but for the configurations
/// the verdict already names as failing every run.
fn failed_lines(a: &Analysis) -> Vec<String> {
    let v = &a.verdict;
    let named = |name: &str| {
        let note = v
            .explanation
            .iter()
            .any(|n| matches!(n, Note::EveryRunFailed { config, .. } if config == name));
        note || matches!(&v.reason, Reason::BaselineFailed { baseline, .. } if baseline == name)
    };
    // Each reason, with the configurations' runs it covers, in the order
    // first seen.
    let mut groups: Vec<(String, Vec<ConfigRuns>)> = Vec::new();
    for c in a
        .experiment
        .configs
        .iter()
        .filter(|c| !named(&c.config.name))
    {
        for r in c.runs.iter().map(|r| &r.record) {
            if r.status == RunStatus::Ok {
                continue;
            }
            let why = r
                .failure_words()
                .unwrap_or_else(|| r.status.as_str().to_string());
            let at = match groups.iter().position(|(w, _)| *w == why) {
                Some(at) => at,
                None => {
                    groups.push((why, Vec::new()));
                    groups.len() - 1
                }
            };
            let configs = &mut groups[at].1;
            match configs.iter_mut().find(|(name, _)| *name == c.config.name) {
                Some((_, runs)) => runs.push(r.index),
                None => configs.push((&c.config.name, vec![r.index])),
            }
        }
    }
    let runs_words = |runs: &[u32]| match runs {
        [one] => format!("run {one}"),
        [first, .., last] if runs.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("runs {first}-{last}")
        }
        many => {
            let list: Vec<String> = many.iter().map(u32::to_string).collect();
            format!("runs {}", list.join(", "))
        }
    };
    groups
        .into_iter()
        .map(|(why, configs)| {
            let who: Vec<String> = (configs.iter())
                .map(|(name, runs)| format!("{name} {}", runs_words(runs)))
                .collect();
            format!("{}: {why}", who.join(", "))
        })
        .collect()
}

/// The verdict's memory and performance rows, each a value and a ratio,
/// and where each configuration's memory went.
fn table(a: &Analysis) -> (Vec<String>, Vec<Vec<String>>) {
    let v = &a.verdict;
    let row = |id: &str| a.metrics.iter().position(|m| m.id == id);
    let column = |k: Option<usize>| k.map(|k| super::columns::metric_figures(a, k));
    let (memory, performance) = (column(row(&v.memory.id)), column(row(&v.performance.id)));
    let why = why_column(a);
    // The unit heads its figures, the measure its ratios: the table stays
    // within 100 columns.
    let baseline = &a.experiment.configs[a.baseline].config.name;
    let unit = |f: &Option<Vec<super::columns::Figure>>| {
        let unit = f.as_ref().and_then(|f| f.first()).map(|f| f.unit.name());
        unit.unwrap_or_default().to_string()
    };
    let heads = vec![
        String::new(),
        unit(&memory),
        format!("{} vs {baseline}", v.memory.label),
        unit(&performance),
        format!("{} vs {baseline}", v.performance.label),
        why.head,
        why.arenas_head.to_string(),
    ];
    let cells = |figures: &Option<Vec<super::columns::Figure>>, i: usize| {
        let Some(f) = figures.as_ref().map(|f| f[i]) else {
            return ["-".to_string(), String::new()];
        };
        let value = f
            .estimate
            .map_or("-".to_string(), |e| f.unit.number(e.median));
        let vs = match f.ratio {
            _ if f.baseline => "baseline".to_string(),
            Some(r) => ratio_words(&r),
            None => String::new(),
        };
        [value, vs]
    };
    let rows: Vec<Vec<String>> = (a.experiment.configs.iter().enumerate())
        .map(|(i, c)| {
            let mut row = vec![c.config.name.clone()];
            row.extend(cells(&memory, i));
            row.extend(cells(&performance, i));
            row.extend([why.cells[i].clone(), why.arenas[i].clone()]);
            row
        })
        .collect();
    (heads, rows)
}

/// How wide `section::terminal` lays the table out.
fn columns(heads: &[String], rows: &[Vec<String>]) -> usize {
    let widths = super::section::widths(heads, rows);
    let cells = widths.iter().skip(1).filter(|&&w| w > 0).map(|w| w + 2);
    2 + widths[0] + cells.sum::<usize>()
}

/// The "why" columns: each configuration's median run's live heap and
/// allocator free memory, or without heap figures its largest part, all in
/// one unit; and its arenas where it had more than one.
struct Why {
    head: String,
    cells: Vec<String>,
    arenas_head: &'static str,
    arenas: Vec<String>,
}

fn why_column(a: &Analysis) -> Why {
    let configs = &a.experiment.configs;
    let none = vec![String::new(); configs.len()];
    let Some(cause) = &a.verdict.cause else {
        return Why {
            head: String::new(),
            cells: none.clone(),
            arenas_head: "",
            arenas: none,
        };
    };
    let of = |name: &str| {
        cause
            .of(name)
            .map(|w| w.at_reclaim_instead().unwrap_or(w.clone()))
    };
    let shown: Vec<Option<WhereWent>> = configs.iter().map(|c| of(&c.config.name)).collect();
    let sizes = shown.iter().flatten().map(|w| w.mean.total_bytes() as f64);
    let unit = ColumnUnit::for_values(Unit::Bytes, sizes);
    let cells = shown
        .iter()
        .map(|w| w.as_ref().map_or("-".to_string(), |w| why_cell(w, unit)));
    let arenas: Vec<String> = (shown.iter())
        .map(|w| match w.as_ref().and_then(|w| w.arenas) {
            Some(n) if n > 1 => n.to_string(),
            _ => String::new(),
        })
        .collect();
    Why {
        head: format!("why ({})", unit.name()),
        cells: cells.collect(),
        arenas_head: if arenas.iter().any(|a| !a.is_empty()) {
            "arenas"
        } else {
            ""
        },
        arenas,
    }
}

/// `197 live, 210 free`, or `410 other` without heap figures.
fn why_cell(w: &WhereWent, unit: ColumnUnit) -> String {
    use allocscope_analyze::cause::{Part, PARTS};
    let rss = w.mean.total_bytes() as f64;
    let n = |bytes: u64| unit.number_like(bytes as f64, rss);
    if !heap_measured(&w.mean) {
        let largest = PARTS.iter().max_by_key(|p| p.of(&w.mean)).copied();
        let part = largest.unwrap_or(Part::OtherAnon);
        return format!("{} {}", n(part.of(&w.mean)), part.word());
    }
    format!(
        "{} live, {} free",
        n(w.mean.live_heap_bytes),
        n(w.mean.allocator_free_bytes)
    )
}

/// `0.60x [0.55, 0.65]`.
fn ratio_words(r: &allocscope_analyze::figures::Ratio) -> String {
    match ratio_bounds(r) {
        Some(ci) => format!("{} {ci}", ratio(r.value)),
        None => ratio(r.value),
    }
}

/// The pick with its saving and cost, what would settle an inconclusive
/// verdict, or the verdict's reason as it is (keep the default, no verdict).
fn verdict_line(a: &Analysis) -> String {
    let v = &a.verdict;
    if let Reason::Inconclusive { baseline_rounds } = v.reason {
        return inconclusive(a, baseline_rounds);
    }
    if let Reason::KeepUnproven {
        baseline,
        baseline_rounds: rounds,
    } = &v.reason
    {
        let open = v.unsettled.len();
        return format!(
            "keep {baseline}, not proven: in {rounds} round{} no candidate measured a saving of \
             {}% or more of {}; {open} still open, not resolved at this noise.",
            if *rounds == 1 { "" } else { "s" },
            v.min_saving_pct,
            v.memory.label
        );
    }
    if let Reason::RecommendUnproven {
        baseline,
        memory: m,
        performance,
        guard,
        more_rounds,
        ..
    } = &v.reason
    {
        let perf = performance.as_ref().map_or("-".to_string(), ratio_words);
        let more = format!(
            "{}{}",
            guard_beside(v, guard.as_ref()),
            more_words(*more_rounds)
        );
        return format!(
            "use {}: {} {} of {baseline}'s (saves {}); {} {perf}, not resolved at this noise \
             (budget {}%{more}).",
            v.config.as_deref().unwrap_or_default(),
            v.memory.label,
            ratio_words(m),
            pct(m.value),
            v.performance.label,
            v.max_slowdown_pct
        );
    }
    let Reason::Recommend {
        baseline,
        memory: Some(m),
        performance: Some(p),
        guard,
        ..
    } = &v.reason
    else {
        return reason(v);
    };
    let cost = match p.value {
        x if x <= 1.0 => format!("better by {}", pct(x)),
        x => format!("costs {}", pct(x)),
    };
    format!(
        "use {}: {} {} of {baseline}'s (saves {}); {} {} ({cost}, budget {}%{}).",
        v.config.as_deref().unwrap_or_default(),
        v.memory.label,
        ratio_words(m),
        pct(m.value),
        v.performance.label,
        ratio_words(p),
        v.max_slowdown_pct,
        guard_beside(v, guard.as_ref())
    )
}

/// `; wall time 0.81x [0.69, 0.94]`: the guard beside a CPU figure.
fn guard_beside(v: &Verdict, guard: Option<&allocscope_analyze::figures::Ratio>) -> String {
    match (&v.guard, guard) {
        (Some(row), Some(g)) => format!("; {} {}", row.label, ratio_words(g)),
        _ => String::new(),
    }
}

/// `; about 6 more rounds`.
fn more_words(more_rounds: Option<u32>) -> String {
    more_rounds.map_or(String::new(), |n| format!("; {}", more_rounds_words(n)))
}

/// `inconclusive after 8 rounds: 4 candidates not settled yet; about 13
/// more rounds (about 6 min) would settle them (--runs auto --max-runs
/// 21), or ...`: the open candidates are on the line below.
fn inconclusive(a: &Analysis, rounds: usize) -> String {
    let v = &a.verdict;
    // A candidate the futility rule stopped: more rounds would not settle
    // it, and the reason says what is settled before what is not.
    if v.unsettled.iter().any(|u| u.unresolvable_after.is_some()) {
        return lower_first(&reason(v));
    }
    let open = v.unsettled.len();
    let most = v.unsettled.iter().filter_map(|u| u.more_rounds).max();
    let settle = match most {
        Some(n) if n != MANY_MORE_ROUNDS => {
            let runs = a.experiment.configs.iter().flat_map(|c| &c.runs);
            let per_round = runs.map(|r| r.record.wall_s).sum::<f64>() / rounds.max(1) as f64;
            format!(
                "{} (about {}) would settle {} (--runs auto --max-runs {})",
                more_rounds_words(n),
                format_seconds(per_round * f64::from(n)),
                if open == 1 { "it" } else { "them" },
                rounds as u64 + u64::from(n)
            )
        }
        Some(n) => format!("{} would settle them", more_rounds_words(n)),
        None => "more rounds would settle it (--runs auto --max-runs N)".to_string(),
    };
    format!(
        "inconclusive after {rounds} round{} of the baseline: {open} candidate{} not settled yet; \
         {settle}, or re-judge with other thresholds (allocscope report --min-saving/--max-slowdown).",
        if rounds == 1 { "" } else { "s" },
        if open == 1 { "" } else { "s" },
    )
}

/// `jemalloc (wall time, about 13 more rounds), ...`: the candidates still
/// open, on which measure, and what would settle each.
fn open_line(v: &Verdict) -> Option<String> {
    let words: Vec<String> = v
        .unsettled
        .iter()
        .map(|u| {
            let side = side_words_of(v, u.side);
            if let Some(rounds) = u.unresolvable_after {
                return format!(
                    "{} ({side}: no difference this experiment can resolve after {rounds} rounds)",
                    u.config
                );
            }
            let more = u.more_rounds.map(|n| format!(", {}", more_rounds_words(n)));
            format!("{} ({side}{})", u.config, more.unwrap_or_default())
        })
        .collect();
    (!words.is_empty()).then(|| format!("{}.", words.join(", ")))
}

/// What the focus candidate removed, in one sentence: the cause and its
/// remedy.
fn cause_line(v: &Verdict) -> Option<String> {
    let cause: &Cause = v.cause.as_ref()?;
    let d = cause.difference.as_ref()?;
    let (b, c) = cause.pair?;
    let (b, c) = (&cause.configs[b], &cause.configs[c]);
    let unit = ColumnUnit::of(Unit::Bytes, b.mean.total_bytes() as f64);
    let sentence = super::cause_words::cause_sentence(d, b, c, unit);
    // After the colon: "Cause: " dropped, or a sentence of its own begun
    // in lower case ("the breakdown does not account for ...").
    let sentence = match sentence.strip_prefix("Cause: ") {
        Some(rest) => rest.to_string(),
        None => lower_first(&sentence),
    };
    Some(format!(
        "{} uses less than {}: {sentence}",
        d.candidate, d.baseline
    ))
}

/// `text` with its first letter in lower case.
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `tcmalloc (over the 5% budget), mimalloc (saves under 3%)`: each
/// candidate not picked, in a few words.
fn not_chosen(v: &Verdict) -> Option<String> {
    let pick = v.config.as_deref();
    let words: Vec<String> = v
        .explanation
        .iter()
        .flat_map(|n| match n {
            // The open and unresolvable ones have a line of their own.
            Note::Candidate {
                place: Place::Judged { open: true, .. } | Place::Unresolvable { .. },
                ..
            } => Vec::new(),
            Note::Candidate {
                config,
                place,
                figures,
            } if Some(config.as_str()) != pick => {
                vec![format!(
                    "{config} ({})",
                    place_words(v, place, figures.as_ref())
                )]
            }
            Note::OomKilled { config, .. } => vec![format!("{config} (OOM-killed)")],
            Note::EveryRunFailed { config, why, .. } => {
                vec![format!("{config} (every run failed: {why})")]
            }
            Note::DroppedByRace { dropped } => dropped
                .iter()
                .map(|d| format!("{} (dropped by the race {})", d.config, d.when))
                .collect(),
            Note::LeftOut {
                config, served_by, ..
            }
            | Note::ServedElsewhere {
                config, served_by, ..
            } => {
                vec![format!("{config} (served by {served_by})")]
            }
            Note::OwnApiBypass { config, reach, .. } => {
                vec![format!("{config} (part of its heap stayed in {reach})")]
            }
            _ => Vec::new(),
        })
        .collect();
    (!words.is_empty()).then(|| format!("{}.", words.join(", ")))
}

/// Where a candidate stands, in a few words; settled out, by what it
/// costs (`uses 13% more`) where its figures say.
fn place_words(v: &Verdict, place: &Place, figures: Option<&Figures>) -> String {
    let Place::Judged {
        open,
        memory,
        performance,
        guard_over,
        ..
    } = place
    else {
        return match place {
            Place::Outranked { by } => format!("more {} than {by}", v.memory.label),
            _ => "qualifies, within noise".to_string(),
        };
    };
    let mut why = Vec::new();
    match (memory, figures.map(|f| f.memory.value)) {
        (Side::Bad, Some(m)) if m >= 1.0 => why.push(format!("uses {} more", pct(m))),
        (Side::Bad, Some(m)) => why.push(format!("saves {}, under {}%", pct(m), v.min_saving_pct)),
        (Side::Bad, None) => why.push(format!("saves under {}%", v.min_saving_pct)),
        (Side::Open, _) => why.push(format!("{} open", v.memory.label)),
        (Side::Good, _) => {}
    }
    match (
        performance,
        super::verdict_words::guard_over_words(v, *guard_over, figures),
    ) {
        (Side::Bad, Some(guard)) => why.push(format!(
            "over the {}% budget on {guard}",
            v.max_slowdown_pct
        )),
        (Side::Bad, None) => why.push(format!("over the {}% budget", v.max_slowdown_pct)),
        (Side::Open, _) => why.push(format!("{} open", v.performance.label)),
        (Side::Good, _) => {}
    }
    let open = if *open { "open: " } else { "" };
    format!("{open}{}", why.join(", "))
}

/// The screen in Markdown, for the top of the Markdown report: what ran,
/// the table, the verdict's lines in bold labels (the report adds the
/// deploy line, fenced).
pub fn markdown(out: &mut String, a: &Analysis, escape: fn(&str) -> String) -> std::fmt::Result {
    let s = Screen::of(a);
    writeln!(out, "{}\n", escape(&s.ran))?;
    let mut heads = s.heads.clone();
    heads[0] = "configuration".to_string();
    // The columns the terminal leaves out (empty throughout) go here too.
    let kept: Vec<usize> = (0..heads.len())
        .filter(|&k| !heads[k].is_empty() || s.rows.iter().any(|r| !r[k].is_empty()))
        .collect();
    let heads: Vec<&String> = kept.iter().map(|&k| &heads[k]).collect();
    let rows = (s.rows.iter()).map(|r| kept.iter().map(|&k| escape(&r[k])).collect());
    super::section::markdown(out, &heads, rows)?;
    writeln!(out)?;
    for (label, text) in &s.verdict {
        writeln!(out, "**{}:** {}  ", capital(label), escape(text))?;
    }
    for warning in &s.warnings {
        writeln!(out, "> warning: {}", escape(warning))?;
    }
    writeln!(out)
}

/// The screen as the HTML report's opening card: what ran, the verdict's
/// lines, the shell's deploy line with a link to the other targets.
pub(crate) fn html_card(
    out: &mut String,
    a: &Analysis,
    escape: fn(&str) -> String,
) -> std::fmt::Result {
    let s = Screen::of(a);
    let class = match a.verdict.outcome {
        allocscope_analyze::verdict::Outcome::Recommend
        | allocscope_analyze::verdict::Outcome::RecommendUnproven => "verdict card",
        _ => "verdict keep card",
    };
    writeln!(out, "<section id=\"answer\" class=\"{class}\">")?;
    writeln!(out, "<p class=\"ratio\">{}</p>", escape(&s.ran))?;
    for (label, text) in &s.verdict {
        writeln!(out, "<p><b>{}:</b> {}</p>", capital(label), escape(text))?;
    }
    if let Some(line) = &s.deploy {
        writeln!(
            out,
            "<p><b>Deploy</b> (systemd, Dockerfile, Kubernetes: <a href=\"#deploy\">below</a>):\
             </p><pre>{}</pre>",
            escape(line)
        )?;
    }
    writeln!(out, "</section>")
}

/// `not chosen` -> `Not chosen`.
fn capital(label: &str) -> String {
    let mut chars = label.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}
