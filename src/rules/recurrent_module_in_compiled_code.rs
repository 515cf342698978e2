//! TCF111 recurrent-module-in-compiled-code: a submodule built as `nn.LSTM`, `nn.GRU` or `nn.RNN`
//! (`self.rnn = nn.LSTM(...)` in a method of the class, or of a subclass in the file that replaces
//! a placeholder the base's `forward` calls) and called from compiled code. Dynamo does
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
    recurrent: Vec<Recurrent>,
    found: Vec<(TextRange, usize, Site)>,
}

/// `self.<attr>` bound to a recurrent module by the class or a subclass of it.
struct Recurrent {
    attr: String,
    /// `LSTM`, `GRU` or `RNN`.
    kind: &'static str,
    /// The subclass that binds it, when not the class itself.
    subclass: Option<usize>,
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

/// The attributes any method of `class`, or of a subclass of it in the file, assigns a recurrent
/// module to, whatever else they may hold: the class's `forward` runs for the subclass too.
fn recurrent_submodules(model: &FileModel, class: usize) -> Vec<Recurrent> {
    let binders = std::iter::once(class).chain((0..model.classes.len()).filter(|&c| derives_from(model, c, class, 0)));
    binders
        .flat_map(|binder| {
            self_assignments(model, binder).iter().filter_map(move |assignment| {
                let Some(Expr::Call(call)) = assignment.value() else { return None };
                let qualified = model.imports.qualified_name(&call.func)?;
                let kind = RECURRENT.iter().find(|kind| **kind == qualified)?;
                let subclass = (binder != class).then_some(binder);
                Some(Recurrent { attr: assignment.attr.clone(), kind: &kind["torch.nn.".len()..], subclass })
            })
        })
        .collect()
}

/// Whether `class` derives from `base` through classes of the file (`LSTM2d(RNN2dBase)`).
fn derives_from(model: &FileModel, class: usize, base: usize, depth: usize) -> bool {
    // A chain of bases deeper than this is a cycle of names, not Python.
    const DEEPEST: usize = 16;
    class != base
        && depth < DEEPEST
        && model.classes[class].bases.iter().any(|name| {
            !name.contains('.')
                && model.class_named(name).is_some_and(|named| named == base || derives_from(model, named, base, depth + 1))
        })
}

impl<'a> FunctionHooks<'a> for Calls<'_, 'a> {
    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(attr) = call.func.as_ref()
            && attr.ctx == ExprContext::Load
            && is_self(&attr.value)
            && let Some(at) = self.recurrent.iter().position(|recurrent| recurrent.attr == attr.attr.id.as_str())
        {
            self.found.push((call.range(), at, site));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        let model = function.model();
        for (range, at, site) in self.found {
            let Recurrent { attr, kind, subclass } = &self.recurrent[at];
            let built = match subclass {
                Some(subclass) => format!(" in `{}`", model.classes[*subclass].node.name.id),
                None => String::new(),
            };
            let message = format!(
                "`self.{attr}` is an `nn.{kind}`{built}, called in {}: Dynamo does not trace recurrent modules, so the graph breaks here",
                function.describe()
            );
            let diagnostic = function.graph_break(Diagnostic::new(&RULE, range, message), site).without_fix(
                "run the recurrent part outside the compiled region, or try `torch._dynamo.config.allow_rnn = True` where you call torch.compile",
            );
            diagnostics.push(diagnostic);
        }
    }
}
