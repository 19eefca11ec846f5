//! A chart frame on an `Svg`: title, plot area, linear scales, "nice" ticks
//! with grid lines, axis labels in a unit that fits the range (bytes in
//! KiB/MiB/GiB, time in s/min/h/d), optional category labels, and a legend.

use super::Svg;

pub const WIDTH: f64 = 820.0;
pub(crate) const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 70.0;

/// What an axis measures, which decides its display unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Bytes,
    Seconds,
    Plain,
}

/// An axis: its range in base units (bytes, seconds), its title, its kind,
/// and for category axes the label at each integer position.
pub struct Axis {
    pub min: f64,
    pub max: f64,
    pub title: String,
    pub kind: Kind,
    pub categories: Vec<String>,
}

impl Axis {
    pub fn new(min: f64, max: f64, title: &str, kind: Kind) -> Axis {
        let (min, max) = if max > min && min.is_finite() && max.is_finite() {
            (min, max)
        } else {
            (min.min(0.0), min.max(0.0) + 1.0)
        };
        Axis {
            min,
            max,
            title: title.to_string(),
            kind,
            categories: Vec::new(),
        }
    }

    /// A category axis: positions 0..n with these labels, half a slot of margin.
    pub(crate) fn categories(labels: Vec<String>, title: &str) -> Axis {
        let n = labels.len().max(1) as f64;
        let mut axis = Axis::new(-0.5, n - 0.5, title, Kind::Plain);
        axis.categories = labels;
        axis
    }

    /// `v` in the axis's unit with three significant digits: a point's
    /// value on hover.
    pub fn show(&self, v: f64) -> String {
        let (div, unit) = self.unit();
        let shown =
            allocscope_core::units::ColumnUnit::of(allocscope_core::units::Unit::Number, v / div)
                .show(v / div);
        format!("{shown} {unit}").trim_end().to_string()
    }

    /// The divisor and unit name for this axis's range.
    pub fn unit(&self) -> (f64, &'static str) {
        let top = self.max.abs().max(self.min.abs());
        match self.kind {
            Kind::Bytes => [
                (1024f64.powi(3), "GiB"),
                (1048576.0, "MiB"),
                (1024.0, "KiB"),
            ]
            .into_iter()
            .find(|(d, _)| top >= *d * 2.0)
            .unwrap_or((1.0, "B")),
            Kind::Seconds => [(86400.0, "d"), (3600.0, "h"), (60.0, "min"), (1.0, "s")]
                .into_iter()
                .find(|(d, _)| top >= *d * 2.0)
                .unwrap_or((0.001, "ms")),
            Kind::Plain => (1.0, ""),
        }
    }
}

/// Round tick values covering [min, max] in the display unit, about `target` of them.
pub fn ticks(min: f64, max: f64, target: usize) -> (Vec<f64>, f64) {
    let span = (max - min).abs().max(f64::MIN_POSITIVE);
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut v = (min / step).ceil() * step;
    while v <= max + step * 1e-9 && out.len() < 100 {
        out.push(v);
        v += step;
    }
    (out, step)
}

fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    }
}

/// A chart being drawn: maps data to pixels inside the plot area.
pub struct Chart {
    pub svg: Svg,
    pub x: Axis,
    pub y: Axis,
}

impl Chart {
    pub fn new(title: &str, x: Axis, y: Axis) -> Chart {
        let mut svg = Svg::new(WIDTH, HEIGHT);
        svg.text(WIDTH / 2.0, 24.0, 16.0, "middle", 0.0, title);
        let mut chart = Chart { svg, x, y };
        chart.axes();
        chart
    }

    pub fn px(&self, v: f64) -> f64 {
        LEFT + (v - self.x.min) / (self.x.max - self.x.min) * (WIDTH - LEFT - RIGHT)
    }

    pub fn py(&self, v: f64) -> f64 {
        HEIGHT - BOTTOM - (v - self.y.min) / (self.y.max - self.y.min) * (HEIGHT - TOP - BOTTOM)
    }

    fn axes(&mut self) {
        let (x0, x1) = (LEFT, WIDTH - RIGHT);
        let (y0, y1) = (HEIGHT - BOTTOM, TOP);
        self.svg.rect(x0, y1, x1 - x0, y0 - y1, "none", "#999999");
        // y ticks
        let (div, unit) = self.y.unit();
        let (ys, step) = ticks(self.y.min / div, self.y.max / div, 6);
        for v in ys {
            let py = self.py(v * div);
            self.svg.line(x0, py, x1, py, "#e4e4e4", 1.0);
            self.svg
                .text(x0 - 6.0, py + 4.0, 11.0, "end", 0.0, &tick_label(v, step));
        }
        let title = with_unit(&self.y.title, unit);
        self.svg
            .text(18.0, (y0 + y1) / 2.0, 12.0, "middle", -90.0, &title);
        // x ticks: categories or numbers
        if self.x.categories.is_empty() {
            let (div, unit) = self.x.unit();
            let (xs, step) = ticks(self.x.min / div, self.x.max / div, 8);
            for v in xs {
                let px = self.px(v * div);
                self.svg.line(px, y0, px, y1, "#f0f0f0", 1.0);
                self.svg.line(px, y0, px, y0 + 5.0, "#999999", 1.0);
                self.svg
                    .text(px, y0 + 18.0, 11.0, "middle", 0.0, &tick_label(v, step));
            }
            let title = with_unit(&self.x.title, unit);
            self.svg
                .text((x0 + x1) / 2.0, HEIGHT - 22.0, 12.0, "middle", 0.0, &title);
        } else {
            let n = self.x.categories.len();
            let every = n.div_ceil(16).max(1);
            let labels = std::mem::take(&mut self.x.categories);
            for (i, label) in labels.iter().enumerate() {
                if i % every != 0 && i + 1 != n {
                    continue;
                }
                let px = self.px(i as f64);
                self.svg.line(px, y0, px, y0 + 5.0, "#999999", 1.0);
                let short: String = label.chars().take(20).collect();
                self.svg.text(px, y0 + 16.0, 10.0, "end", -30.0, &short);
            }
            self.x.categories = labels;
            let title = self.x.title.clone();
            self.svg
                .text((x0 + x1) / 2.0, HEIGHT - 6.0, 12.0, "middle", 0.0, &title);
        }
    }

    /// A legend right of the plot area: one coloured line and label per entry.
    pub fn legend(&mut self, entries: &[(String, &str)]) {
        let x = WIDTH - RIGHT + 14.0;
        for (i, (label, colour)) in entries.iter().enumerate() {
            let y = TOP + 10.0 + i as f64 * 18.0;
            self.svg.line(x, y, x + 22.0, y, colour, 3.0);
            let short: String = label.chars().take(22).collect();
            self.svg.text(x + 28.0, y + 4.0, 11.0, "start", 0.0, &short);
        }
    }

    /// A note under the legend (e.g. "thin: each run, bold: median").
    pub fn note(&mut self, row: usize, text: &str) {
        let x = WIDTH - RIGHT + 14.0;
        let y = HEIGHT - BOTTOM - row as f64 * 15.0;
        self.svg.text(x, y, 10.0, "start", 0.0, text);
    }

    pub fn finish(self) -> String {
        self.svg.finish()
    }
}

fn with_unit(title: &str, unit: &str) -> String {
    if unit.is_empty() {
        title.to_string()
    } else {
        format!("{title} ({unit})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 10.0, 5).0, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 1.0, 4).1, 0.5);
    }

    #[test]
    fn time_axes_pick_a_unit_that_fits() {
        assert_eq!(Axis::new(0.0, 30.0, "t", Kind::Seconds).unit().1, "s");
        assert_eq!(Axis::new(0.0, 0.004, "t", Kind::Seconds).unit().1, "ms");
        assert_eq!(Axis::new(0.0, 600.0, "t", Kind::Seconds).unit().1, "min");
        assert_eq!(
            Axis::new(0.0, 3.0 * 3600.0, "t", Kind::Seconds).unit().1,
            "h"
        );
        assert_eq!(
            Axis::new(0.0, 5.0 * 86400.0, "t", Kind::Seconds).unit().1,
            "d"
        );
        assert_eq!(Axis::new(0.0, 300e6, "m", Kind::Bytes).unit().1, "MiB");
    }
}
