//! `tcfix why PATH:LINE[:COL]`: what tcfix knows about one line. Whether it runs under
//! torch.compile (through which entry point and chain of calls, or why not), what each name on it
//! is taken for and from what evidence, and which rules looked at it and what each concluded.
//! Everything here is read from the same model the rules use; nothing is guessed again.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_source_file::{LineIndex, OneIndexed};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::diagnostic::Diagnostic;
use crate::discover::discover;
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_all, visit_function};
use crate::model::compiled::reach::mark_region;
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, Reason};
use crate::model::index::{ProjectIndex, module_name};
use crate::model::tensors::tensor::{Binding, Tensors, bindings, is_python_value};
use crate::rules::Category;
use crate::rules::{RULES, Rule, Settings};
use crate::source::SourceFile;
use crate::suppress::Suppressions;

/// `PATH:LINE` or `PATH:LINE:COL` (both 1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub path: PathBuf,
    pub line: usize,
    pub column: Option<usize>,
}

impl Place {
    pub fn parse(place: &str) -> Result<Place> {
        let number = |text: &str| text.parse::<usize>().ok().filter(|n| *n > 0);
        let wrong = || anyhow!("`{place}`: name a line as PATH:LINE or PATH:LINE:COL (`models/net.py:42`)");
        let (rest, last) = place.rsplit_once(':').ok_or_else(wrong)?;
        let last = number(last).ok_or_else(wrong)?;
        match rest.rsplit_once(':').map(|(path, line)| (path, number(line))) {
            Some((path, Some(line))) if !path.is_empty() => {
                Ok(Place { path: PathBuf::from(path), line, column: Some(last) })
            }
            _ if !rest.is_empty() => Ok(Place { path: PathBuf::from(rest), line: last, column: None }),
            _ => Err(wrong()),
        }
    }
}

/// Whether the line runs under torch.compile.
#[derive(Debug, Clone, PartialEq)]
pub enum Compiled {
    /// In `function`, reached from an entry point through `chain` (entry point first).
    Yes {
        function: String,
        entry: String,
        chain: Vec<String>,
    },
    /// In compiled code, on a path a normal compiled call does not take.
    DeadPath {
        function: String,
        reason: String,
    },
    No(String),
}

/// A name on the line: what it is taken for, and the evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub name: String,
    pub taken_for: String,
    pub evidence: Vec<String>,
}

/// What one rule concluded about the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub rule: &'static Rule,
    pub reported: bool,
    pub said: String,
}

#[derive(Debug, Clone)]
pub struct Answer {
    pub place: String,
    pub code: String,
    pub compiled: Compiled,
    pub names: Vec<Name>,
    pub rules: Vec<Verdict>,
    /// The file is not among the project's files: only its own calls were followed.
    pub outside_project: bool,
}

/// Answer `tcfix why` for `place`, with `project` the paths whose files tell the compile map.
pub fn why(place: &Place, project: &[PathBuf], settings: &Settings) -> Result<Answer> {
    let text =
        std::fs::read_to_string(&place.path).with_context(|| format!("{}: cannot read", place.path.display()))?;
    why_in_text(place, text, project, settings)
}

/// `why` for a file whose text is `text` (an editor's buffer, which may differ from the disk).
pub fn why_in_text(place: &Place, text: String, project: &[PathBuf], settings: &Settings) -> Result<Answer> {
    let lines = LineIndex::from_source_text(&text);
    let count = text.lines().count();
    if place.line > count {
        bail!("{}: has {count} lines, not {}", place.path.display(), place.line);
    }
    let (path, facts, outside_project) = facts_of(&place.path, &text, project)?;
    let source = SourceFile::parse(&path, text.clone()).map_err(|error| anyhow!("{}: {error}", path.display()))?;
    let mut model = FileModel::build(&source, &module_name(&path));
    mark_region(&mut model, &facts);
    let range = line_range(&text, &lines, place.line);
    let line_start = lines.line_start(OneIndexed::new(place.line).expect("checked above"), &text);
    let column = place.column.map(|column| line_start + TextSize::from((column - 1) as u32));
    let function = function_at(&model, range.start());
    let compiled = compiled(&model, function, range);
    let names = match function {
        Some(function) => names_on(&model, function, range, column),
        None => Vec::new(),
    };
    let rules = verdicts(&model, settings, &compiled, range, &lines);
    Ok(Answer {
        place: format!("{}:{}", place.path.display(), place.line),
        code: text[range].to_string(),
        compiled,
        names,
        rules,
        outside_project,
    })
}

/// What the project index knows of the file, from the project's files (the file itself added
/// when it lies outside them).
fn facts_of(file: &Path, text: &str, project: &[PathBuf]) -> Result<(PathBuf, crate::model::file::facts::Facts, bool)> {
    let wanted = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let mut files = discover(project).files;
    let position = files.iter().position(|path| path.canonicalize().is_ok_and(|path| path == wanted));
    let outside = position.is_none();
    let position = position.unwrap_or_else(|| {
        files.push(file.to_path_buf());
        files.len() - 1
    });
    let mut summaries = Vec::new();
    let mut target = None;
    for (index, path) in files.iter().enumerate() {
        let Ok(read) = (if index == position { Ok(text.to_string()) } else { std::fs::read_to_string(path) }) else {
            continue;
        };
        if let Ok(summary) = crate::summarise(path, read) {
            if index == position {
                target = Some(summaries.len());
            }
            summaries.push(summary);
        }
    }
    let target = target.ok_or_else(|| anyhow!("{}: does not parse", file.display()))?;
    let facts = ProjectIndex::new(summaries).facts().swap_remove(target);
    Ok((files.swap_remove(position), facts, outside))
}

/// The line's text without its indentation and line break.
fn line_range(text: &str, lines: &LineIndex, line: usize) -> TextRange {
    let line = OneIndexed::new(line).expect("checked above");
    let start = lines.line_start(line, text);
    let content = &text[TextRange::new(start, lines.line_end(line, text))];
    let indent = TextSize::from((content.len() - content.trim_start().len()) as u32);
    TextRange::new(start + indent, start + TextSize::from(content.trim_end().len() as u32))
}

/// The innermost function whose code holds `offset`.
fn function_at(model: &FileModel, offset: TextSize) -> Option<usize> {
    (0..model.functions.len())
        .filter(|&index| model.function(index).node.range().contains(offset))
        .min_by_key(|&index| model.function(index).node.range().len())
}

fn compiled(model: &FileModel, function: Option<usize>, range: TextRange) -> Compiled {
    let Some(function) = function else {
        return Compiled::No("module-level code: it runs when the module is imported, not under torch.compile".into());
    };
    let qualname = model.function(function).qualname.clone();
    if let Some(reason) = model.dead_code.covering(range) {
        return Compiled::DeadPath { function: qualname, reason: reason.to_string() };
    }
    match model.region.get(&function) {
        Some(_) if only_eager(model, function, range) => Compiled::No(
            "the function is compiled, but this line runs only eagerly: it sits under a guard that is false under \
             Dynamo (`if not torch.compiler.is_compiling():`, `if torch.jit.is_scripting():`), or after \
             `if torch.compiler.is_compiling(): return`"
                .into(),
        ),
        Some(reason) => {
            let (entry, chain) = chain_of(model, function, reason);
            Compiled::Yes { function: qualname, entry, chain }
        }
        None => Compiled::No(why_not_reached(model, function)),
    }
}

/// Whether a statement starts on the line in the function's code and the walk of its compiled
/// code (which skips what only runs eagerly) never reaches it.
fn only_eager(model: &FileModel, function: usize, line: TextRange) -> bool {
    struct Starts {
        line: TextRange,
        found: bool,
    }
    impl<'a> CompiledCodeVisitor<'a> for Starts {
        fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
            self.found |= self.line.contains(stmt.start());
        }
    }
    let mut compiled = Starts { line, found: false };
    visit_function(model, function, &mut compiled);
    let mut all = Starts { line, found: false };
    visit_all(model.function(function).node.body(), &mut all);
    all.found && !compiled.found
}

/// The entry point and the functions from it to `function`, following who called whom.
fn chain_of(model: &FileModel, function: usize, reason: &Reason) -> (String, Vec<String>) {
    let mut chain = vec![model.function(function).qualname.clone()];
    let mut reason = reason.clone();
    while let Reason::CalledFrom(caller) = &reason {
        chain.push(caller.clone());
        let next = (0..model.functions.len()).find(|&index| &model.function(index).qualname == caller);
        match next.and_then(|index| model.region.get(&index)) {
            Some(next) if chain.len() <= 32 && !chain[..chain.len() - 1].contains(caller) => reason = next.clone(),
            // A caller in another file: the chain continues there.
            _ => return (format!("called from `{caller}`"), chain.into_iter().rev().collect()),
        }
    }
    let entry = match &reason {
        Reason::Forward => "the forward of an nn.Module".to_string(),
        other => other.to_string(),
    };
    (entry, chain.into_iter().rev().collect())
}

fn why_not_reached(model: &FileModel, function: usize) -> String {
    let f = model.function(function);
    if f.disabled {
        return format!("`{}` is decorated so that Dynamo does not trace it", f.qualname);
    }
    if let Some(class) = f.class.map(|class| &model.classes[class]) {
        if f.name == "__init__" {
            return format!("`{}` builds the module: it runs before compiling, not under torch.compile", f.qualname);
        }
        if class.never_built {
            return format!("not reached: nothing builds `{}`", class.qualname);
        }
        if class.forward_replaced {
            return format!("not reached: a decorator of `{}` replaces its forward", class.qualname);
        }
        if class.outside_compile_scope {
            return format!(
                "not reached: the project's own compile calls compile other modules (their blocks, say), \
                 never `{}` nor anything that holds it",
                class.qualname
            );
        }
    }
    format!(
        "not reached: no compiled entry point (an nn.Module's forward, a forward hook, a torch.compile'd function) \
         calls `{}`, as far as the project's calls show",
        f.qualname
    )
}

/// Each distinct name and `self.<attr>` the line uses, with what it is taken for.
fn names_on(model: &FileModel, function: usize, range: TextRange, column: Option<TextSize>) -> Vec<Name> {
    let mut collector = NameCollector { range, column, found: Vec::new(), calls: Vec::new() };
    for stmt in model.source.parsed.suite() {
        collector.visit_stmt(stmt);
    }
    let tensors = Tensors::of(model, function);
    let bound = bindings(model, function);
    let mut names: Vec<Name> = Vec::new();
    for expr in collector.found {
        let shown = model.source.text[expr.range()].to_string();
        if names.iter().any(|name| name.name == shown) {
            continue;
        }
        let name = match expr {
            Expr::Name(name) => {
                let evidence =
                    bound.get(name.id.as_str()).map(|b| describe_bindings(model, &tensors, b)).unwrap_or_default();
                let mut evidence = evidence;
                match tensors.passed_by_callers(function, name.id.as_str()) {
                    Some(true) => evidence.push("its compiled callers in the file pass it tensors".into()),
                    Some(false) => evidence.push("every compiled caller in the file passes it a Python value".into()),
                    None => {}
                }
                Name {
                    taken_for: taken_for(model, &tensors, expr, bound.contains_key(name.id.as_str())),
                    name: shown,
                    evidence,
                }
            }
            Expr::Attribute(attr) => {
                let call = collector.calls.iter().find(|call| call.func.range() == expr.range());
                self_attribute(&tensors, expr, attr.attr.as_str(), call.copied(), shown)
            }
            _ => continue,
        };
        names.push(name);
    }
    names
}

/// `self.<attr>`: a parameter or buffer, a submodule, or what its call on the line is taken for.
fn self_attribute(tensors: &Tensors, expr: &Expr, attr: &str, call: Option<&ast::ExprCall>, shown: String) -> Name {
    let assigned = "the class assigns it a buffer or a parameter (`register_buffer`, `nn.Parameter`, a tensor)";
    let (taken_for, evidence) = if tensors.is_tensor_attribute(expr) {
        ("a parameter or buffer of the module (a tensor)", assigned)
    } else if tensors.is_submodule(attr) {
        ("a submodule (calling it gives a tensor)", "the class assigns it a module (`nn.Linear(...)`, a module class)")
    } else if call.is_some_and(|call| tensors.is_tensor_call(call)) {
        (
            "called here, its result taken for a tensor",
            "any `self.<attr>(...)` of a module is taken for a submodule's output; the class does not show what it holds",
        )
    } else {
        (
            "an attribute of the module, not known to be a tensor or a submodule",
            "the class assigns it no buffer, parameter or module that tcfix recognises",
        )
    };
    Name { name: shown, taken_for: taken_for.into(), evidence: vec![evidence.into()] }
}

fn taken_for(model: &FileModel, tensors: &Tensors, expr: &Expr, local: bool) -> String {
    let Expr::Name(name) = expr else { return String::new() };
    let id = name.id.as_str();
    if tensors.is_mask(expr) {
        "a mask (a boolean tensor)".to_string()
    } else if tensors.is_zero_dim(expr) {
        "a 0-d tensor".to_string()
    } else if tensors.is_tensor(expr) {
        "a tensor".to_string()
    } else if local {
        "a Python value, or a value not known to be a tensor (taken for not a tensor)".to_string()
    } else if let Some(imported) = model.imports.get(id) {
        format!("an imported name (`{imported}`)")
    } else if model.resolve_name(id, None).is_some() {
        "a function of this file".to_string()
    } else if model.class_named(id).is_some() {
        "a class of this file".to_string()
    } else if id == "self" {
        "the module itself".to_string()
    } else {
        "a builtin or a global: not a tensor".to_string()
    }
}

fn describe_bindings(model: &FileModel, tensors: &Tensors, found: &[Binding]) -> Vec<String> {
    let at = |expr: &Expr| {
        let line = LineIndex::from_source_text(&model.source.text).line_index(expr.start());
        let code = crate::diagnostic::snippet(&model.source.text[expr.range()]);
        format!("line {line}: `{code}`")
    };
    found
        .iter()
        .map(|binding| match binding {
            Binding::Value(value) if is_python_value(value) => format!("{}: a Python value", at(value)),
            Binding::Value(value) if tensors.is_tensor(value) => format!("{}: a tensor", at(value)),
            Binding::Value(value) => format!("{}: says nothing either way", at(value)),
            Binding::Element(value) => format!("{}: unpacked from it (a tensor only when it is one)", at(value)),
            Binding::UsedAsTensor => {
                "used as a tensor (a method only a tensor has, or an operand of a tensor op)".into()
            }
            Binding::AnnotatedTensor => "a parameter annotated as a tensor".into(),
            Binding::AnnotatedMask => "a parameter annotated as a boolean tensor".into(),
            Binding::Row(iterated) => format!("{}: a `for` target over it", at(iterated)),
            Binding::Presumed => "a positional input of a compiled entry point, without a default: presumed a tensor \
                                  (the code does not handle it as a Python object)"
                .into(),
            Binding::NotTensor => {
                "bound to what is certainly not a tensor (a Python default, a non-tensor annotation, a loop target)"
                    .into()
            }
            Binding::Unknown => "a parameter with no evidence either way".into(),
        })
        .collect()
}

/// The names and `self.<attr>` that start in the range, or with a column, the one there, and
/// the calls on the line (what a called `self.<attr>` gives).
struct NameCollector<'a> {
    range: TextRange,
    column: Option<TextSize>,
    found: Vec<&'a Expr>,
    calls: Vec<&'a ast::ExprCall>,
}

impl<'a> Visitor<'a> for NameCollector<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if stmt.range().intersect(self.range).is_some() {
            ruff_python_ast::visitor::walk_stmt(self, stmt);
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        let here = match self.column {
            Some(column) => expr.range().contains(column),
            None => self.range.contains(expr.start()),
        };
        if let Expr::Call(call) = expr {
            self.calls.push(call);
        }
        match expr {
            Expr::Name(name) if here && name.ctx != ExprContext::Del => self.found.push(expr),
            Expr::Attribute(attr) if here && is_self(&attr.value) => self.found.push(expr),
            _ => walk_expr(self, expr),
        }
    }
}

/// What each rule concluded about the line.
fn verdicts(
    model: &FileModel,
    settings: &Settings,
    compiled: &Compiled,
    range: TextRange,
    lines: &LineIndex,
) -> Vec<Verdict> {
    let found = crate::rules::check(model, settings);
    let suppressions = Suppressions::of(model.source);
    let text = &model.source.text;
    let line = lines.line_index(range.start());
    let on_line = |diagnostic: &&Diagnostic| {
        lines.line_index(diagnostic.range.start()) <= line && line <= lines.line_index(diagnostic.range.end())
    };
    RULES
        .iter()
        .map(|rule| {
            let here: Vec<&Diagnostic> = found.iter().filter(|d| d.rule == *rule).filter(on_line).collect();
            if let Some(diagnostic) = here.first() {
                let silenced = suppressions.silences(diagnostic, model.source);
                let said = match silenced {
                    true => format!("reported, but a `# noqa` comment silences it: {}", diagnostic.message),
                    false => format!("reported: {}", diagnostic.message),
                };
                return Verdict { rule, reported: !silenced, said };
            }
            let said = silence(rule, settings, compiled, text, &text[range]);
            Verdict { rule, reported: false, said }
        })
        .collect()
}

/// Why a rule has no finding on the line, as far as it can be told without running it again.
fn silence(rule: &Rule, settings: &Settings, compiled: &Compiled, file: &str, line: &str) -> String {
    if !settings.selection.enabled(rule) {
        return "not selected (--select, --ignore or the configuration)".into();
    }
    if !rule.mentions.is_empty() && !rule.mentions.iter().any(|word| file.contains(word)) {
        return format!("did not run: the file never names {}", quoted(rule.mentions));
    }
    let compiled_code_rule = matches!(rule.category, Category::GraphBreak | Category::Recompile);
    match compiled {
        Compiled::DeadPath { reason, .. } => return format!("silent: the line is on a dead path ({reason})"),
        Compiled::No(_) if compiled_code_rule => return "silent: it looks only at compiled code".into(),
        _ => {}
    }
    let named: Vec<&str> = rule.mentions.iter().copied().filter(|word| line.contains(word)).collect();
    if !named.is_empty() {
        return format!("the line names {}, which it looks for, but its conditions did not hold here", quoted(&named));
    }
    format!("nothing on this line matched what it finds: {}", lowercase_first(rule.hazard.trim_end_matches('.')))
}

fn quoted(words: &[&str]) -> String {
    words.iter().map(|word| format!("`{word}`")).collect::<Vec<_>>().join(", ")
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

impl Answer {
    pub fn text(&self) -> String {
        let mut out = format!("{}: {}\n\n", self.place, self.code);
        let compiled = match &self.compiled {
            Compiled::Yes { function, entry, chain } => {
                format!("Compiled: yes, in `{function}`, entered as {entry}; calls: {}", chain.join(" → "))
            }
            Compiled::DeadPath { function, reason } => {
                format!("Compiled: `{function}` is, but not this line on a normal call: {reason}")
            }
            Compiled::No(why) => format!("Compiled: no, {why}"),
        };
        let _ = writeln!(out, "{compiled}");
        if self.outside_project {
            out.push_str("  (the file is outside the project paths: only its own calls were followed)\n");
        }
        if !self.names.is_empty() {
            out.push_str("\nNames:\n");
            for name in &self.names {
                let _ = writeln!(out, "  {}: {}", name.name, name.taken_for);
                name.evidence.iter().for_each(|evidence| {
                    let _ = writeln!(out, "      {evidence}");
                });
            }
        }
        out.push_str("\nRules:\n");
        let (reported, silent): (Vec<&Verdict>, Vec<&Verdict>) =
            self.rules.iter().partition(|verdict| verdict.reported);
        for verdict in reported.iter().chain(&silent) {
            let _ = writeln!(out, "  {} {}: {}", verdict.rule.code, verdict.rule.name, verdict.said);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_is_a_path_a_line_and_maybe_a_column() {
        let place = Place::parse("models/net.py:12").unwrap();
        assert_eq!((place.path, place.line, place.column), (PathBuf::from("models/net.py"), 12, None));
        let place = Place::parse("net.py:12:5").unwrap();
        assert_eq!((place.line, place.column), (12, Some(5)));
        assert!(Place::parse("net.py").is_err());
        assert!(Place::parse("net.py:0").is_err());
        assert!(Place::parse(":3").is_err());
    }
}
