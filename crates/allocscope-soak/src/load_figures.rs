//! A server soak's load figures: what each instance's `--load` prints that a
//! `--metric NAME=REGEX` matches (the first capture group, read as
//! `compare` reads a load's output), each match a reading at the time the
//! soak read it. An instance's figure is the median of its readings over
//! its growth window; `verdict.rs` sets a configuration's against the
//! baseline's under the budget CPU time is judged by.

use allocscope_core::store::Reading;
use allocscope_core::user_metric::{extract, Extracted, UserMetric};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// One figure's readings, `(t_s, value)` in time order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSeries {
    pub name: String,
    pub higher_is_better: bool,
    pub readings: Vec<(f64, f64)>,
}

/// `reading` added to its figure's series in `load`.
pub fn push(load: &mut Vec<LoadSeries>, reading: &Reading) {
    let point = (reading.t_s, reading.value);
    match load.iter_mut().find(|s| s.name == reading.name) {
        Some(series) => series.readings.push(point),
        None => load.push(LoadSeries {
            name: reading.name.clone(),
            higher_is_better: reading.higher_is_better,
            readings: vec![point],
        }),
    }
}

/// An instance's figure: the median of its readings from its window's start.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFigure {
    pub name: String,
    pub higher_is_better: bool,
    pub median: f64,
    /// How many readings it is the median of.
    pub readings: usize,
}

/// Each figure's median over the readings at or after `from_s`; a figure
/// with none there is left out (a load that printed before the warm-up
/// ended, and not since, says nothing of the plateau).
pub fn figures(load: &[LoadSeries], from_s: f64) -> Vec<LoadFigure> {
    (load.iter())
        .filter_map(|s| {
            let values: Vec<f64> = (s.readings.iter())
                .filter(|(t, _)| *t >= from_s)
                .map(|(_, v)| *v)
                .collect();
            let median = allocscope_analyze::stats::median(&values)?;
            Some(LoadFigure {
                name: s.name.clone(),
                higher_is_better: s.higher_is_better,
                median,
                readings: values.len(),
            })
        })
        .collect()
}

/// The load's stdout and stderr, read as they grow: each call returns the
/// whole lines written since the last (a line still being written waits).
/// Each file is opened once it exists and kept open, as it is looked at
/// every tick. A file shorter than what was read (written anew) is read
/// again from its start.
pub struct LoadTail {
    files: Vec<Tailed>,
}

struct Tailed {
    path: PathBuf,
    file: Option<File>,
    /// How far it has been read, and the start of a line not yet whole.
    offset: u64,
    partial: Vec<u8>,
}

impl LoadTail {
    pub fn new(files: impl IntoIterator<Item = PathBuf>) -> LoadTail {
        let tailed = |path| Tailed {
            path,
            file: None,
            offset: 0,
            partial: Vec::new(),
        };
        LoadTail {
            files: files.into_iter().map(tailed).collect(),
        }
    }

    /// The whole lines written since the last call.
    pub fn lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        for tailed in &mut self.files {
            lines.extend(tailed.new_lines());
        }
        lines
    }
}

impl Tailed {
    fn new_lines(&mut self) -> Vec<String> {
        if self.file.is_none() {
            self.file = File::open(&self.path).ok();
        }
        let Some(file) = &self.file else {
            return Vec::new();
        };
        let len = file.metadata().map_or(0, |m| m.len());
        if len < self.offset {
            (self.offset, self.partial) = (0, Vec::new());
        }
        if len == self.offset {
            return Vec::new();
        }
        let mut buffer = vec![0; (len - self.offset) as usize];
        let Ok(read) = file.read_at(&mut buffer, self.offset) else {
            return Vec::new();
        };
        self.offset += read as u64;
        self.partial.extend_from_slice(&buffer[..read]);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let whole: Vec<u8> = self.partial.drain(..=end).collect();
        (String::from_utf8_lossy(&whole).lines())
            .map(str::to_string)
            .collect()
    }
}

/// What `metrics` find in `lines`, read at `t_s`: each metric's value on
/// each line it matches.
pub fn readings(metrics: &[UserMetric], lines: &[String], t_s: f64) -> Vec<Reading> {
    let mut found = Vec::new();
    for line in lines {
        for metric in metrics {
            if let Extracted::Value(value) = extract(&metric.pattern, line) {
                found.push(Reading {
                    name: metric.name.clone(),
                    higher_is_better: metric.higher_is_better,
                    t_s,
                    value,
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_are_read_as_they_come_and_matched() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let out = dir.path().join("load.stdout");
        let mut tail = LoadTail::new([out.clone(), dir.path().join("load.stderr")]);
        assert!(tail.lines().is_empty());
        std::fs::write(&out, "Requests per second: 812.5 [#/sec]\np95 ")?;
        assert_eq!(tail.lines(), ["Requests per second: 812.5 [#/sec]"]);
        std::fs::write(&out, "Requests per second: 812.5 [#/sec]\np95 12.5ms\n")?;
        let lines = tail.lines();
        assert_eq!(lines, ["p95 12.5ms"]);
        let metrics = [
            UserMetric {
                name: "p95".into(),
                pattern: regex::Regex::new(r"p95 (\S+)").expect("regex"),
                higher_is_better: false,
            },
            UserMetric {
                name: "rps".into(),
                pattern: regex::Regex::new(r"second: ([0-9.]+)").expect("regex"),
                higher_is_better: true,
            },
        ];
        let found = readings(&metrics, &lines, 7.0);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].name.as_str(), found[0].value, found[0].t_s),
            ("p95", 12.5, 7.0)
        );
        // A restart's load writes the file anew.
        std::fs::write(&out, "p95 9ms\n")?;
        assert_eq!(tail.lines(), ["p95 9ms"]);
        Ok(())
    }

    #[test]
    fn a_figure_is_the_median_of_its_readings_in_the_window() {
        let mut load = Vec::new();
        for (t_s, value) in [(1.0, 100.0), (5.0, 12.0), (6.0, 10.0), (7.0, 11.0)] {
            let name = "p95".to_string();
            push(
                &mut load,
                &Reading {
                    name,
                    higher_is_better: false,
                    t_s,
                    value,
                },
            );
        }
        let found = figures(&load, 4.0);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].median, found[0].readings), (11.0, 3));
        assert!(figures(&load, 8.0).is_empty());
    }
}
