//! TCF111 recurrent-module-in-compiled-code: a submodule built as `nn.LSTM`, `nn.GRU` or `nn.RNN`
//! (`self.rnn = nn.LSTM(...)` in a method of the class, or of a subclass in the file that replaces
//! a placeholder the base's `forward` calls) and called from compiled code. Dynamo does
//! not trace these modules (GB0148, "Dynamo does not support RNN, GRU, or LSTM"): the graph breaks
//! at every call, and the pieces around it recompile on their own guards. The cells
//! (`nn.LSTMCell`...) trace and are not reported (measured under torch 2.15).
//!
//! No fix: `torch._dynamo.config.allow_rnn = True` is experimental and process-wide, and
//! `torch.compiler.disable` on a wrapper only moves the break; the README says what to weigh.

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::{Expr, ExprContext};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
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

pub const HOOKS: Hooks = Hooks::Region(start);

/// The recurrent module classes Dynamo refuses.
const RECURRENT: [&str; 3] = ["torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"];

/// `self.<attr>` bound to a recurrent module by a class or a subclass of it.
#[derive(Clone)]
struct Recurrent {
    attr: String,
    /// `LSTM`, `GRU` or `RNN`.
    kind: &'static str,
    /// The class that binds it.
    binder: usize,
}

/// The calls of recurrent submodules in the region's compiled code, found in the checker's walk.
struct Calls<'c, 'a> {
    checker: &'c Checker<'a>,
    /// By class: the recurrent modules its `self` may hold, found once for the file.
    recurrent: HashMap<usize, Vec<Recurrent>>,
    /// The calls found in the function being walked.
    found: Vec<(TextRange, usize, Site)>,
}

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(Calls { checker, recurrent: recurrent_submodules(checker.model), found: Vec::new() })
}

/// By class, the attributes any method of the class, or of a subclass of it in the file, assigns a
/// recurrent module to, whatever else they may hold: a class's `forward` runs for its subclasses.
/// Each binding is handed up its chain of in-file bases once (not each class searched for its
/// subclasses: a file can hold tens of thousands of classes).
fn recurrent_submodules(model: &FileModel) -> HashMap<usize, Vec<Recurrent>> {
    let mut by_class: HashMap<usize, Vec<Recurrent>> = HashMap::default();
    for binder in 0..model.classes.len() {
        for assignment in self_assignments(model, binder) {
            let Some(Expr::Call(call)) = assignment.value() else { continue };
            let Some(qualified) = model.imports.qualified_name(&call.func) else { continue };
            let Some(kind) = RECURRENT.iter().find(|kind| **kind == qualified) else { continue };
            let recurrent = Recurrent { attr: assignment.attr.clone(), kind: &kind["torch.nn.".len()..], binder };
            for class in with_bases(model, binder) {
                by_class.entry(class).or_default().push(recurrent.clone());
            }
        }
    }
    by_class
}

/// `class` and its bases defined in the file, transitively (`LSTM2d`, then `RNN2dBase`).
fn with_bases(model: &FileModel, class: usize) -> Vec<usize> {
    let mut chain = vec![class];
    let mut at = 0;
    while let Some(&current) = chain.get(at) {
        for base in &model.classes[current].bases {
            let in_file = (!base.contains('.')).then(|| model.class_named(base)).flatten();
            if let Some(base) = in_file.filter(|base| !chain.contains(base)) {
                chain.push(base);
            }
        }
        at += 1;
    }
    chain
}

impl<'a> RegionHooks<'a> for Calls<'_, 'a> {
    fn start(&mut self, function: &Function<'_, 'a>) -> bool {
        self.found.clear();
        self.checker.model.self_class(function.id).is_some_and(|class| self.recurrent.contains_key(&class))
    }

    fn expr(&mut self, function: &Function<'_, 'a>, expr: &'a Expr, site: Site) -> bool {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(attr) = call.func.as_ref()
            && attr.ctx == ExprContext::Load
            && is_self(&attr.value)
            && let Some(class) = self.checker.model.self_class(function.id)
            && let Some(at) = self.recurrent[&class].iter().position(|recurrent| recurrent.attr == attr.attr.id.as_str())
        {
            self.found.push((call.range(), at, site));
        }
        true
    }

    fn end(&mut self, function: &Function<'_, 'a>, diagnostics: &mut Vec<Diagnostic>) {
        let model = self.checker.model;
        let Some(class) = model.self_class(function.id) else { return };
        for (range, at, site) in self.found.drain(..) {
            let Recurrent { attr, kind, binder } = &self.recurrent[&class][at];
            let built = match *binder == class {
                true => String::new(),
                false => format!(" in `{}`", model.classes[*binder].node.name.id),
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
