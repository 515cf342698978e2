//! TCF111 recurrent-module-in-compiled-code: a submodule built as `nn.LSTM`, `nn.GRU` or `nn.RNN`
//! (`self.rnn = nn.LSTM(...)` in a method of the class) and called from compiled code. Dynamo does
//! not trace these modules (GB0148, "Dynamo does not support RNN, GRU, or LSTM"): the graph breaks
//! at every call, and the pieces around it recompile on their own guards. The cells
//! (`nn.LSTMCell`...) trace and are not reported (measured under torch 2.15).
//!
//! No fix: `torch._dynamo.config.allow_rnn = True` is experimental and process-wide, and
//! `torch.compiler.disable` on a wrapper only moves the break; the README says what to weigh.

use ruff_python_ast::{Expr, ExprContext};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF111",
    name: "recurrent-module-in-compiled-code",
    summary: "keep nn.LSTM, nn.GRU and nn.RNN calls out of compiled code",
    explanation: include_str!("../../codemods/recurrent-module-in-compiled-code/README.md"),
    hazard: "An `nn.LSTM`, `nn.GRU` or `nn.RNN` submodule called from compiled code breaks the graph.",
    why: "Dynamo does not trace recurrent modules: every call is a graph break, the pieces around it recompile \
              on their own guards, and inside a loop the whole frame runs eagerly.",
    category: Category::GraphBreak,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The recurrent module classes Dynamo refuses.
const RECURRENT: [&str; 3] = ["torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"];

struct Calls<'c, 'a> {
    function: &'c Function<'c, 'a>,
    /// `self.<attr>` names the class binds to a recurrent module, with that module's class name.
    recurrent: Vec<(String, &'static str)>,
    found: Vec<(TextRange, String, &'static str, Site)>,
}

fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let model = function.model();
    let class = model.self_class(function.id)?;
    let recurrent = recurrent_submodules(model, class);
    if recurrent.is_empty() {
        return None;
    }
    Some(Box::new(Calls { function, recurrent, found: Vec::new() }))
}

/// The attributes any method of `class` assigns a recurrent module to, whatever else they may hold.
fn recurrent_submodules(model: &FileModel, class: usize) -> Vec<(String, &'static str)> {
    self_assignments(model, class)
        .iter()
        .filter_map(|assignment| {
            let Some(Expr::Call(call)) = assignment.value() else { return None };
            let qualified = model.imports.qualified_name(&call.func)?;
            let kind = RECURRENT.iter().find(|kind| **kind == qualified)?;
            Some((assignment.attr.clone(), &kind["torch.nn.".len()..]))
        })
        .collect()
}

impl<'a> FunctionHooks<'a> for Calls<'_, 'a> {
    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(attr) = call.func.as_ref()
            && attr.ctx == ExprContext::Load
            && is_self(&attr.value)
            && let Some((name, kind)) = self.recurrent.iter().find(|(name, _)| name == attr.attr.id.as_str())
        {
            self.found.push((call.range(), name.clone(), kind, site));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        for (range, name, kind, site) in self.found {
            let message = format!(
                "`self.{name}` is an `nn.{kind}`, called in {}: Dynamo does not trace recurrent modules, so the graph breaks here",
                function.describe()
            );
            let diagnostic = function.graph_break(Diagnostic::new(&RULE, range, message), site).without_fix(
                "run the recurrent part outside the compiled region, or try `torch._dynamo.config.allow_rnn = True` where you call torch.compile",
            );
            diagnostics.push(diagnostic);
        }
    }
}
