//! Writing new code into old text the way its neighbours are written: the same indentation,
//! the same line endings, nothing outside the edit touched.

use ruff_python_ast::token::TokenKind;
use ruff_python_trivia::{has_leading_content, has_trailing_content, indentation_at_offset};
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::fix::Edit;
use crate::model::file::FileModel;
use crate::source::SourceFile;

/// The line ending used by the line at `offset` (or, on a last line without one, the file's).
pub fn line_ending(text: &str, offset: TextSize) -> &'static str {
    let end = text.full_line_end(offset).to_usize();
    let line = &text[text.line_start(offset).to_usize()..end];
    if line.ends_with("\r\n") {
        "\r\n"
    } else if line.ends_with('\n') {
        "\n"
    } else if line.ends_with('\r') {
        "\r"
    } else if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// One level of indentation as this file writes it (four spaces, two, a tab...).
pub fn indent_unit(source: &SourceFile) -> String {
    let first_indent = source.parsed.tokens().iter().find(|token| token.kind() == TokenKind::Indent);
    first_indent
        .map(|token| source.text[token.range()].to_string())
        .filter(|unit| !unit.is_empty() && unit.chars().all(|c| c == ' ' || c == '\t'))
        .unwrap_or_else(|| "    ".to_string())
}

/// The indentation one block adds, as the block at `body` (opened by the header at `header`)
/// writes it; otherwise the file's.
pub fn block_indent_unit(source: &SourceFile, header: TextSize, body: TextSize) -> String {
    let outer = indentation(&source.text, header);
    let inner = indentation(&source.text, body);
    match inner.strip_prefix(outer) {
        Some(unit) if !unit.is_empty() => unit.to_string(),
        _ => indent_unit(source),
    }
}

/// The whitespace before the first character of the line holding `offset`.
pub fn indentation(text: &str, offset: TextSize) -> &str {
    let start = text.line_start(offset);
    let line = &text[TextRange::new(start, text.line_end(offset))];
    &line[..line.len() - line.trim_start_matches([' ', '\t', '\x0c']).len()]
}

/// Whether a statement has its lines to itself (a trailing comment is fine), so that a block
/// can be opened around it or a line added after it.
pub fn stands_alone(text: &str, range: TextRange) -> bool {
    indentation_at_offset(range.start(), text).is_some()
        && !has_leading_content(range.start(), text)
        && !has_trailing_content(range.end(), text)
}

/// Edits that put the statement at `range` under `if {condition}:`, indenting its continuation
/// lines too — except lines inside a multi-line string, whose text must not change.
pub fn wrap_in_if(source: &SourceFile, range: TextRange, condition: &str, unit: &str) -> Option<Vec<Edit>> {
    let text = &source.text;
    if !stands_alone(text, range) {
        return None;
    }
    let indent = indentation(text, range.start());
    let newline = line_ending(text, range.start());
    let mut edits = vec![Edit::insert(range.start(), format!("if {condition}:{newline}{indent}{unit}"))];
    let mut offset = text.full_line_end(range.start());
    while offset < range.end() {
        if !inside_string(source, offset) {
            edits.push(Edit::insert(offset, unit));
        }
        offset = text.full_line_end(offset);
    }
    Some(edits)
}

/// Whether `offset` falls inside a string token (a line of a multi-line string), whose text must
/// not change.
pub fn inside_string(source: &SourceFile, offset: TextSize) -> bool {
    let tokens = source.parsed.tokens();
    let after = tokens.partition_point(|token| token.end() <= offset);
    tokens.get(after).is_some_and(|token| {
        token.start() < offset
            && matches!(token.kind(), TokenKind::String | TokenKind::FStringMiddle | TokenKind::TStringMiddle)
    })
}

/// An edit adding `code` as a new line after the statement at `after`, indented like `indent`.
pub fn insert_line_after(text: &str, after: TextRange, indent: &str, code: &str) -> Edit {
    let newline = line_ending(text, after.end());
    Edit::insert(text.line_end(after.end()), format!("{newline}{indent}{code}"))
}

/// An edit adding `@{decorator}` above a def (and above its existing decorators).
pub fn insert_decorator(text: &str, def_start: TextSize, decorator: &str) -> Edit {
    let indent = indentation(text, def_start);
    let newline = line_ending(text, def_start);
    Edit::insert(text.line_start(def_start), format!("{indent}@{decorator}{newline}"))
}

/// The name to write for the `torch` package, plus the `import torch` edit a file that lacks one
/// needs. The import goes after the module docstring and `__future__` imports.
pub fn torch_name(model: &FileModel) -> (String, Option<Edit>) {
    if let Some(alias) = model.imports.torch_alias() {
        return (alias.to_string(), None);
    }
    let text = &model.source.text;
    let suite = model.source.parsed.suite();
    let first_code = suite.iter().position(|stmt| !is_docstring_or_future(stmt)).unwrap_or(suite.len());
    let edit = match suite.get(first_code) {
        Some(stmt) => {
            let newline = line_ending(text, stmt.start());
            Edit::insert(text.line_start(stmt.start()), format!("import torch{newline}"))
        }
        None => {
            let newline = line_ending(text, TextSize::of(text.as_str()));
            let needs_break = !text.is_empty() && !text.ends_with(['\n', '\r']);
            let prefix = if needs_break { newline } else { "" };
            Edit::insert(TextSize::of(text.as_str()), format!("{prefix}import torch{newline}"))
        }
    };
    ("torch".to_string(), Some(edit))
}

fn is_docstring_or_future(stmt: &ruff_python_ast::Stmt) -> bool {
    use ruff_python_ast::{Expr, Stmt};
    match stmt {
        Stmt::Expr(expr) => matches!(expr.value.as_ref(), Expr::StringLiteral(_)),
        Stmt::ImportFrom(import) => import.module.as_ref().is_some_and(|m| m.id.as_str() == "__future__"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::fix::edit::apply_edits;
    use crate::source::SourceFile;

    fn wrap(text: &str, statement: &str) -> String {
        let source = SourceFile::parse(Path::new("t.py"), text.to_string()).unwrap();
        let start = text.find(statement).unwrap();
        let range = ruff_text_size::TextRange::at((start as u32).into(), (statement.len() as u32).into());
        let unit = super::indent_unit(&source);
        let edits = super::wrap_in_if(&source, range, "c", &unit).expect("the statement stands alone");
        apply_edits(text, &edits.iter().collect::<Vec<_>>())
    }

    #[test]
    fn wrapping_keeps_crlf_tabs_and_bom() {
        let text = "\u{feff}def f(x):\r\n\tprint(x)  # keep\r\n\treturn x\r\n";
        assert_eq!(wrap(text, "print(x)"), "\u{feff}def f(x):\r\n\tif c:\r\n\t\tprint(x)  # keep\r\n\treturn x\r\n");
    }

    #[test]
    fn wrapping_indents_continuation_lines_but_not_string_contents() {
        let text = "def f(x):\n    print(\"\"\"a\nb\"\"\",\n          x)\n";
        let statement = "print(\"\"\"a\nb\"\"\",\n          x)";
        assert_eq!(wrap(text, statement), "def f(x):\n    if c:\n        print(\"\"\"a\nb\"\"\",\n              x)\n");
    }

    #[test]
    fn a_statement_sharing_its_line_is_not_wrapped() {
        let text = "def f(x): print(x); return x\n";
        let source = SourceFile::parse(Path::new("t.py"), text.to_string()).unwrap();
        let start = text.find("print").unwrap() as u32;
        let range = ruff_text_size::TextRange::at(start.into(), 8.into());
        assert!(super::wrap_in_if(&source, range, "c", "    ").is_none());
    }
}
