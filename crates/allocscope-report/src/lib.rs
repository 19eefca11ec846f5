//! Reporters: each output format lives in one file and implements
//! `Reporter` (`reporter.rs`), turning an `Analysis` into bytes. Reporters
//! never touch /proc or SQLite; `write_output` decides where the bytes go
//! (`-` is stdout). This file only declares and re-exports: the files import
//! what they share from `reporter.rs`, `columns.rs` and `format.rs`, never
//! from here.

mod breakdown_table;
mod cause_words;
mod columns;
pub mod cpus_line;
pub mod csv;
mod foreign_table;
pub mod format;
mod heap_table;
pub mod html;
pub mod json;
mod limits;
pub mod markdown;
pub mod markers_csv;
mod markers_table;
pub mod part;
pub mod png;
pub mod recordings;
pub mod reporter;
pub mod samples_csv;
pub mod screen;
mod section;
mod served_words;
mod service_table;
pub mod svg;
pub mod table;
pub mod thin;
mod verdict_json;
mod verdict_text;
mod verdict_words;

#[cfg(test)]
mod analysis_tests;
#[cfg(test)]
mod breakdown_export_tests;
#[cfg(test)]
mod breakdown_tests;
#[cfg(test)]
mod screen_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod user_metric_tests;

pub use self::csv::CsvReporter;
pub use html::HtmlReporter;
pub use json::JsonReporter;
pub use markdown::MarkdownReporter;
pub use markers_csv::MarkersCsvReporter;
pub use reporter::{write_output, Reporter};
pub use samples_csv::SamplesCsvReporter;
pub use table::TableReporter;
