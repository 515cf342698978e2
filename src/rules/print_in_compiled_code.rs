//! TCF101 print-in-compiled-code: `print`, `logging`, `logger.<level>()` and `warnings.warn`
//! in the compiled region break the graph (GB0059, GB0291, GB0007). The fix guards the
//! statement with `if not torch.compiler.is_compiling():`, so eager runs still print. A value
//! that is read only to be printed (`logger.info(f"shift {int(self.shift)}")`: TCF103's break)
//! gets the same guard as its fix: under compile it is then neither computed nor printed.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};
use rustc_hash::FxHashSet as HashSet;
use std::cell::OnceCell;

use crate::diagnostic::Diagnostic;
use crate::fix::text::{NEW_MODULE_IMPORT, block_indent_unit, indent_unit, torch_name_at, wrap_in_if};
use crate::fix::torch_api::is_compiling_call;
use crate::fix::{Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FunctionNode;
use crate::model::file::imports::Imports;
use crate::model::file::output_calls::output_call;
use crate::rules::bool_mask_index_put;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

mod warn_once;

pub static RULE: Rule = Rule {
    code: "TCF101",
    name: "print-in-compiled-code",
    summary: "guard print and logging calls in compiled code",
    explanation: include_str!("../../codemods/print-in-compiled-code/README.md"),
    hazard: "A print, logging or warnings.warn call in compiled code breaks the graph.",
    why: "Every call splits the compiled code into separate graphs with a Python round trip between them.",
    category: Category::GraphBreak,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

struct Output {
    name: String,
    call: TextRange,
    /// The statement the call makes up, when it is one (only then can it be guarded).
    statement: Option<TextRange>,
    site: Site,
}

struct OutputFinder<'c> {
    checker: &'c Checker<'c>,
    /// The outputs of the function being walked.
    found: Vec<Output>,
    /// The call of the last output statement found.
    statement_call: Option<TextRange>,
    /// The state the file's `if` and `while` tests read (`warn_once::tested_in`): read once for
    /// the file, when a finding first asks (a generated file can hold thousands of findings).
    tested: OnceCell<HashSet<String>>,
}

/// Each output call of the region's compiled code; one that makes up a statement of its own can
/// be guarded. A region rule only to keep what the file's tests read from one function to the next.
fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(OutputFinder { checker, found: Vec::new(), statement_call: None, tested: OnceCell::new() })
}

impl<'a> RegionHooks<'a> for OutputFinder<'_> {
    fn stmt(&mut self, function: &Function<'_, 'a>, stmt: &'a Stmt, site: Site) {
        let Stmt::Expr(ast::StmtExpr { value, range, .. }) = stmt else {
            return;
        };
        let Expr::Call(call) = value.as_ref() else {
            return;
        };
        if let Some(name) = output_call(call, &function.model().imports) {
            self.found.push(Output { name, call: call.range(), statement: Some(*range), site });
            self.statement_call = Some(call.range());
        }
    }

    fn expr(&mut self, function: &Function<'_, 'a>, expr: &'a Expr, site: Site) -> bool {
        if let Expr::Call(call) = expr {
            // The call a statement is made of comes next: it was found as that statement.
            if self.statement_call != Some(call.range())
                && let Some(name) = output_call(call, &function.model().imports) {
                    self.found.push(Output { name, call: call.range(), statement: None, site });
                }
        }
        true
    }

    fn end(&mut self, function: &Function<'_, 'a>, diagnostics: &mut Vec<Diagnostic>) {
        self.statement_call = None;
        for output in std::mem::take(&mut self.found) {
            let message = format!("`{}` in {} breaks the graph", output.name, function.describe());
            let diagnostic = function.graph_break(Diagnostic::new(&RULE, output.call, message), output.site);
            diagnostics.push(match output.statement {
                Some(statement) => with_guard_fix(self.checker, function.id, diagnostic, statement, &self.tested),
                None => diagnostic.without_fix("the call is inside an expression: move it to a statement of its own"),
            });
        }
    }
}

fn with_guard_fix(
    checker: &Checker,
    function: usize,
    diagnostic: Diagnostic,
    statement: TextRange,
    tested: &OnceCell<HashSet<String>>,
) -> Diagnostic {
    let model = checker.model;
    // In a warn-once block the guard goes around the block, so that the flag is set only when the
    // message is written (guarding the call alone would silence it for good).
    let (statement, kept_apart) = match model.function(function).node {
        FunctionNode::Def(def) => {
            let is_output = |stmt: &Stmt| is_output_statement(stmt, &model.imports);
            match warn_once::enclosing_block(&def.body, statement, &is_output) {
                Some(block) => (block, None),
                None => {
                    let tested = || tested.get_or_init(|| warn_once::tested_in(model.source.parsed.suite()));
                    (statement, warn_once::state_updated_beside(&tested, &def.body, statement))
                }
            }
        }
        FunctionNode::Lambda(_) => (statement, None),
    };
    let torch = torch_name_at(model, statement.start());
    let condition = format!("not {}", is_compiling_call(&torch.name, checker.settings.target_torch));
    let unit = match model.function(function).node {
        FunctionNode::Def(def) => block_indent_unit(model.source, def.start(), def.body[0].start()),
        FunctionNode::Lambda(_) => indent_unit(model.source),
    };
    match wrap_in_if(model.source, statement, &condition, &unit) {
        Some(mut edits) => {
            edits.extend(torch.import);
            let title = format!("Guard with `if {condition}:`");
            // Without the break, the code around it is one graph: a masked write there sends the
            // training frame to eager (TCF105), where before only its own graph fell back.
            let mut risks: Vec<String> = torch.new_module_import.then(|| NEW_MODULE_IMPORT.to_string()).into_iter().collect();
            if let Some(state) = kept_apart {
                risks.push(format!(
                    "unsafe: `{state}` is still updated under compile while the message is skipped, so a \
                     once-only message may never be written, not even by a later eager call"
                ));
            }
            if let Some(write) = bool_mask_index_put::traced_with(checker, function) {
                risks.push(format!(
                    "unsafe: without the break, {write} is traced into one graph with the rest of the frame, and in \
                     training the whole frame falls back to eager (TCF105's hazard): apply TCF105's fix with it"
                ));
            }
            let fix = match risks.is_empty() {
                true => Fix::new(title, Safety::Safe, edits),
                false => Fix::new(format!("{title} ({})", risks.join("; ")), Safety::Unsafe, edits),
            };
            diagnostic.with_fix(fix)
        }
        None => diagnostic.without_fix("the statement shares its line with other code: put it on a line of its own"),
    }
}

/// Gives the findings without a fix that lie in the arguments of a guarded output call (a tensor
/// read to be formatted into the message) the guard as their fix. Not when the call binds a name
/// (`print(n := t.item())`): the value then outlives the message.
pub fn guard_what_outputs_read(text: &str, diagnostics: &mut [Diagnostic]) {
    let guards: Vec<(TextRange, Fix, String)> = diagnostics
        .iter()
        .filter(|d| std::ptr::eq(d.rule, &RULE) && !text[d.range].contains(":="))
        .filter_map(|d| Some((d.range, d.fix.clone()?, d.message.clone())))
        .collect();
    for diagnostic in diagnostics.iter_mut().filter(|d| d.fix.is_none() && !std::ptr::eq(d.rule, &RULE)) {
        let Some((_, guard, message)) = guards.iter().find(|(call, ..)| call.contains_range(diagnostic.range)) else {
            continue;
        };
        let output = message.split('`').nth(1).unwrap_or("the output call");
        let title = format!(
            "{} on the `{output}` this value is only read for (under compile it is then neither computed nor \
             written)",
            guard.title
        );
        diagnostic.fix = Some(Fix { title, ..guard.clone() });
        diagnostic.no_fix_reason = None;
    }
}

fn is_output_statement(stmt: &Stmt, imports: &Imports) -> bool {
    matches!(stmt, Stmt::Expr(ast::StmtExpr { value, .. }) if matches!(value.as_ref(), Expr::Call(call) if output_call(call, imports).is_some()))
}

