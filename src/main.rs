use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use tcfix::discover::discover;
use tcfix::output::{display_path, text};
use tcfix::project::{FileReport, FixMode, run};
use tcfix::rules::{Selection, Settings};
use tcfix::source::SourceError;

mod cli;

/// What the run ended with, most serious last: the exit code is the worst seen.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Clean = 0,
    Findings = 1,
    Error = 2,
}

fn main() -> ExitCode {
    // A panic on one file is reported with that file's name (see `project::run`), not as a trace.
    std::panic::set_hook(Box::new(|_| {}));
    let cli = cli::Cli::parse();
    let settings = Settings {
        selection: Selection { select: cli.select.clone(), ignore: cli.ignore.clone() },
        ..Settings::default()
    };
    let unknown = settings.selection.unknown_selectors();
    if !unknown.is_empty() {
        eprintln!("error: no rule matches {}: use a code (TCF101), a prefix (TCF1) or a name", unknown.join(", "));
        return ExitCode::from(Status::Error as u8);
    }
    let discovered = discover(&cli.paths);
    let mut status = Status::Clean;
    for (path, reason) in &discovered.errors {
        eprintln!("{}: error: {reason}", display_path(path));
        status = Status::Error;
    }
    let mode = if cli.diff || cli.apply { FixMode::Fix { unsafe_fixes: cli.unsafe_fixes } } else { FixMode::Report };
    let reports = run(&discovered.files, &settings, mode);
    for report in &reports {
        if let Err(error) = &report.outcome {
            print_error(report, error);
            status = Status::Error;
        }
    }
    let outcome = if cli.diff {
        show_diff(&reports)
    } else if cli.apply {
        apply(&reports, &cli)
    } else {
        report(&reports, &cli)
    };
    ExitCode::from(status.max(outcome) as u8)
}

fn print_error(report: &FileReport, error: &SourceError) {
    let path = display_path(&report.path);
    match error {
        SourceError::Syntax { line, column, message } => eprintln!("{path}:{line}:{column}: error: {message}"),
        _ => eprintln!("{path}: error: {error}"),
    }
}

fn report(reports: &[FileReport], cli: &cli::Cli) -> Status {
    let mut tally = text::Tally::default();
    let mut out = std::io::stdout().lock();
    for report in reports {
        let Ok(checked) = &report.outcome else {
            continue;
        };
        let path = display_path(&report.path);
        let _ =
            out.write_all(text::diagnostics(&path, &checked.text, &checked.diagnostics, cli.unsafe_fixes).as_bytes());
        tally.add(&checked.diagnostics);
    }
    if !cli.quiet {
        let _ = writeln!(out, "{}", text::summary(tally, cli.unsafe_fixes));
    }
    if tally.found > 0 { Status::Findings } else { Status::Clean }
}

fn show_diff(reports: &[FileReport]) -> Status {
    let mut out = std::io::stdout().lock();
    let (mut fixes, mut files) = (0, 0);
    for report in reports {
        let Ok(checked) = &report.outcome else {
            continue;
        };
        warn_dropped(report);
        if checked.changed() {
            let path = display_path(&report.path);
            let _ = out.write_all(tcfix::diff::unified_diff(&path, &checked.original, &checked.text).as_bytes());
            fixes += checked.applied.len();
            files += 1;
        }
    }
    if files == 0 {
        eprintln!("No fixes to show.");
        return Status::Clean;
    }
    eprintln!("Would fix {fixes} {} in {files} {}.", plural(fixes, "hazard"), plural(files, "file"));
    Status::Findings
}

fn apply(reports: &[FileReport], cli: &cli::Cli) -> Status {
    let (mut fixes, mut files, mut status) = (0, 0, Status::Clean);
    for report in reports {
        let Ok(checked) = &report.outcome else {
            continue;
        };
        warn_dropped(report);
        if !checked.changed() {
            continue;
        }
        match tcfix::write::write_atomically(&report.path, &checked.text) {
            Ok(()) => {
                fixes += checked.applied.len();
                files += 1;
            }
            Err(err) => {
                eprintln!("{}: error: could not write the fixes: {err}", display_path(&report.path));
                status = Status::Error;
            }
        }
    }
    if files > 0 && !cli.quiet {
        eprintln!("Fixed {fixes} {} in {files} {}.", plural(fixes, "hazard"), plural(files, "file"));
    }
    status.max(report(reports, cli))
}

fn warn_dropped(report: &FileReport) {
    let Ok(checked) = &report.outcome else { return };
    for dropped in &checked.dropped {
        eprintln!(
            "{}:{}: warning: {} fix not applied, it would leave invalid Python ({}); please report this",
            display_path(&report.path),
            dropped.line,
            dropped.rule.code,
            dropped.title
        );
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { noun.to_string() } else { format!("{noun}s") }
}
