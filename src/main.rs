//! Entry point: parse, dispatch, and turn errors into one line and an exit
//! code (2 for a usage mistake, 1 for anything else).

use allocscope::cli::{Cli, Command};
use allocscope::commands;
use allocscope::options::demo::DemoSettings;
use allocscope::options::record::RecordSettings;
use allocscope::options::report::ReportSettings;
use allocscope::options::tune::TuneSettings;
use allocscope::options::CompareSettings;
use allocscope_core::alloc;
use allocscope_core::usage_error::UsageError;
use clap::{CommandFactory, Parser};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => error.exit(), // --help, --version
        Err(error) => {
            // A value parser's own mistake reads as if options had found it.
            match std::error::Error::source(&error).and_then(|e| e.downcast_ref::<UsageError>()) {
                Some(usage) => eprintln!("error: {usage}"),
                None => eprintln!("error: {}", usage_error_line(&error)),
            }
            std::process::exit(2);
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", one_line(&error));
            if error.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            }
        }
    };
    std::process::exit(code);
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Compare(args) => {
            let registry = alloc::Registry::discover();
            commands::compare::compare(&CompareSettings::from_args(&args, &registry)?)
        }
        Command::Tune(args) => {
            let registry = alloc::Registry::discover();
            commands::tune::tune(TuneSettings::from_args(&args, &registry)?)
        }
        Command::Allocators => {
            allocscope_report::reporter::print(&commands::allocators::render(
                &alloc::Registry::discover(),
            ))?;
            Ok(0)
        }
        Command::Report(args) => commands::report::report(&ReportSettings::from_args(&args)?),
        Command::Record(args) => commands::record::record(RecordSettings::from_args(&args)?),
        Command::Soak(args) => commands::soak::soak(&args),
        Command::Demo(args) => commands::demo::demo(&DemoSettings::from_args(&args)?),
        Command::Workload { scenario } => scenario.run(),
        Command::Cell(args) => commands::cell::cell(&args),
        Command::Merge(args) => {
            commands::merge::merge(&args.shards, &args.db, args.plan.as_deref())
        }
    }
}

/// anyhow's chain on one line: `reading 'x': permission denied`.
fn one_line(error: &anyhow::Error) -> String {
    error
        .chain()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

/// clap's error on one line, with the valid options of the subcommand when
/// an argument was not recognised.
fn usage_error_line(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let problem = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let problem = problem.trim_start_matches("error: ").to_string();
    let words: Vec<String> = std::env::args().skip(1).take_while(|a| a != "--").collect();
    let mut command = Cli::command();
    let mut path = vec!["allocscope".to_string()];
    for word in &words {
        match command.find_subcommand(word) {
            Some(sub) => {
                path.push(word.clone());
                command = sub.clone();
            }
            None => {
                if !word.starts_with('-') && path.len() > 1 {
                    break;
                }
            }
        }
    }
    let help = format!("see '{} --help'", path.join(" "));
    let valid: Vec<String> = match error.kind() {
        clap::error::ErrorKind::UnknownArgument => command
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect(),
        clap::error::ErrorKind::InvalidSubcommand => command
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .map(|c| c.get_name().to_string())
            .collect(),
        _ => Vec::new(),
    };
    if valid.is_empty() {
        format!("{problem}; {help}")
    } else {
        format!("{problem}; valid: {}; {help}", valid.join(", "))
    }
}
