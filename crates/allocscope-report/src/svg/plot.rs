//! What every plot is and shares: a `Plot` (file-name stem, title, SVG
//! document) and the legend's configurations with their colours.

use super::colour;
use allocscope_analyze::types::Analysis;

/// One plot: a file-name stem, a title, and the SVG document.
pub struct Plot {
    pub name: &'static str,
    pub title: String,
    pub svg: String,
}

/// Each configuration's name and colour, in order: the legend.
pub fn names(analysis: &Analysis) -> Vec<(String, &'static str)> {
    analysis
        .experiment
        .configs
        .iter()
        .enumerate()
        .map(|(i, c)| (c.config.name.clone(), colour(i)))
        .collect()
}
