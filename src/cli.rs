//! The command line, as clap definitions only.

use std::path::PathBuf;

use clap::Parser;

/// Find and fix the code that makes torch.compile graph-break or recompile.
///
/// Reports each hazard at its line; `--diff` shows the rewrite, `--apply` writes it.
#[derive(Debug, Parser)]
#[command(name = "tcfix", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// Files or directories to check (directories are walked, honouring .gitignore).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Print the fixes as a unified diff (for `git apply`) instead of writing them.
    #[arg(long, conflicts_with = "apply")]
    pub diff: bool,

    /// Write the fixes to the files, then report what is left.
    #[arg(long)]
    pub apply: bool,

    /// Also apply fixes that may change behaviour (each says why in its title).
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Only these rules: codes, code prefixes (TCF1) or names, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Vec<String>,

    /// Skip these rules: codes, code prefixes or names, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,

    /// Print findings only: no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

const EXIT_CODES: &str = "Exit codes:
  0  nothing left to report
  1  hazards remain (with --diff: a diff was printed)
  2  an error: a file that does not parse or cannot be read or written, bad arguments";
