//! SVG to PNG with resvg (pure Rust), text set in the system's fonts
//! (DejaVu Sans on Debian: `fonts-dejavu-core`, which scripts/bootstrap
//! installs). The font database is loaded once per process.

use anyhow::{anyhow, Context, Result};
use resvg::{tiny_skia, usvg};
use std::sync::{Arc, OnceLock};

fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            db.set_sans_serif_family("DejaVu Sans");
            Arc::new(db)
        })
        .clone()
}

/// True when no font was found: text in the PNGs would be missing.
pub fn no_fonts() -> bool {
    fonts().is_empty()
}

/// Renders an SVG document to PNG bytes at `scale` times its size.
pub fn render(svg: &str, scale: f32) -> Result<Vec<u8>> {
    let options = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).context("parsing the plot's SVG")?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| anyhow!("empty plot"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow!("plot too large for a PNG"))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding the PNG")
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_a_plot_with_text() -> anyhow::Result<()> {
        let mut svg = super::super::svg::Svg::new(40.0, 20.0);
        svg.text(2.0, 14.0, 12.0, "start", 0.0, "MiB");
        let png = super::render(&svg.finish(), 1.0)?;
        assert_eq!(&png[1..4], b"PNG");
        Ok(())
    }
}
