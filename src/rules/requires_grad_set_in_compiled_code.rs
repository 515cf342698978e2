//! TCF112 requires-grad-set-in-compiled-code: `h.requires_grad = True` or `loss.requires_grad_()`
//! in code torch.compile traces. Measured under torch 2.15 (inference and training alike): any
//! store to a tensor's `requires_grad` breaks the graph ("setattr() on Tensor.requires_grad"), and
//! so does `requires_grad_()` on a tensor that does not require grad yet, whether it is made in the
//! frame (GB8985, "requires_grad_() intermediate leaked as output") or a buffer ("Unsupported
//! Tensor.requires_grad_() call"). `requires_grad_(False)` and `requires_grad_()` on a parameter
//! trace.
//!
//! No fix: what the code wants (a gradient for checkpointing, a loss that always has a graph) is
//! the user's to keep; the message says where the call belongs instead.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::tensors::tensor::Tensors;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF112",
    name: "requires-grad-set-in-compiled-code",
    summary: "set requires_grad outside the compiled region",
    explanation: include_str!("../../codemods/requires-grad-set-in-compiled-code/README.md"),
    hazard: "Setting a tensor's `requires_grad` in compiled code breaks the graph.",
    why: "Dynamo does not trace changes to `requires_grad`: the graph ends at the change, in inference and in \
              training, and inside a loop the whole frame runs eagerly.",
    category: Category::GraphBreak,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

struct Changes<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    /// `self.<attr>` names the class binds to `nn.Parameter(...)`: `requires_grad_()` on them traces.
    parameters: Vec<String>,
    found: Vec<(TextRange, Site)>,
}

fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let model = function.model();
    let parameters = model.self_class(function.id).map(|class| parameters(model, class)).unwrap_or_default();
    Some(Box::new(Changes { function, tensors: function.tensors(), parameters, found: Vec::new() }))
}

/// The attributes any method of `class` assigns an `nn.Parameter` to.
fn parameters(model: &FileModel, class: usize) -> Vec<String> {
    self_assignments(model, class)
        .iter()
        .filter(|assignment| {
            matches!(assignment.value(), Some(Expr::Call(call))
                if model.imports.qualified_name(&call.func).is_some_and(|name| name.ends_with("nn.Parameter")
                    || name.ends_with("nn.parameter.Parameter")))
        })
        .map(|assignment| assignment.attr.clone())
        .collect()
}

impl Changes<'_, '_> {
    /// `x.requires_grad_()` or `x.requires_grad_(True)` on a tensor that is no parameter.
    fn turns_gradients_on(&self, call: &ast::ExprCall) -> bool {
        let Expr::Attribute(method) = call.func.as_ref() else { return false };
        if method.attr.id.as_str() != "requires_grad_" || !self.tensors.is_tensor(&method.value) {
            return false;
        }
        let argument = call.arguments.args.first().or_else(|| call.arguments.find_keyword("requires_grad").map(|k| &k.value));
        let off = matches!(argument, Some(Expr::BooleanLiteral(flag)) if !flag.value);
        !off && !self.is_parameter(&method.value)
    }

    fn is_parameter(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Attribute(attr) if is_self(&attr.value) && self.parameters.iter().any(|p| p == attr.attr.id.as_str()))
    }
}

impl<'a> FunctionHooks<'a> for Changes<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        let Stmt::Assign(assign) = stmt else { return };
        let sets_requires_grad = assign.targets.iter().any(|target| {
            matches!(target, Expr::Attribute(attr) if attr.attr.id.as_str() == "requires_grad" && self.tensors.is_tensor(&attr.value))
        });
        if sets_requires_grad {
            self.found.push((assign.range(), site));
        }
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        if let Expr::Call(call) = expr
            && self.turns_gradients_on(call)
        {
            self.found.push((call.range(), site));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        let text = &function.model().source.text;
        for (range, site) in self.found {
            let message = format!(
                "`{}` in {} changes whether a tensor requires grad: Dynamo does not trace that, so the graph breaks here",
                &text[range],
                function.describe()
            );
            let diagnostic = function.graph_break(Diagnostic::new(&RULE, range, message), site).without_fix(
                "set `requires_grad` before calling the compiled model (on its input or in `__init__`), or drop it \
                 where autograd already tracks the value",
            );
            diagnostics.push(diagnostic);
        }
    }
}
