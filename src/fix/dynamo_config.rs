//! One setting, one place: a Dynamo capture option holds for the whole process, so the findings
//! it removes (TCF103, TCF106) are grouped, and the setting is written once, where the project
//! calls `torch.compile`, with a comment saying why. A project with no script that compiles (a
//! library, or one that compiles inside its library modules) gets the setting as advice: a library module that set it would flip it for every program that
//! imports it. `write_setting` is the edit; `ProjectSetting` is what a finding carries.

use ruff_python_ast::{self as ast, Stmt};
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextSize};

use crate::fix::Edit;
use crate::fix::text::{line_ending, torch_name, torch_name_at};
use crate::model::compiled::compile_calls::first_compile_statement;
use crate::model::file::FileModel;
use crate::model::file::configured::Capture;
/// A finding that one process-wide option removes: which option, and the file where the project
/// compiles (where `--unsafe-fixes` writes it), if it compiles anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectSetting {
    pub capture: Capture,
    pub written_in: Option<String>,
}

impl ProjectSetting {
    /// The setting's statement, with `torch` as the project spells it most often.
    pub fn statement(&self) -> String {
        format!("torch._dynamo.config.{} = True", self.capture.option())
    }

    /// What a finding of the file at `path` says instead of a fix of its own.
    pub fn advice(&self, path: &std::path::Path) -> String {
        let statement = self.statement();
        match &self.written_in {
            Some(written_in) if *written_in == path.display().to_string() => format!(
                "removed by one process-wide setting, `{statement}`, that `--unsafe-fixes` writes once in this file, \
                 before its `torch.compile`"
            ),
            Some(path) => format!(
                "removed by one process-wide setting, `{statement}`, that `--unsafe-fixes` writes once in `{path}`, \
                 where the project calls `torch.compile`"
            ),
            None => format!(
                "removed by one process-wide setting: put `{statement}` in your program before it compiles (no \
                 script of this project calls `torch.compile`)"
            ),
        }
    }

    /// The report's one line for the `findings` in `files` files it removes.
    pub fn summary(&self, findings: usize, files: usize) -> String {
        let (finding, file) = (plural(findings, "finding"), plural(files, "file"));
        let statement = self.statement();
        let place = match &self.written_in {
            Some(path) => format!("`--unsafe-fixes` writes it once, in {path}, where the project calls torch.compile"),
            None => {
                "set it in your program before it compiles: no script of this project calls torch.compile".to_string()
            }
        };
        let are = if findings == 1 { "is" } else { "are" };
        format!("{findings} {finding} in {files} {file} {are} removed by one setting: {statement} ({place})")
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { noun.to_string() } else { format!("{noun}s") }
}

/// The edits that set each option of `settings` (with the number of findings it removes) in the
/// file that compiles: just before the statement of its first `torch.compile`, indented like it,
/// or, where that statement does not start its line, after the module's imports. Each setting
/// comes with a comment saying why. None where neither place can take it.
pub fn write_setting(model: &FileModel, settings: &[(Capture, usize)]) -> Option<Vec<Edit>> {
    let text = &model.source.text;
    let lines = |torch: &str, indent: &str, newline: &str| -> String {
        settings
            .iter()
            .map(|(capture, count)| {
                let places = plural(*count, "place");
                format!(
                    "{indent}# tcfix: lets Dynamo trace {} in {count} {places} instead of breaking the graph{newline}\
                     {indent}{torch}._dynamo.config.{} = True{newline}",
                    capture.traces(),
                    capture.option()
                )
            })
            .collect()
    };
    // Just before the compile when it runs at import, at module level; a compile inside a function
    // may never run (a helper nobody calls), so the setting then goes after the imports.
    let at_module_level =
        |statement: &&Stmt| model.source.parsed.suite().iter().any(|top| top.range() == statement.range());
    if let Some(statement) = first_compile_statement(model).filter(at_module_level) {
        let start = decorated_start(statement);
        let line_start = text.line_start(start);
        let indent = &text[ruff_text_size::TextRange::new(line_start, start)];
        if indent.chars().all(|c| c == ' ' || c == '\t') {
            let torch = torch_name_at(model, start);
            let newline = line_ending(text, start);
            let mut edits = vec![Edit::insert(line_start, lines(&torch.name, indent, newline))];
            edits.extend(torch.import);
            return Some(edits);
        }
    }
    let (torch, import) = torch_name(model);
    if import.is_some() {
        return None;
    }
    let after = last_import(model.source.parsed.suite(), &torch)?;
    let end = text.full_line_end(after.end());
    let newline = line_ending(text, after.end());
    let at_end_without_newline = end == TextSize::of(text.as_str()) && !text.ends_with(['\n', '\r']);
    let content = lines(&torch, "", newline);
    Some(vec![Edit::insert(end, if at_end_without_newline { format!("{newline}{content}") } else { content })])
}

/// Where a statement starts, its decorators included.
fn decorated_start(statement: &Stmt) -> TextSize {
    let decorators: &[ast::Decorator] = match statement {
        Stmt::FunctionDef(def) => &def.decorator_list,
        Stmt::ClassDef(class) => &class.decorator_list,
        _ => &[],
    };
    decorators.first().map_or(statement.start(), |decorator| decorator.start())
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
    use crate::model::compiled::dynamo_config::sets;
    use crate::source::SourceFile;

    fn with_setting(text: &str) -> String {
        let source = SourceFile::parse(Path::new("train.py"), text.to_string()).unwrap();
        let model = FileModel::build(&source, "train");
        let edits = write_setting(&model, &[(Capture::ScalarOutputs, 3)]).unwrap_or_default();
        let fixed = apply_edits(text, &edits.iter().collect::<Vec<_>>());
        let again = SourceFile::parse(Path::new("train.py"), fixed.clone()).unwrap();
        assert!(
            edits.is_empty() || sets(&FileModel::build(&again, "train"), Capture::ScalarOutputs),
            "a second run must see the setting: {fixed}"
        );
        fixed
    }

    #[test]
    fn the_setting_goes_just_before_a_compile_at_module_level_with_a_comment() {
        let text = "import torch as th\nfrom m import Net\n\nmodel = Net()\nfast = th.compile(model)\n";
        assert_eq!(
            with_setting(text),
            "import torch as th\nfrom m import Net\n\nmodel = Net()\n# tcfix: lets Dynamo trace \
             `.item()`/`.tolist()` in 3 places instead of breaking the graph\n\
             th._dynamo.config.capture_scalar_outputs = True\nfast = th.compile(model)\n"
        );
    }

    #[test]
    fn a_compile_inside_a_function_gets_it_after_the_imports() {
        // The function may never run (a helper nobody calls): the import of the script always does.
        let text =
            "import torch as th\n\ndef main(model):\n    model.eval()\n    fast = th.compile(model)\n    return fast\n";
        assert_eq!(
            with_setting(text),
            "import torch as th\n# tcfix: lets Dynamo trace `.item()`/`.tolist()` in 3 places instead of breaking \
             the graph\nth._dynamo.config.capture_scalar_outputs = True\n\ndef main(model):\n    model.eval()\n    \
             fast = th.compile(model)\n    return fast\n"
        );
    }

    #[test]
    fn a_compiling_decorator_gets_it_above_the_decorators_crlf_kept() {
        let text = "import torch\r\n\r\n@torch.compile\r\ndef step(x):\r\n    return x\r\n";
        assert_eq!(
            with_setting(text),
            "import torch\r\n\r\n# tcfix: lets Dynamo trace `.item()`/`.tolist()` in 3 places instead of breaking the \
             graph\r\ntorch._dynamo.config.capture_scalar_outputs = True\r\n@torch.compile\r\ndef step(x):\r\n    \
             return x\r\n"
        );
    }

    #[test]
    fn a_compile_that_does_not_start_its_line_gets_it_after_the_imports() {
        let text = "import torch\nimport os\nif os.environ.get('FAST'): model = torch.compile(model)\n";
        assert_eq!(
            with_setting(text),
            "import torch\nimport os\n# tcfix: lets Dynamo trace `.item()`/`.tolist()` in 3 places instead of breaking \
             the graph\ntorch._dynamo.config.capture_scalar_outputs = True\nif os.environ.get('FAST'): model = \
             torch.compile(model)\n"
        );
    }

    #[test]
    fn a_compile_in_a_test_function_is_not_where_it_goes() {
        let text = "import torch\n\ndef test_fast(model):\n    torch.compile(model)\n";
        let fixed = with_setting(text);
        assert!(fixed.starts_with("import torch\n# tcfix:"), "{fixed}");
    }
}
