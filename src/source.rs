//! A Python file as tcfix sees it: its exact text, its parse, and a line index for reporting.

use std::fmt;
use std::path::{Path, PathBuf};

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::source_order::{SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::{AnyNodeRef, ModModule};
use ruff_python_parser::{Mode, Parsed, lexer, parse_module};
use ruff_source_file::LineIndex;
use ruff_text_size::{Ranged, TextSize};

/// How deeply nested a file's syntax tree may be for tcfix to analyse it. The analysis walks the
/// tree recursively, so a file nested far deeper (a generated `x + x + ... + x` of a million
/// terms, a megabyte of `-`) would overflow the stack and abort the whole run; such a file is
/// refused with this reason instead. CPython itself refuses code nested about 3,000 levels deep
/// ("too many nested parentheses" already at 200), so no runnable file comes near the limit.
/// `project::run` gives its threads a stack that covers this depth even in a debug build.
pub const MAX_NESTING: usize = 10_000;

/// Files at least this large are first measured with the lexer alone: the parser's own memory
/// grows with the nesting (a gigabyte for a million levels), and when it gives up on a deep file
/// with a syntax error it drops its tree recursively, beyond any stack. A smaller file cannot
/// nest deeply enough for either to matter (each level takes at least a byte).
const LEX_FIRST_FROM_BYTES: usize = 256 * 1024;

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
    /// Nested more than [`MAX_NESTING`] levels deep (at `line`, when the parser got that far).
    TooDeep {
        line: Option<usize>,
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
            SourceError::TooDeep { line } => {
                let at = line.map(|line| format!(" at line {line}")).unwrap_or_default();
                write!(
                    f,
                    "nested more than {MAX_NESTING} levels deep{at}: too deep for tcfix to analyse \
                     (and for CPython to compile); the file was left as it was"
                )
            }
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
        if text.len() >= LEX_FIRST_FROM_BYTES && nesting_may_exceed(&text, 10 * MAX_NESTING) {
            return Err(SourceError::TooDeep { line: None });
        }
        let lines = LineIndex::from_source_text(&text);
        match parse_module(&text) {
            Ok(parsed) => match too_deep(parsed.syntax()) {
                None => Ok(Self { path: path.to_path_buf(), text, parsed, lines }),
                Some(offset) => {
                    // Dropping a tree this deep recurses once per level and could itself overflow
                    // the stack: it is leaked instead (bounded by the file's size, and the run
                    // ends soon; the price of a file no Python can compile).
                    std::mem::forget(parsed);
                    Err(SourceError::TooDeep { line: Some(lines.line_column(offset, &text).line.get()) })
                }
            },
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

/// Where the syntax tree first gets deeper than [`MAX_NESTING`], found without recursion (the
/// point is not to overflow the stack on the files that would).
fn too_deep(module: &ModModule) -> Option<TextSize> {
    let mut children = Children(Vec::new());
    let mut pending: Vec<(AnyNodeRef, usize)> = vec![(AnyNodeRef::from(module), 1)];
    while let Some((node, depth)) = pending.pop() {
        if depth > MAX_NESTING {
            return Some(node.start());
        }
        node.visit_source_order(&mut children);
        pending.extend(children.0.drain(..).map(|child| (child, depth + 1)));
    }
    None
}

/// Whether the tokens alone allow a syntax tree deeper than `limit`. Each token that can open a
/// level (an operator, a keyword, a bracket, a dot) counts one in the bracket it is in, and a
/// comma, semicolon or newline ends the count of its bracket; the sum over the open brackets
/// bounds the depth within a small factor, so `limit` is set well above [`MAX_NESTING`] and the
/// exact measure after parsing decides. Flat data (a list of a million numbers) counts nothing.
fn nesting_may_exceed(text: &str, limit: usize) -> bool {
    let mut lexer = lexer::lex(text, Mode::Module);
    let mut open: Vec<usize> = vec![0];
    let mut total = 1;
    loop {
        match lexer.next_token() {
            TokenKind::EndOfFile => return false,
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                *open.last_mut().expect("never empty") += 1;
                open.push(0);
                total += 2;
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                if open.len() > 1 {
                    total -= open.pop().expect("never empty") + 1;
                }
            }
            TokenKind::Comma | TokenKind::Semi | TokenKind::Newline => {
                let count = open.last_mut().expect("never empty");
                total -= *count;
                *count = 0;
            }
            TokenKind::Name
            | TokenKind::Int
            | TokenKind::Float
            | TokenKind::Complex
            | TokenKind::String
            | TokenKind::FStringMiddle
            | TokenKind::FStringEnd
            | TokenKind::TStringMiddle
            | TokenKind::TStringEnd
            | TokenKind::Comment
            | TokenKind::NonLogicalNewline
            | TokenKind::Indent
            | TokenKind::Dedent
            | TokenKind::Unknown => {}
            _ => {
                *open.last_mut().expect("never empty") += 1;
                total += 1;
            }
        }
        if total > limit {
            return true;
        }
    }
}

/// Collects the direct children of the node it is asked to visit, and descends no further.
struct Children<'a>(Vec<AnyNodeRef<'a>>);

impl<'a> SourceOrderVisitor<'a> for Children<'a> {
    fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
        self.0.push(node);
        TraversalSignal::Skip
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
