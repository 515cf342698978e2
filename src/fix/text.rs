//! Writing new code into old text the way its neighbours are written: the same indentation,
//! the same line endings, nothing outside the edit touched.

use ruff_python_ast::token::TokenKind;
use ruff_python_trivia::{has_leading_content, has_trailing_content, indentation_at_offset};
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::fix::Edit;
use crate::model::file::{FileModel, FunctionNode};
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

/// How new code written at one place names `torch`, and the import it needs there.
pub struct TorchName {
    pub name: String,
    pub import: Option<Edit>,
    /// The import is a module-level `import torch` in a module that does not import torch when it
    /// is imported: a fix with it is not Safe (`NEW_MODULE_IMPORT` says why).
    pub new_module_import: bool,
}

/// Why a fix that adds `import torch` to a torch-free module's import is not Safe.
pub const NEW_MODULE_IMPORT: &str =
    "unsafe: adds a module-level `import torch` to a module that does not import torch when it is imported";

/// `torch_name` for new code at `at`, for a fix that may be Safe: a Safe fix never changes what
/// importing the module imports. Where the module binds `torch`, that name; where importing it
/// loads torch anyway (`from torch import nn`, an `nn.Module` subclass defined at module level), a
/// module-level `import torch`, which loads nothing new; otherwise (a torch-free module, or one that imports torch only inside
/// functions) the `import torch` of a def around `at`, or a new one as the first statement of the
/// innermost def whose body holds `at` — Dynamo traces a local import without a graph break
/// (measured with torch 2.15). Only where there is no such def (module-level code, a body on the
/// line of its `def`) does it fall back to the module-level import, marked `new_module_import`.
pub fn torch_name_at(model: &FileModel, at: TextSize) -> TorchName {
    let module_import = |new_module_import| {
        let (name, import) = torch_name(model);
        TorchName { name, import, new_module_import }
    };
    if model.imports.torch_alias().is_some() || importing_loads_torch(model) {
        return module_import(false);
    }
    let bodies = def_bodies_around(model, at);
    let imported = bodies.iter().any(|body| body.iter().any(|stmt| stmt.end() <= at && imports_torch(stmt)));
    if imported {
        return TorchName { name: "torch".to_string(), import: None, new_module_import: false };
    }
    match bodies.first().and_then(|body| local_torch_import(model, body)) {
        Some(import) => TorchName { name: "torch".to_string(), import: Some(import), new_module_import: false },
        None => module_import(true),
    }
}

/// Whether importing the module loads torch: it imports the torch package (under any name), or
/// defines an `nn.Module` subclass when it runs (`class Decoder(Block)`, `Block` a project module
/// class from another file: its base's module imports torch).
fn importing_loads_torch(model: &FileModel) -> bool {
    model.imports.imports_package("torch")
        || model.classes.iter().any(|class| class.is_module && !class.qualname.contains("<locals>"))
}

/// The bodies of the file's defs that hold `at`, innermost first.
fn def_bodies_around<'a>(model: &FileModel<'a>, at: TextSize) -> Vec<&'a [ruff_python_ast::Stmt]> {
    let mut bodies: Vec<&[ruff_python_ast::Stmt]> = model
        .functions
        .iter()
        .filter_map(|function| match function.node {
            FunctionNode::Def(def) => Some(def.body.as_slice()),
            FunctionNode::Lambda(_) => None,
        })
        .filter(|body| match (body.first(), body.last()) {
            (Some(first), Some(last)) => TextRange::new(first.start(), last.end()).contains_inclusive(at),
            _ => false,
        })
        .collect();
    bodies.sort_by_key(|body| std::cmp::Reverse(body[0].start()));
    bodies
}

/// `import torch`, which binds `torch` where it runs.
fn imports_torch(stmt: &ruff_python_ast::Stmt) -> bool {
    matches!(stmt, ruff_python_ast::Stmt::Import(import)
        if import.names.iter().any(|alias| alias.name.id.as_str() == "torch" && alias.asname.is_none()))
}

/// The edit putting `import torch` first in a def's body (after its docstring); `None` when the
/// body shares the line of its `def`.
fn local_torch_import(model: &FileModel, body: &[ruff_python_ast::Stmt]) -> Option<Edit> {
    use ruff_python_ast::Stmt;
    let text = &model.source.text;
    let docstring = body.first().filter(|stmt| is_docstring_or_future(stmt) && matches!(stmt, Stmt::Expr(_)));
    let first = body.get(usize::from(docstring.is_some()));
    match (first, docstring) {
        (Some(stmt), _) => {
            let indent = indentation_at_offset(stmt.start(), text)?;
            let newline = line_ending(text, stmt.start());
            Some(Edit::insert(text.line_start(stmt.start()), format!("{indent}import torch{newline}")))
        }
        (None, Some(docstring)) => {
            let indent = indentation_at_offset(docstring.start(), text)?;
            (!has_trailing_content(docstring.end(), text))
                .then(|| insert_line_after(text, docstring.range(), indent, "import torch"))
        }
        (None, None) => None,
    }
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

    /// `torch_name_at` where `marker` is: the name, the text with its import, and whether that is a
    /// new module-level import.
    fn torch_at(text: &str, marker: &str) -> (String, String, bool) {
        let source = SourceFile::parse(Path::new("t.py"), text.to_string()).unwrap();
        let model = crate::model::file::FileModel::build(&source, "t");
        let at = ruff_text_size::TextSize::try_from(text.find(marker).unwrap()).unwrap();
        let torch = super::torch_name_at(&model, at);
        let fixed = apply_edits(text, &torch.import.iter().collect::<Vec<_>>());
        (torch.name, fixed, torch.new_module_import)
    }

    #[test]
    fn a_module_that_imports_the_torch_package_gets_a_module_level_import() {
        let text = "from torch import nn


def f(x):
    print(x)
";
        let (name, fixed, new) = torch_at(text, "print");
        assert_eq!((name.as_str(), new), ("torch", false));
        assert_eq!(
            fixed,
            format!(
                "import torch
{text}"
            )
        );
        let aliased = "import torch as T


def f(x):
    print(x)
";
        assert_eq!(torch_at(aliased, "print"), ("T".to_string(), aliased.to_string(), false));
    }

    #[test]
    fn a_torch_free_module_gets_a_local_import_in_the_function() {
        let text = "\"\"\"Doc.\"\"\"\n\n\ndef f(x):\r\n\t\"\"\"Doc.\"\"\"\r\n\tprint(x)\r\n";
        let (_, fixed, new) = torch_at(text, "print");
        assert!(!new);
        assert_eq!(fixed, text.replace("\tprint", "\timport torch\r\n\tprint"));
        // Under `if TYPE_CHECKING:` the import does not run: still torch-free.
        let typing =
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n\ndef f(x):\n    print(x)\n";
        assert_eq!(torch_at(typing, "print").1, typing.replace("    print", "    import torch\n    print"));
    }

    #[test]
    fn an_import_in_an_enclosing_function_is_reused() {
        let text = "def outer():\n    import torch\n\n    def inner(x):\n        print(x)\n\n    return inner\n";
        assert_eq!(torch_at(text, "print(x)"), ("torch".to_string(), text.to_string(), false));
        // One that comes later does not bind the name in time to be relied on.
        let later = "def outer():\n    def inner(x):\n        print(x)\n\n    import torch\n    return inner\n";
        assert_eq!(
            torch_at(later, "print(x)").1,
            later.replace("        print", "        import torch\n        print")
        );
    }

    #[test]
    fn module_level_code_of_a_torch_free_module_needs_a_new_module_import() {
        let text = "\"\"\"Doc.\"\"\"\n\ndef hook(m, i, o):\n    return o\n";
        let (_, fixed, new) = torch_at(text, "def hook");
        assert!(new, "only a module-level import makes a decorator on a module-level def work");
        assert_eq!(fixed, "\"\"\"Doc.\"\"\"\n\nimport torch\ndef hook(m, i, o):\n    return o\n");
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
