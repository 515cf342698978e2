//! A Python file as tcfix sees it: its exact text, its parse, and a line index for reporting.

use std::fmt;
use std::path::{Path, PathBuf};

use ruff_python_ast::ModModule;
use ruff_python_parser::{Parsed, parse_module};
use ruff_source_file::LineIndex;
use ruff_text_size::TextSize;

pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    pub parsed: Parsed<ModModule>,
    lines: LineIndex,
}

/// Why a file could not be analysed. Each names the reason; the caller adds the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    Io(String),
    NotUtf8 {
        line: usize,
    },
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// tcfix itself failed on this file: a bug.
    Internal(String),
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::Io(reason) => write!(f, "{reason}"),
            SourceError::NotUtf8 { line } => {
                write!(f, "not valid UTF-8 (line {line}); Python sources must be UTF-8")
            }
            SourceError::Syntax { message, .. } => write!(f, "{message}"),
            SourceError::Internal(panic) => {
                write!(f, "tcfix crashed on this file ({panic}); the file was left as it was. Please report this bug")
            }
        }
    }
}

impl SourceFile {
    pub fn read(path: &Path) -> Result<String, SourceError> {
        let bytes = std::fs::read(path).map_err(|err| SourceError::Io(io_reason(&err)))?;
        String::from_utf8(bytes).map_err(|err| {
            let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
            SourceError::NotUtf8 { line: valid.iter().filter(|&&b| b == b'\n').count() + 1 }
        })
    }

    pub fn parse(path: &Path, text: String) -> Result<Self, SourceError> {
        let lines = LineIndex::from_source_text(&text);
        match parse_module(&text) {
            Ok(parsed) => Ok(Self { path: path.to_path_buf(), text, parsed, lines }),
            Err(err) => {
                let location = lines.line_column(err.location.start(), &text);
                Err(SourceError::Syntax {
                    line: location.line.get(),
                    column: location.column.get(),
                    message: err.error.to_string(),
                })
            }
        }
    }

    /// One-based line and column (in characters) of a byte offset.
    pub fn line_column(&self, offset: TextSize) -> (usize, usize) {
        let location = self.lines.line_column(offset, &self.text);
        (location.line.get(), location.column.get())
    }
}

fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_string(),
        _ => err.to_string(),
    }
}
