use super::*;
use clap::Parser;

/// The export flags as `compare` parses them.
fn args(flags: &[&str]) -> ExportArgs {
    let cli = crate::cli::Cli::parse_from(["allocscope", "report"].iter().chain(flags).copied());
    match cli.command {
        crate::cli::Command::Report(report) => report.export,
        other => panic!("not report: {other:?}"),
    }
}

fn list(flags: &[&str]) -> Result<Vec<(Format, PathBuf)>, String> {
    ExportList::parse(&args(flags))
        .map(|l| {
            l.iter()
                .map(|e| (e.format, e.destination.as_path().to_path_buf()))
                .collect()
        })
        .map_err(|e| e.to_string())
}

#[test]
fn exports_are_listed_in_writing_order_with_the_csvs_beside_the_csv() {
    let listed = list(&[
        "--export-csv",
        "out/r.csv",
        "--plots",
        "p",
        "--export-json",
        "r.json",
        "--samples",
        "--html",
        "r.html",
        "--export-markdown",
        "r.md",
    ]);
    let p = PathBuf::from;
    assert_eq!(
        listed,
        Ok(vec![
            (Format::Json { samples: true }, p("r.json")),
            (Format::Html, p("r.html")),
            (Format::Plots, p("p")),
            (Format::Markdown, p("r.md")),
            (Format::Csv, p("out/r.csv")),
            (Format::SamplesCsv, p("out/r.samples.csv")),
            (Format::MarkersCsv, p("out/r.markers.csv")),
        ])
    );
    assert_eq!(list(&[]), Ok(vec![]));
}

#[test]
fn exports_dash_is_stdout_and_keeps_the_csvs_beside_it_off() {
    let exports = ExportList::parse(&args(&["--export-csv", "-", "--samples"]));
    let exports = exports.unwrap_or_default();
    assert!(exports.uses_stdout());
    let listed: Vec<_> = exports.iter().cloned().collect();
    assert_eq!(
        listed,
        vec![Export {
            format: Format::Csv,
            destination: Destination::Stdout
        }]
    );
    // A directory named `-` is a directory: plots never go to stdout.
    let plots = ExportList::parse(&args(&["--plots", "-"])).unwrap_or_default();
    assert!(!plots.uses_stdout());
    assert!(!ExportList::parse(&args(&["--html", "r.html"]))
        .unwrap_or_default()
        .uses_stdout());
    // Several exports may share stdout, as before.
    assert!(list(&["--export-json", "-", "--export-markdown", "-"]).is_ok());
}

#[test]
fn exports_to_one_file_are_refused_with_both_flags_named() {
    let err = list(&["--export-json", "r.out", "--html", "r.out"]).err();
    let err = err.unwrap_or_default();
    assert!(err.contains("--export-json and --html"), "{err}");
    assert!(err.contains("'r.out'"), "{err}");
    // Also a file the CSV's neighbours would overwrite.
    let err = list(&[
        "--export-csv",
        "r.csv",
        "--samples",
        "--export-markdown",
        "r.samples.csv",
    ])
    .err()
    .unwrap_or_default();
    assert!(err.contains("--export-markdown and --samples"), "{err}");
}

#[test]
fn exports_a_command_does_not_render_are_refused() {
    let exports = ExportList::parse(&args(&["--export-json", "-", "--export-markdown", "m.md"]))
        .unwrap_or_default();
    let only_json = |e: &Export| matches!(e.format, Format::Json { .. }).then_some(e.format);
    let refused = exports
        .supported(only_json, |f| {
            UsageError::CommandNotFound(f.flag().to_string())
        })
        .map_err(|e| e.to_string());
    assert_eq!(
        refused,
        Err(UsageError::CommandNotFound("--export-markdown".to_string()).to_string())
    );
    let json_only = ExportList::parse(&args(&["--export-json", "-"])).unwrap_or_default();
    let taken = json_only.supported(only_json, |_| UsageError::NoCommand);
    assert_eq!(taken.ok(), Some(vec![Format::Json { samples: false }]));
}
