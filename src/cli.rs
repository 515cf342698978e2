//! The command line, as clap definitions only.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use tcfix::diagnostic::Severity;
use tcfix::output::{Format, Order};

/// Find and fix the code that makes torch.compile graph-break or recompile.
///
/// Reports each hazard at its line; `--diff` shows the rewrite, `--apply` writes it.
#[derive(Debug, Parser)]
#[command(name = "tcfix", version, after_help = EXIT_CODES, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Files or directories to check (directories are walked, honouring .gitignore); `-` reads
    /// one file from standard input. A directory named like a command: `./rules`.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Print the fixes as a unified diff (for `git apply`) instead of writing them.
    #[arg(long, conflicts_with_all = ["apply", "patch", "patch_dir", "add_noqa"])]
    pub diff: bool,

    /// Write the fixes to the files, then report what is left.
    #[arg(long)]
    pub apply: bool,

    /// Also apply fixes that may change behaviour or speed (each says why in its title).
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Write even files that have uncommitted changes in git (by default they are refused,
    /// so that no work git cannot give back is ever overwritten). Outside a git repository it
    /// also allows writing, as --allow-no-vcs does.
    #[arg(long)]
    pub allow_dirty: bool,

    /// Write files that lie in no git repository (by default --apply and --add-noqa refuse
    /// them: nothing could give their old text back). --allow-dirty allows this too.
    #[arg(long)]
    pub allow_no_vcs: bool,

    /// With --apply: make a linked git worktree of HEAD on a new branch in DIR, apply the fixes
    /// there and commit them; your own working tree is not touched.
    #[arg(long, value_name = "DIR", requires = "apply")]
    pub worktree: Option<PathBuf>,

    /// The branch for --worktree (default: tcfix/fixes-<date>-<time>).
    #[arg(long, value_name = "NAME", requires = "worktree")]
    pub branch: Option<String>,

    /// Write the fixes as one patch file (for `git apply`) instead of applying them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["apply", "patch_dir", "add_noqa"])]
    pub patch: Option<PathBuf>,

    /// Write the fixes as a patch series, one `git format-patch` file per rule, for `git am`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["apply", "add_noqa"])]
    pub patch_dir: Option<PathBuf>,

    /// Add `# noqa: CODE` comments for every current finding (to adopt tcfix on a big codebase).
    #[arg(long, conflicts_with = "apply")]
    pub add_noqa: bool,

    /// Only these rules: codes, code prefixes (TCF1), names or categories (graph-break, recompile,
    /// setup, error), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Vec<String>,

    /// Skip these rules: codes, code prefixes, names or categories, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,

    /// Report (and fix, and diff) only the findings on lines changed since the merge base of REV
    /// and HEAD, as a pull request shows them (`--diff-base origin/main`). The whole project is
    /// still analysed.
    #[arg(long, value_name = "REV")]
    pub diff_base: Option<String>,

    /// With --diff-base: count the working tree's staged, unstaged and untracked changes as
    /// changed lines too (by default only the commits are).
    #[arg(long, requires = "diff_base")]
    pub include_uncommitted: bool,

    /// Leave out the findings recorded in this baseline file (see --write-baseline; also
    /// `baseline` in the configuration).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Record every current finding in FILE and exit 0: later runs with `--baseline FILE` report
    /// only new ones (to adopt tcfix on a large codebase without a comment on every old finding).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["baseline", "diff_base", "apply", "diff", "patch", "patch_dir", "add_noqa", "statistics"]
    )]
    pub write_baseline: Option<PathBuf>,

    /// Join the findings to what torch.compile did in a run: a TORCH_TRACE directory (one log
    /// per rank) or log file, written by `TORCH_TRACE=DIR python train.py`. Findings Dynamo hit
    /// are marked confirmed, breaks and recompiles no rule explains are reported as TCF100/TCF200,
    /// and a summary per compiled frame comes first. Repeatable.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with_all = ["apply", "diff", "patch", "patch_dir", "add_noqa", "write_baseline"]
    )]
    pub trace: Vec<PathBuf>,

    /// Like --trace, for the text `TORCH_LOGS="graph_breaks,recompiles" python train.py 2> FILE`
    /// writes; `-` reads it from standard input.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["apply", "diff", "patch", "patch_dir", "add_noqa", "write_baseline"]
    )]
    pub torch_logs: Option<PathBuf>,

    /// Report and fix only findings at least this severe.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub min_severity: Option<Severity>,

    /// The order of the text report.
    #[arg(long, value_enum, default_value_t = Order::Path)]
    pub sort: Order,

    /// How to print the findings.
    #[arg(long, value_enum, default_value_t = Format::Full)]
    pub output_format: Format,

    /// The markdown report's cap, in characters: past it, the findings left out are counted in a
    /// last line (the default fits one GitHub pull-request comment); 0 for no cap.
    #[arg(long, value_name = "CHARS", default_value_t = tcfix::output::markdown::COMMENT_CHARS)]
    pub markdown_max_chars: usize,

    /// Print one line per rule with its count instead of the findings.
    #[arg(long)]
    pub statistics: bool,

    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,

    /// Exit 0 even when hazards remain (errors still exit 2).
    #[arg(long)]
    pub exit_zero: bool,

    /// Use this configuration file (tcfix.toml, or a pyproject.toml with [tool.tcfix]).
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,

    /// Ignore all configuration files.
    #[arg(long)]
    pub isolated: bool,

    /// Neither read nor write the cache of findings (`.tcfix_cache/` at the project root).
    #[arg(long)]
    pub no_cache: bool,

    /// The path of the file read from standard input (for messages, and to find its config).
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,

    /// Print findings only: no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every rule: code, name, category, and whether its fixes are safe.
    Rules,
    /// Print a rule's documentation: the hazard, what Dynamo does, the fix.
    Explain {
        /// A code (TCF104) or a name (data-dependent-branch).
        rule: String,
    },
    /// Run a language server for editors (LSP over stdin and stdout).
    ///
    /// The hazards of the open buffers as you type, their fixes as quick fixes, each rule's
    /// documentation on hover. The README's "In your editor" sets it up in Neovim and VS Code.
    Server,
    /// Prove the fixes on your own run: run CMD under TORCH_TRACE, apply the fixes in a copy
    /// of the working tree, run CMD there, and report per compiled frame before → after.
    ///
    /// Your tree is never written: the copy holds the tracked files as they are now (uncommitted
    /// changes included) and the untracked ones git does not ignore. Exit 0: proven (no frame
    /// worse, outputs equal when compared); 1: a frame got worse or the outputs differ; 2: could
    /// not prove (the command failed, timed out, or compiled nothing).
    #[command(after_help = PROVE_EXAMPLE)]
    Prove(Box<ProveArgs>),
    /// Say what tcfix knows about a line: compiled or not (and why), what each name on it is
    /// taken for and from what evidence, and which rules looked at it and what each concluded.
    Why {
        /// `PATH:LINE` or `PATH:LINE:COL`.
        place: String,
        /// The project's other files to learn from (default: the current directory).
        #[arg(long, value_name = "PATH")]
        project: Vec<PathBuf>,
    },
}

#[derive(Debug, clap::Args)]
pub struct ProveArgs {
    /// The files or directories whose hazards are fixed (default: the current directory).
    pub paths: Vec<PathBuf>,

    /// The command to run, after `--`: a smoke test or one training step that calls the
    /// compiled model.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,

    /// Also apply the fixes that may change behaviour or speed.
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Stop each run of CMD after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Leave the fixed copy and a patch of the fixes on disk, and print where.
    #[arg(long)]
    pub keep: bool,

    /// Compare the outputs of the two runs: CMD saves them with
    /// `torch.save(outputs, os.environ["TCFIX_PROVE_OUTPUT"])` (a tensor, or a dict, list or
    /// tuple of tensors), and tcfix compares them with `torch.allclose`.
    #[arg(long)]
    pub compare_output: bool,

    /// The Python (with torch) that compares the outputs.
    #[arg(long, value_name = "PYTHON", default_value = "python3")]
    pub python: String,

    /// The relative tolerance of the comparison.
    #[arg(long, default_value_t = 1e-5)]
    pub rtol: f64,

    /// The absolute tolerance of the comparison.
    #[arg(long, default_value_t = 1e-8)]
    pub atol: f64,

    /// How to print the proof.
    #[arg(long, value_enum, default_value_t = ProveFormat::Text)]
    pub format: ProveFormat,

    /// Only these rules' fixes (codes, prefixes, names or categories, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Vec<String>,

    /// Not these rules' fixes.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,

    /// Use this configuration file.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,

    /// Ignore all configuration files.
    #[arg(long)]
    pub isolated: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProveFormat {
    Text,
    Markdown,
    Json,
}

const PROVE_EXAMPLE: &str = "Example:
  tcfix prove --compare-output --python .venv/bin/python -- .venv/bin/python train.py --steps 1";

const EXIT_CODES: &str = "Exit codes:
  0  nothing left to report (with --diff-base: on the changed lines; with --baseline: outside it)
  1  hazards remain (with --diff or --patch: fixes were printed or written)
  2  an error: no Python file to check, a file that does not parse or cannot be read or written,
     a refused file (uncommitted changes, or outside git), a --diff-base revision git cannot find, bad arguments or configuration";
