//! Renderers: they format what the run found and never analyse anything themselves.
//!
//! Every format sees the same input, a list of [`FileFindings`], and shows the findings in one
//! order: by path, then by position in the file. Lines and columns are 1-based and columns count
//! characters (not bytes, not UTF-16 units), as in the default report.

pub mod github;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod statistics;
pub mod text;

use std::path::Path;

use ruff_source_file::LineIndex;
use ruff_text_size::TextSize;

use crate::diagnostic::Diagnostic;
use crate::fix::Safety;

pub use statistics::statistics;

/// `--output-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per finding, with the reason when it has no fix.
    #[default]
    Full,
    /// One line per finding.
    Concise,
    /// A JSON array, one object per finding.
    Json,
    /// GitHub Actions workflow commands: annotations on the pull request.
    Github,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// A Markdown report for a pull request comment.
    Markdown,
}

/// `--sort`: the order of the text report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// By path, then by line.
    #[default]
    Path,
    /// The most severe first (critical, high, medium, low), then by path and line.
    Severity,
    /// With --trace: what the run cost most first (compile time, then graph breaks and
    /// recompiles seen), then the findings not seen, by path and line.
    Cost,
}

/// One file's findings, as the renderers see them.
#[derive(Clone, Copy, Debug)]
pub struct FileFindings<'a> {
    /// The path as shown: relative for display (see [`display_path`]), `/`-separated.
    pub path: &'a str,
    /// The text the findings' ranges point into.
    pub text: &'a str,
    pub diagnostics: &'a [Diagnostic],
}

/// The findings part of the output in `format`. There is no summary line: for `full` and
/// `concise` the caller prints [`text::summary`] after it; the other formats are complete
/// documents (an empty JSON array, a SARIF log with no results, a report that says nothing was
/// found) even when nothing was found.
/// `order` applies to the text formats; the others keep the path order.
pub fn render(format: Format, files: &[FileFindings], order: Order, unsafe_fixes: bool) -> String {
    match format {
        Format::Full => text::full(files, order, unsafe_fixes),
        Format::Concise => text::concise(files, order, unsafe_fixes),
        Format::Json => json::render(files),
        Format::Github => github::render(files),
        Format::Sarif => sarif::render(files),
        Format::Markdown => markdown::render(files, unsafe_fixes),
    }
}

/// How a path is shown: relative to the current directory when it lies under it, `/`-separated.
pub fn display_path(path: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let shown = relative.to_string_lossy().replace('\\', "/");
    shown.strip_prefix("./").map(str::to_string).unwrap_or(shown)
}

/// Files with findings, by path, each with its findings by position (start, end, code): the one
/// order of every format.
fn by_file<'a>(files: &'a [FileFindings<'a>]) -> Vec<(&'a FileFindings<'a>, Vec<&'a Diagnostic>)> {
    let mut sorted: Vec<&FileFindings> = files.iter().filter(|file| !file.diagnostics.is_empty()).collect();
    sorted.sort_by(|a, b| a.path.cmp(b.path));
    sorted
        .into_iter()
        .map(|file| {
            let mut diagnostics: Vec<&Diagnostic> = file.diagnostics.iter().collect();
            diagnostics.sort_by_key(|d| (d.range.start(), d.range.end(), d.rule.code));
            (file, diagnostics)
        })
        .collect()
}

/// A 1-based line and column; the column counts characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Position {
    line: usize,
    column: usize,
}

/// Turns byte offsets of one file into [`Position`]s.
struct Locator<'a> {
    text: &'a str,
    lines: LineIndex,
}

impl<'a> Locator<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, lines: LineIndex::from_source_text(text) }
    }

    fn position(&self, offset: TextSize) -> Position {
        let location = self.lines.line_column(offset, self.text);
        Position { line: location.line.get(), column: location.column.get() }
    }
}

/// The name formats use for a fix's safety: ruff's applicability names.
fn applicability(safety: Safety) -> &'static str {
    match safety {
        Safety::Safe => "safe",
        Safety::Unsafe => "unsafe",
        Safety::DisplayOnly => "display-only",
    }
}

/// The first paragraph after a README's title, its lines joined: what the rule finds.
pub(crate) fn first_paragraph(readme: &str) -> String {
    readme
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty() || line.starts_with('#'))
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
