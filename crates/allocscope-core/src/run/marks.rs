//! Markers waiting for the tree's memory. A marker line carries the memory
//! of the first reading of the tree taken after the tap read it: a sampler
//! tick, or a reading the main loop takes for markers. Readings for markers
//! are at least `MARK_WINDOW` apart, so a program printing markers faster
//! than that shares one reading among all the markers read within one
//! window, instead of costing a walk of /proc per marker (about 300 us: a
//! million markers would cost minutes). A marker's reading is never older
//! than its line; it is taken at most a window (plus a turn of the main
//! loop) after it. docs/usage.md, "Markers", says this to users.

use crate::model::{Marker, Sample};
use std::time::{Duration, Instant};

/// The least time between two readings taken for markers.
pub(super) const MARK_WINDOW: Duration = Duration::from_millis(10);

/// A marker read from stdout, its memory not yet known.
struct Waiting {
    pattern: u32,
    label: String,
    t_s: f64,
}

/// The run's markers: those given their reading, in the order read, and
/// those still waiting for one.
#[derive(Default)]
pub(super) struct Marks {
    done: Vec<Marker>,
    waiting: Vec<Waiting>,
    /// When the last reading given to waiting markers was taken.
    last_reading: Option<Instant>,
    /// The last reading that found the tree holding memory.
    last_held: Option<Sample>,
}

impl Marks {
    /// A marker line read `t_s` seconds after the start.
    pub fn add(&mut self, pattern: u32, label: String, t_s: f64) {
        self.waiting.push(Waiting {
            pattern,
            label,
            t_s,
        });
    }

    /// How long until a reading for the waiting markers is due (zero when it
    /// is due now); `None` when no marker waits.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        if self.waiting.is_empty() {
            return None;
        }
        Some(self.last_reading.map_or(Duration::ZERO, |last| {
            (last + MARK_WINDOW).saturating_duration_since(now)
        }))
    }

    /// Gives every waiting marker the memory of `reading`, taken at `at`
    /// after they were read (or of the last reading that found memory, when
    /// this one found none). Without any reading (a run with no sample at
    /// all) they are dropped: there is no memory to record.
    pub fn settle(&mut self, reading: Option<&Sample>, at: Instant) {
        if self.waiting.is_empty() {
            return;
        }
        self.last_reading = Some(at);
        let waiting = std::mem::take(&mut self.waiting);
        // A reading taken as the tree exits (its processes zombies, with no
        // memory left to read) is not what it held when the markers were
        // printed: they get the last reading that found memory.
        if let Some(held) = reading.filter(|s| s.rss_bytes > 0) {
            self.last_held = Some(*held);
        }
        let Some(sample) = reading
            .filter(|s| s.rss_bytes > 0)
            .or(self.last_held.as_ref())
            .or(reading)
        else {
            return;
        };
        self.done.extend(waiting.into_iter().map(|w| Marker {
            label: w.label,
            pattern: w.pattern,
            t_s: w.t_s,
            rss_bytes: sample.rss_bytes,
            pss_bytes: sample.pss_bytes,
            vsz_bytes: sample.vsz_bytes,
        }));
    }

    /// A marker recorded with its own reading (a service's phase change);
    /// the markers waiting were read before it and share that reading.
    pub(crate) fn push_read(
        &mut self,
        pattern: u32,
        label: String,
        reading: Option<&Sample>,
        at: Instant,
    ) {
        let t_s = reading.map_or(0.0, |s| s.t_s);
        self.add(pattern, label, t_s);
        self.settle(reading, at);
    }

    /// Every marker with its memory, in the order read.
    pub(crate) fn into_markers(self) -> Vec<Marker> {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rss_bytes: u64) -> Sample {
        Sample {
            rss_bytes,
            ..Sample::default()
        }
    }

    #[test]
    fn markers_read_within_a_window_share_the_reading_taken_after_them() {
        let start = Instant::now();
        let mut marks = Marks::default();
        assert_eq!(marks.wait(start), None);
        marks.add(0, "a".into(), 0.1);
        // The first marker gets a reading at once.
        assert_eq!(marks.wait(start), Some(Duration::ZERO));
        marks.settle(Some(&sample(100)), start);
        marks.add(0, "b".into(), 0.2);
        marks.add(1, "c".into(), 0.3);
        // The next ones wait for the window to pass.
        let soon = start + MARK_WINDOW / 2;
        assert_eq!(marks.wait(soon), Some(MARK_WINDOW / 2));
        assert_eq!(marks.wait(start + MARK_WINDOW), Some(Duration::ZERO));
        marks.settle(Some(&sample(200)), start + MARK_WINDOW);
        let got: Vec<(String, u32, u64)> = marks
            .into_markers()
            .into_iter()
            .map(|m| (m.label, m.pattern, m.rss_bytes))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), 0, 100),
                ("b".to_string(), 0, 200),
                ("c".to_string(), 1, 200)
            ]
        );
    }

    #[test]
    fn a_reading_of_its_own_settles_the_markers_read_before_it_first() {
        let now = Instant::now();
        let mut marks = Marks::default();
        marks.add(0, "before".into(), 1.0);
        let mut read = sample(300);
        read.t_s = 2.0;
        marks.push_read(0, "ready".into(), Some(&read), now);
        let got: Vec<(String, f64, u64)> = marks
            .into_markers()
            .into_iter()
            .map(|m| (m.label, m.t_s, m.rss_bytes))
            .collect();
        assert_eq!(
            got,
            [
                ("before".to_string(), 1.0, 300),
                ("ready".to_string(), 2.0, 300)
            ]
        );
    }

    #[test]
    fn markers_settled_by_a_reading_of_an_exited_tree_get_the_last_memory_it_held() {
        let start = Instant::now();
        let mut marks = Marks::default();
        marks.add(0, "a".into(), 0.1);
        marks.settle(Some(&sample(100)), start);
        marks.add(0, "b".into(), 0.2);
        // The tree's processes are zombies by now: nothing to read.
        marks.settle(Some(&sample(0)), start + MARK_WINDOW);
        let got: Vec<u64> = marks.into_markers().iter().map(|m| m.rss_bytes).collect();
        assert_eq!(got, vec![100, 100]);
    }
}
