//! When a run's reclaim test asks the allocator to return what it holds
//! (`--reclaim-at`; `reclaim.rs` carries it out).

use crate::usage_error::UsageError;
use std::time::Duration;

/// When a run asks for the reclaim test (`--reclaim-at`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ReclaimAt {
    /// The default: a batch program at its exit, a service before its stop.
    #[default]
    End,
    /// At the first marker with this label.
    Label(String),
    /// This long after the start.
    After(Duration),
    Off,
}

impl ReclaimAt {
    /// `off`, a duration (`5s`, `500ms`), else a marker label.
    pub fn parse(text: &str) -> Result<ReclaimAt, UsageError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(UsageError::NoReclaimPoint);
        }
        if text == "off" {
            return Ok(ReclaimAt::Off);
        }
        Ok(match crate::units::parse_duration(text) {
            Ok(after) => ReclaimAt::After(after),
            Err(_) => ReclaimAt::Label(text.to_string()),
        })
    }

    /// Whether the probe runs the test from its exit handler: a batch
    /// program's default.
    pub(crate) fn at_exit(&self, service: bool) -> bool {
        *self == ReclaimAt::End && !service
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reclaim_at_parses_off_durations_and_labels() {
        let parsed = |text| ReclaimAt::parse(text).ok();
        assert_eq!(parsed("off"), Some(ReclaimAt::Off));
        assert_eq!(
            parsed("1500ms"),
            Some(ReclaimAt::After(Duration::from_millis(1500)))
        );
        assert_eq!(parsed("freed"), Some(ReclaimAt::Label("freed".into())));
        assert!(ReclaimAt::parse(" ").is_err());
        assert!(ReclaimAt::End.at_exit(false) && !ReclaimAt::End.at_exit(true));
    }
}
