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

/// Files at least this large are first measured with the lexer alone (`estimated_nesting`): the
/// parser's own memory grows with the nesting (a gigabyte for a million levels), and when it
/// gives up on a deep file with a syntax error it drops its tree recursively, beyond any stack.
/// A smaller file nests at most this many levels (a level takes at least a byte): the parser
/// then needs at most a few hundred megabytes, and dropping its tree fits in the stack of the
/// threads `project::run` analyses files on.
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
        /// The encoding the file declares (`# -*- coding: latin-1 -*-`), if it declares one.
        declared: Option<String>,
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
            SourceError::NotUtf8 { line, declared: Some(encoding) } => write!(
                f,
                "not valid UTF-8 (line {line}): the file declares the `{encoding}` encoding, and tcfix reads only UTF-8"
            ),
            SourceError::NotUtf8 { line, declared: None } => {
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
            SourceError::NotUtf8 {
                line: valid.iter().filter(|&&b| b == b'\n').count() + 1,
                declared: declared_encoding(err.as_bytes()),
            }
        })
    }

    pub fn parse(path: &Path, text: String) -> Result<Self, SourceError> {
        if text.len() >= LEX_FIRST_FROM_BYTES {
            let mut lexer = lexer::lex(&text, Mode::Module);
            let tokens = std::iter::from_fn(|| Some(lexer.next_token()).filter(|kind| !kind.is_eof()));
            if estimated_nesting(tokens, 10 * MAX_NESTING) > 10 * MAX_NESTING {
                return Err(SourceError::TooDeep { line: None });
            }
        }
        let lines = LineIndex::from_source_text(&text);
        match parse_module(&text) {
            Ok(parsed) => match too_deep(&parsed) {
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
                    message: printable(&err.error.to_string()),
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
fn too_deep(parsed: &Parsed<ModModule>) -> Option<TextSize> {
    let tokens = parsed.tokens().iter().map(|token| token.kind());
    if estimated_nesting(tokens, MAX_NESTING) <= MAX_NESTING {
        return None;
    }
    depth(parsed.syntax(), MAX_NESTING).err()
}

/// The depth of the syntax tree, or where it first gets deeper than `limit`; without recursion.
fn depth(module: &ModModule, limit: usize) -> Result<usize, TextSize> {
    let mut children = Children(Vec::new());
    let mut pending: Vec<(AnyNodeRef, usize)> = vec![(AnyNodeRef::from(module), 1)];
    let mut deepest = 0;
    while let Some((node, depth)) = pending.pop() {
        if depth > limit {
            return Err(node.start());
        }
        deepest = deepest.max(depth);
        node.visit_source_order(&mut children);
        pending.extend(children.0.drain(..).map(|child| (child, depth + 1)));
    }
    Ok(deepest)
}

/// An upper estimate of the depth of the syntax tree the tokens make, cheap enough to spare most
/// files the exact measure: each token that can open a level (an operator, a keyword, a bracket,
/// a dot) counts one in the bracket it is in, a comma, semicolon or newline ends the count of its
/// bracket (a lambda's parameters count as a bracket up to its colon), and the counts of the open
/// brackets add up; twice that, plus three levels per indentation, is more than the depth of any
/// tree those tokens can make (a test checks it on every construct that nests). Flat data (a list
/// of a million numbers) counts almost nothing. Stops as soon as the estimate passes `stop_above`.
fn estimated_nesting(tokens: impl Iterator<Item = TokenKind>, stop_above: usize) -> usize {
    /// An open bracket (or lambda's parameters): its count, and whether a colon closes it.
    struct Open {
        count: usize,
        lambda: bool,
    }
    let mut open = vec![Open { count: 0, lambda: false }];
    let (mut counted, mut indent, mut deepest) = (0usize, 0usize, 0usize);
    for kind in tokens {
        let last = open.len() - 1;
        match kind {
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace | TokenKind::Lambda => {
                open[last].count += 1;
                open.push(Open { count: 1, lambda: kind == TokenKind::Lambda });
                counted += 2;
            }
            TokenKind::Colon if open[last].lambda => {
                counted -= open.pop().map_or(0, |closed| closed.count);
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                // Closes its bracket, and any lambda left open inside it (`(lambda x: x)`).
                while open.len() > 1 {
                    let closed = open.pop().expect("more than one");
                    counted -= closed.count;
                    if !closed.lambda {
                        break;
                    }
                }
            }
            TokenKind::Comma | TokenKind::Semi | TokenKind::Newline => {
                let base = usize::from(last > 0);
                counted -= open[last].count - base;
                open[last].count = base;
            }
            TokenKind::Indent => indent += 1,
            TokenKind::Dedent => indent = indent.saturating_sub(1),
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
            | TokenKind::Unknown => {}
            _ => {
                open[last].count += 1;
                counted += 1;
            }
        }
        deepest = deepest.max(2 * counted + 3 * indent + 8);
        if deepest > stop_above {
            break;
        }
    }
    deepest
}

/// Collects the direct children of the node it is asked to visit, and descends no further.
struct Children<'a>(Vec<AnyNodeRef<'a>>);

impl<'a> SourceOrderVisitor<'a> for Children<'a> {
    fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
        self.0.push(node);
        TraversalSignal::Skip
    }
}

/// The encoding a PEP 263 declaration in the first two lines names, unless it is UTF-8.
fn declared_encoding(bytes: &[u8]) -> Option<String> {
    bytes.split(|&b| b == b'\n').take(2).find_map(|line| {
        let line = String::from_utf8_lossy(line);
        let comment = line.trim_start_matches([' ', '\t', '\x0c']).strip_prefix('#')?;
        let at = comment.find("coding")? + "coding".len();
        let rest = comment[at..].strip_prefix([':', '='])?.trim_start_matches([' ', '\t']);
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).collect();
        let normal = name.to_ascii_lowercase().replace('_', "-");
        (!name.is_empty() && !matches!(normal.as_str(), "utf-8" | "utf8" | "utf-8-sig")).then_some(name)
    })
}

/// A message fit for a terminal: control characters from the file (a NUL byte the parser quotes)
/// are written as escapes.
fn printable(message: &str) -> String {
    message.chars().flat_map(|c| if c.is_control() { c.escape_default().collect() } else { vec![c] }).collect()
}

fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_string(),
        _ => err.to_string(),
    }
}

/// The byte offsets where `word` stands as a whole identifier in `text` (in code, strings and
/// comments alike: a caller that counts mentions errs towards "mentioned").
pub fn identifier_occurrences<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    let is_identifier = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(at, _)| at).filter(move |&at| {
        !text[..at].chars().next_back().is_some_and(is_identifier)
            && !text[at + word.len()..].chars().next().is_some_and(is_identifier)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_and_estimate(text: &str) -> (usize, usize) {
        let parsed = parse_module(text).unwrap_or_else(|err| panic!("{err}: {text}"));
        let exact = depth(parsed.syntax(), usize::MAX).expect("no limit");
        let estimate = estimated_nesting(parsed.tokens().iter().map(|token| token.kind()), usize::MAX);
        (exact, estimate)
    }

    /// The estimate that spares most files the exact measure must never be below it.
    #[test]
    fn the_token_estimate_is_never_below_the_depth_of_the_tree() {
        let n = 40;
        let chain = |unit: &str| unit.repeat(n);
        let cases = [
            format!("y = {}x", chain("-")),
            format!("y = {}x", chain("not ")),
            format!("y = x{}", chain(" + x")),
            format!("y = x{}", chain(" ** x")),
            format!("y = x{}", chain(".a")),
            format!("y = f{}", chain("()")),
            format!("y = x{}", chain("[0]")),
            format!("y = x{}", chain("[1:2]")),
            format!("y = {}x{}", chain("["), chain("]")),
            format!("y = {}x{}", chain("{1: "), chain("}")),
            format!("y = {}x{}", chain("(1, "), chain(")")),
            format!("y = {}x{}", chain("f(a="), chain(")")),
            format!("y = {}x{}", chain("f(*"), chain(")")),
            format!("y = {}x", chain("lambda a=1, *b, c=2, **d: ")),
            format!("y = {}x", chain("a if b else ")),
            format!("y = {}x{}", chain("[x for x in "), chain("]")),
            format!("y = {}x{}", chain("{x: y for x, y in "), chain("}")),
            format!("y = {}x{}", chain("(y := "), chain(")")),
            format!("y = {}x{}", chain("f'{"), chain("}'")),
            format!("async def f():\n    y = {}x{}", chain("await ("), chain(")")),
            format!("def f():\n    y = {}x{}", chain("(yield "), chain(")")),
            format!("@{}x{}\ndef f(): pass", chain("d("), chain(")")),
            format!("def f(a={}x{}): pass", chain("g(b="), chain(")")),
            format!("def f[T: {}x{}](): pass", chain("("), chain(",)")),
            format!("match x:\n    case {}x{}: pass", chain("A(b="), chain(")")),
            format!("match x:\n    case {}x{}: pass", chain("["), chain("]")),
            (0..n).map(|i| format!("{}if x:\n", " ".repeat(i))).collect::<String>() + &" ".repeat(n) + "pass",
            (0..n)
                .map(|i| format!("{}try:\n{} pass\n{}except E:\n", " ".repeat(i), " ".repeat(i), " ".repeat(i)))
                .collect::<String>()
                + &" ".repeat(n)
                + "pass",
            (0..n).map(|i| format!("{}def f(a=[1]) -> g(h):\n", " ".repeat(i))).collect::<String>()
                + &" ".repeat(n)
                + "pass",
            (0..n).map(|i| format!("{}with a as (b, c):\n", " ".repeat(i))).collect::<String>()
                + &" ".repeat(n)
                + "pass",
        ];
        for case in &cases {
            let (exact, estimate) = exact_and_estimate(case);
            assert!(estimate >= exact, "estimate {estimate} < depth {exact} for {case}");
            assert!(exact >= n, "the case nests: depth {exact} for {case}");
        }
        // Flat: long, but no deeper for it.
        for case in
            [format!("y = {}", chain("'a' ")), format!("y = {}b", chain("a < ")), format!("y = {}b", chain("a and "))]
        {
            let (exact, estimate) = exact_and_estimate(&case);
            assert!(estimate >= exact, "estimate {estimate} < depth {exact} for {case}");
        }
    }

    #[test]
    fn the_estimate_holds_on_every_codemod_fixture() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("codemods");
        let mut checked = 0;
        for rule in std::fs::read_dir(root).expect("codemods/") {
            for file in std::fs::read_dir(rule.expect("entry").path()).into_iter().flatten() {
                let path = file.expect("entry").path();
                if path.extension().is_some_and(|ext| ext == "py") {
                    let text = std::fs::read_to_string(&path).expect("fixture");
                    let (exact, estimate) = exact_and_estimate(&text);
                    assert!(estimate >= exact, "{}: estimate {estimate} < depth {exact}", path.display());
                    checked += 1;
                }
            }
        }
        assert!(checked > 50, "found the fixtures");
    }

    #[test]
    fn a_file_nested_too_deeply_is_refused_without_overflowing() {
        let deep = format!("y = {}x\n", "-".repeat(MAX_NESTING + 10));
        // Run on a small stack: neither the measure nor the refusal may recurse per level.
        let outcome = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || SourceFile::parse(Path::new("deep.py"), deep).err())
            .expect("thread")
            .join()
            .expect("no overflow, no panic");
        assert_eq!(outcome, Some(SourceError::TooDeep { line: Some(1) }));

        let huge = format!("y = {}x\n(\n", "-".repeat(2 * LEX_FIRST_FROM_BYTES));
        let outcome = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || SourceFile::parse(Path::new("huge.py"), huge).err())
            .expect("thread")
            .join()
            .expect("no overflow, no panic");
        assert_eq!(outcome, Some(SourceError::TooDeep { line: None }), "refused before the parser runs");
    }

    #[test]
    fn code_nested_as_deep_as_cpython_allows_is_accepted() {
        let text = format!("y = x{}\n", " + x".repeat(3000));
        assert!(SourceFile::parse(Path::new("wide.py"), text).is_ok());
        let data = format!("y = [{}]\n", "-1, ".repeat(2 * LEX_FIRST_FROM_BYTES / 4));
        assert!(SourceFile::parse(Path::new("data.py"), data).is_ok(), "a big flat table is not deep");
    }
}
