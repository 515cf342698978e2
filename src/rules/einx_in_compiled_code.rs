//! TCF210 einx-in-compiled-code: an einx operation (`einx.get_at`, `einx.sum`, `from einx import
//! dot`...) called from compiled code. einx builds each operation from its inputs' sizes as Python
//! numbers, so Dynamo makes every size a constant: each new size recompiles, with `dynamic=True`
//! too (measured under torch 2.15 with einx 0.4.3: 5 graphs for 5 lengths; the same with einops,
//! which Dynamo traces with symbolic sizes, 2). The truth tier saw it in vector-quantize-pytorch's
//! SimVQ (`get_at` of the codebook). einx's layers (`einx.nn`) are not measured and not reported.
//!
//! No fix: the einops or torch equivalent is a rewrite of the expression the user should read.

use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compiled_code::Site;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF210",
    name: "einx-in-compiled-code",
    summary: "use einops or torch ops instead of einx in compiled code",
    explanation: include_str!("../../codemods/einx-in-compiled-code/README.md"),
    hazard: "An einx operation in compiled code makes the sizes of its inputs constants.",
    why: "einx builds each operation from its inputs' sizes as Python numbers, so Dynamo compiles one graph per \
              size: every new size recompiles, even with dynamic shapes, and after 8 the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The einx calls of a function's compiled code, in a file that imports einx.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let imports = &function.model().imports;
    let imports_einx = imports.bindings().any(|(_, full)| full == "einx" || full.starts_with("einx."));
    let calls = EinxCalls { function, found: Vec::new(), branches: Vec::new() };
    imports_einx.then(|| Box::new(calls) as Box<dyn FunctionHooks<'a> + 'c>)
}

struct EinxCalls<'c, 'a> {
    function: &'c Function<'c, 'a>,
    /// The calls, with the operation's name.
    found: Vec<(TextRange, String)>,
    /// The `if` bodies of the function's compiled code, with their tests, in source order.
    branches: Vec<(TextRange, TextRange)>,
}

impl EinxCalls<'_, '_> {
    /// The test of the innermost `if` whose body holds `call`: the operation runs only when it
    /// holds (`if exists(mask):` around a masked `einx.where`, which a call without a mask
    /// never reaches).
    fn condition(&self, call: TextRange) -> Option<&str> {
        let (_, test) = self.branches.iter().rev().find(|(body, _)| body.contains_range(call))?;
        Some(&self.function.model().source.text[*test])
    }
}

impl<'a> FunctionHooks<'a> for EinxCalls<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        if let Stmt::If(branch) = stmt
            && let (Some(first), Some(last)) = (branch.body.first(), branch.body.last())
        {
            self.branches.push((TextRange::new(first.start(), last.end()), branch.test.range()));
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if let Expr::Call(call) = expr
            && let Some(qualified) = self.function.model().imports.qualified_name(&call.func)
            && let Some(operation) = qualified.strip_prefix("einx.").filter(|operation| !operation.contains('.'))
        {
            self.found.push((call.range(), operation.to_string()));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        // A frame Dynamo gives up on runs eagerly: nothing in it is compiled, so nothing is pinned.
        if self.found.is_empty() || function.checker.runs_eagerly(function.id) {
            return;
        }
        for (range, operation) in &self.found {
            let only_when = match self.condition(*range) {
                Some(test) if !test.contains(['\n', '\r']) => format!(" (it runs only when `{test}` holds)"),
                _ => String::new(),
            };
            let message = format!(
                "einx's `{operation}` in {} builds its operation from the sizes of its inputs as Python numbers, so \
                 Dynamo makes them constants: every new size recompiles (dynamic shapes do not help), and after 8 sizes \
                 the frame runs eagerly{only_when}",
                function.describe()
            );
            // Medium, as for a loop over a size: it costs only when a size varies between calls.
            diagnostics.push(
                Diagnostic::new(&RULE, *range, message).with_severity(Severity::Medium).without_fix(
                    "write it with einops (Dynamo keeps its sizes symbolic) or with torch operations",
                ),
            );
        }
    }
}
