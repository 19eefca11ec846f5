//! A tiny SVG builder for the plots: elements appended as text with fixed
//! float formatting (one decimal), so the same analysis always gives the
//! same bytes; every text node escaped. `chart` adds axes and scales,
//! `plots` draws allocscope's plots from an `Analysis` (`pareto` the
//! memory-against-performance one, `breakdown` where the memory went), each
//! a `plot::Plot`.

pub mod breakdown;
pub mod chart;
pub(crate) mod pareto;
pub mod plot;
pub mod plots;
pub mod recordings;

use std::fmt::Write as _;

/// Colours per configuration index (colour-blind friendly, Okabe-Ito order).
pub(crate) const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
];

pub fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// A coordinate with one decimal; `-0.0` printed as `0.0`.
pub fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    if s == "-0.0" {
        "0.0".to_string()
    } else {
        s
    }
}

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A path's `d` through `points`: `M x,y L x,y ...`.
fn path_data(points: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (i, &(x, y)) in points.iter().enumerate() {
        let step = if i == 0 { "M" } else { " L" };
        let _ = write!(d, "{step}{},{}", num(x), num(y));
    }
    d
}

/// An SVG document being built.
pub struct Svg {
    width: f64,
    height: f64,
    body: String,
}

impl Svg {
    pub fn new(width: f64, height: f64) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
        }
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"/>"#,
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            num(width)
        );
    }

    /// An open path through `points`; nothing when there are fewer than two.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, opacity: f64) {
        self.path(points, stroke, width, opacity, "");
    }

    /// A dashed polyline: a second quantity beside a solid one.
    pub fn dashed(&mut self, points: &[(f64, f64)], stroke: &str, width: f64) {
        self.path(points, stroke, width, 1.0, r#" stroke-dasharray="6,4""#);
    }

    /// A dotted polyline: an event marked across a plot.
    pub fn dotted(&mut self, points: &[(f64, f64)], stroke: &str, width: f64) {
        self.path(points, stroke, width, 0.8, r#" stroke-dasharray="2,3""#);
    }

    fn path(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, opacity: f64, extra: &str) {
        if points.len() < 2 {
            return;
        }
        let _ = writeln!(
            self.body,
            r#"<path d="{}" fill="none" stroke="{stroke}" stroke-width="{}" stroke-opacity="{}" stroke-linejoin="round"{extra}/>"#,
            path_data(points),
            num(width),
            num(opacity)
        );
    }

    /// A closed shape through `points`, filled: a band of a stacked area.
    pub fn area(&mut self, points: &[(f64, f64)], fill: &str) {
        if points.len() < 3 {
            return;
        }
        let _ = writeln!(
            self.body,
            r#"<path d="{} Z" fill="{fill}" stroke="none"/>"#,
            path_data(points)
        );
    }

    /// What `draw` adds, in a group whose `<title>` the browser shows on
    /// hover: a point's or a line's value.
    pub fn titled(&mut self, tip: &str, draw: impl FnOnce(&mut Svg)) {
        let _ = writeln!(self.body, "<g><title>{}</title>", escape(tip));
        draw(self);
        let _ = writeln!(self.body, "</g>");
    }

    /// Another drawing's elements, moved down by `dy`: panels of one figure.
    pub(crate) fn panel(&mut self, dy: f64, inner: Svg) {
        let _ = writeln!(
            self.body,
            "<g transform=\"translate(0 {})\">\n{}</g>",
            num(dy),
            inner.body
        );
    }

    pub(crate) fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, stroke: &str) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" stroke="{stroke}"/>"#,
            num(x),
            num(y),
            num(w),
            num(h)
        );
    }

    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = writeln!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{fill}"/>"#,
            num(x),
            num(y),
            num(r)
        );
    }

    /// Text anchored `start`, `middle` or `end`; `rotate` in degrees about (x, y).
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: &str, rotate: f64, content: &str) {
        let transform = if rotate != 0.0 {
            format!(
                r#" transform="rotate({} {} {})""#,
                num(rotate),
                num(x),
                num(y)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{anchor}"{transform}>{}</text>"#,
            num(x),
            num(y),
            num(size),
            escape(content)
        );
    }

    pub fn finish(self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n\
             <rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n{}</svg>\n",
            self.body,
            w = num(self.width),
            h = num(self.height),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_one_decimal_and_no_negative_zero() {
        assert_eq!(num(1.25), "1.2");
        assert_eq!(num(-0.01), "0.0");
        assert_eq!(num(f64::NAN), "0.0");
    }

    #[test]
    fn text_is_escaped() {
        let mut svg = Svg::new(10.0, 10.0);
        svg.text(0.0, 0.0, 10.0, "start", 0.0, "<script>&\"");
        let out = svg.finish();
        assert!(out.contains("&lt;script&gt;&amp;&quot;"), "{out}");
        assert!(!out.contains("<script>"));
    }
}
