//! What served a configuration, in words, for the configurations table and
//! the verdict: `glibc requested; jemalloc served 97% of the tree's memory
//! (varnishd links it)`. A program's calls to an allocator's own API are
//! worded by `analyze::own_api_words`, which the warnings share.

use allocscope_analyze::served;
use allocscope_core::model::{StoredConfig, Via};

/// `jemalloc served 97% of the tree's memory (varnishd links it)`.
pub(crate) fn served_share(
    served_by: &str,
    share: f64,
    programs: &[String],
    via: Option<Via>,
) -> String {
    let names = programs.join(", ");
    let how = match via {
        Some(Via::Linked) if !names.is_empty() => {
            let verb = if programs.len() > 1 { "link" } else { "links" };
            format!(" ({names} {verb} it)")
        }
        Some(Via::Preloaded) => " (preloaded)".to_string(),
        Some(Via::Program) if !names.is_empty() => format!(" ({names}'s own malloc)"),
        _ if !names.is_empty() => format!(" ({names})"),
        _ => String::new(),
    };
    format!(
        "{served_by} served {} of the tree's memory{how}",
        percent(share)
    )
}

/// `97%`; `<1%` for a sliver, `100%` only when whole.
fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct > 0.0 && pct < 1.0 {
        "<1%".to_string()
    } else if pct < 100.0 && pct > 99.0 {
        ">99%".to_string()
    } else {
        format!("{pct:.0}%")
    }
}

/// The configurations table's words on what served `config`: `served by
/// glibc`, or, when what was asked is not what served, `glibc requested;
/// jemalloc served 97% of the tree's memory (varnishd links it)`.
pub(crate) fn table_words(config: &StoredConfig) -> Option<String> {
    let by = served::served_by(config)?;
    let part = served::mismatch(config).and_then(|other| {
        let tree = served::tree(config)?;
        tree.parts.iter().find(|p| p.allocator == other)
    });
    Some(match part {
        Some(p) => format!(
            "{} requested; {}",
            config.config.allocator,
            served_share(by, p.share, &p.programs, p.via)
        ),
        None => match served::bypassed(config) {
            Some(u) => format!(
                "served by {by}; {}'s calls to {}'s own API still reached {}",
                u.program, u.api_of, u.reach
            ),
            None => format!("served by {by}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_whole_percents_and_a_sliver_is_not_zero() {
        let names = ["varnishd".to_string()];
        assert_eq!(
            served_share("jemalloc", 0.97, &names, Some(Via::Linked)),
            "jemalloc served 97% of the tree's memory (varnishd links it)"
        );
        assert_eq!(percent(0.004), "<1%");
        assert_eq!(percent(0.996), ">99%");
        assert_eq!(percent(1.0), "100%");
    }
}
