//! The edit that turns a Dynamo capture option on for a module: one line right after the
//! module's imports, `torch._dynamo.config.<option> = True` with the file's own name for `torch`.
//! Every finding of a file that the option fixes carries the same edit, so applying several of
//! them writes the line once (identical edits are shared, see `Edit::conflicts_with`).

use ruff_python_ast::Stmt;
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextSize};

use crate::fix::Edit;
use crate::fix::text::{line_ending, torch_name};
use crate::model::dynamo_config::Capture;
use crate::model::file::FileModel;

/// The edit that sets `capture` when the module is imported: the setting after the last import
/// that precedes the module's first `def` or `class` (and after the one that binds `torch`).
/// None where the module does not itself import torch unconditionally at module level: adding
/// the import would make importing it load torch, and after an optional import (`try: import
/// torch`, `if is_torch_available():`) the setting would fail where torch is missing.
pub fn setting_edits(model: &FileModel, capture: Capture) -> Vec<Edit> {
    let text = &model.source.text;
    let (torch, import) = torch_name(model);
    if import.is_some() {
        return Vec::new();
    }
    let setting = format!("{torch}._dynamo.config.{} = True", capture.option());
    let suite = model.source.parsed.suite();
    let Some(after) = last_import(suite, &torch) else {
        return Vec::new();
    };
    let end = text.full_line_end(after.end());
    let newline = line_ending(text, after.end());
    let at_end_without_newline = end == TextSize::of(text.as_str()) && !text.ends_with(['\n', '\r']);
    let content =
        if at_end_without_newline { format!("{newline}{setting}{newline}") } else { format!("{setting}{newline}") };
    vec![Edit::insert(end, content)]
}

/// The module-level statement the setting goes after: the last one holding an import before the
/// first `def`/`class`, or the plain `import` binding `torch` if that comes later; none when no
/// plain module-level `import` binds `torch`.
fn last_import<'a>(suite: &'a [Stmt], torch: &str) -> Option<&'a Stmt> {
    let binds_torch = |stmt: &&Stmt| {
        matches!(stmt, Stmt::Import(_) | Stmt::ImportFrom(_)) && holds_import(stmt, &|name| name == torch)
    };
    let binding = suite.iter().find(binds_torch)?;
    let before_definitions = suite.iter().take_while(|stmt| !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)));
    let last = before_definitions.filter(|stmt| holds_import(stmt, &|_| true)).last();
    Some(last.filter(|last| last.start() > binding.start()).unwrap_or(binding))
}

/// Whether the statement is an import (or an `if`/`try` block of them at module level) that binds
/// a name `binds` accepts.
fn holds_import(stmt: &Stmt, binds: &dyn Fn(&str) -> bool) -> bool {
    match stmt {
        Stmt::Import(import) => import.names.iter().any(|alias| {
            let bound = alias
                .asname
                .as_ref()
                .map_or_else(|| alias.name.id.as_str().split('.').next().unwrap_or_default(), |name| name.id.as_str());
            binds(bound)
        }),
        Stmt::ImportFrom(import) => import
            .names
            .iter()
            .any(|alias| binds(alias.asname.as_ref().map_or(alias.name.id.as_str(), |name| name.id.as_str()))),
        Stmt::If(if_stmt) => {
            if_stmt.body.iter().any(|s| holds_import(s, binds))
                || if_stmt.elif_else_clauses.iter().any(|clause| clause.body.iter().any(|s| holds_import(s, binds)))
        }
        Stmt::Try(try_stmt) => try_stmt.body.iter().any(|s| holds_import(s, binds)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::fix::edit::apply_edits;
    use crate::source::SourceFile;

    fn with_setting(text: &str) -> String {
        let source = SourceFile::parse(Path::new("m.py"), text.to_string()).unwrap();
        let model = FileModel::build(&source, "m");
        let edits = setting_edits(&model, Capture::ScalarOutputs);
        apply_edits(text, &edits.iter().collect::<Vec<_>>())
    }

    #[test]
    fn the_setting_goes_after_the_imports_with_the_files_torch_name() {
        let text = "\"\"\"Doc.\"\"\"\nimport torch as th\nfrom torch import nn  # nn\n\nlogger = 1\n\nclass A(nn.Module):\n    pass\n";
        assert_eq!(
            with_setting(text),
            "\"\"\"Doc.\"\"\"\nimport torch as th\nfrom torch import nn  # nn\nth._dynamo.config.capture_scalar_outputs = True\n\nlogger = 1\n\nclass A(nn.Module):\n    pass\n"
        );
    }

    #[test]
    fn crlf_and_a_try_block_of_imports() {
        let text = "import torch\r\ntry:\r\n    import apex\r\nexcept ImportError:\r\n    apex = None\r\nx = 1\r\n";
        assert_eq!(
            with_setting(text),
            "import torch\r\ntry:\r\n    import apex\r\nexcept ImportError:\r\n    apex = None\r\ntorch._dynamo.config.capture_scalar_outputs = True\r\nx = 1\r\n"
        );
    }

    #[test]
    fn a_module_that_does_not_import_torch_itself_gets_no_setting() {
        assert_eq!(with_setting("from torch import nn\n"), "from torch import nn\n");
        let optional = "try:\n    import torch\nexcept ImportError:\n    torch = None\n";
        assert_eq!(with_setting(optional), optional);
        let guarded = "from .utils import is_torch_available\nif is_torch_available():\n    import torch\n";
        assert_eq!(with_setting(guarded), guarded);
        assert_eq!(with_setting("import torch"), "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n");
    }
}
