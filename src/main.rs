//! Entry point: parse, dispatch, and turn errors into one line and an exit
//! code (2 for a usage mistake, 1 for anything else).

use allocscope::cli::{Cli, Command, CompareArgs};
use allocscope::options::{CompareSettings, UsageError};
use allocscope::{alloc, commands};
use clap::Parser;

fn main() {
    let cli = Cli::parse();
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
        Command::Compare(args) => compare(&args),
        Command::Allocators => {
            print!(
                "{}",
                commands::allocators::render(&alloc::Registry::discover())
            );
            Ok(0)
        }
        Command::Report(args) => commands::report::report(&args),
        Command::Demo(args) => {
            let program = std::env::current_exe()?;
            let compare_args = CompareArgs {
                alloc: Vec::new(),
                runs: args.runs,
                warmup: "0".into(),
                interval: "50ms".into(),
                timeout: Some("5m".into()),
                baseline: None,
                name: Some("demo: churn".into()),
                db: args.db,
                export: allocscope::cli::ExportArgs {
                    export_json: None,
                    export_csv: None,
                    samples: false,
                },
                mark: Vec::new(),
                command: vec![program.into_os_string(), "workload".into(), "churn".into()],
            };
            compare(&compare_args)
        }
        Command::Workload { scenario } => scenario.run(),
    }
}

fn compare(args: &CompareArgs) -> anyhow::Result<i32> {
    let registry = alloc::Registry::discover();
    let settings = CompareSettings::from_args(args, &registry)?;
    commands::compare::compare(&settings, &args.export)
}

/// anyhow's chain on one line: `reading 'x': permission denied`.
fn one_line(error: &anyhow::Error) -> String {
    error
        .chain()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}
