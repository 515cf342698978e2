//! TCF106 data-dependent-shape: operations whose output size depends on tensor values —
//! reading `x[mask]` with a boolean mask, `nonzero()`, `argwhere()`, one-argument
//! `torch.where(c)`, `unique()`, `masked_select()` — in compiled code. With the default config
//! Dynamo breaks the graph at each (GB0036). There is no general dense rewrite, so the rule
//! reports with advice.

use ruff_python_ast::{self as ast, Expr, ExprContext};
use ruff_text_size::Ranged;

use crate::diagnostic::Diagnostic;
use crate::model::compiled_code::Site;
use crate::model::imports::Imports;
use crate::model::tensor::Tensors;
use crate::rules::data_dependent_branch::snippet;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF106",
    name: "data-dependent-shape",
    summary: "keep tensor shapes independent of tensor values",
    explanation: include_str!("../../codemods/data-dependent-shape/README.md"),
    hazard: "An operation whose output shape depends on tensor values (`x[mask]`, `nonzero()`, `unique()`) in compiled code breaks the graph.",
    why: "Dynamo cannot give the result a size without running the tensors, so it ends the graph, syncs with the \
              device, and inside a loop runs the whole frame eagerly.",
    category: Category::GraphBreak,
    fixes: &[],
    mentions: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// Methods and torch functions whose output size is the number of selected or distinct values.
const SIZE_FROM_VALUES: [&str; 5] = ["nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"];

const NO_DENSE_FORM: &str = "no dense rewrite keeps the shape: keep the full tensor and zero what the mask drops \
                             (`torch.where(mask, x, 0)`, `x.masked_fill(~mask, 0)`, `x * mask`), use \
                             `nonzero_static(size=...)` with a known bound, move the selection out of the compiled \
                             code, or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True`";

/// The reads and calls in the function's compiled code whose output size depends on tensor values.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let imports = &function.model().imports;
    Some(Box::new(ShapeFinder { function, tensors: function.tensors(), imports, found: Vec::new() }))
}

struct ShapeFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    imports: &'c Imports,
    found: Vec<(&'a Expr, Site)>,
}

impl<'a> FunctionHooks<'a> for ShapeFinder<'_, 'a> {
    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        let found = match expr {
            Expr::Subscript(subscript) => self.is_mask_read(subscript),
            Expr::Call(call) => self.sizes_from_values(call),
            // Their own scopes: the tensors model does not know their names.
            Expr::Lambda(_) | Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                return false;
            }
            _ => false,
        };
        if found {
            self.found.push((expr, site));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        for (expr, site) in self.found {
            let text = snippet(&function.model().source.text[expr.range()]);
            let message = format!(
                "`{text}` in {} has a shape that depends on tensor values: the graph breaks",
                function.describe()
            );
            let diagnostic = Diagnostic::new(&RULE, expr.range(), message).without_fix(NO_DENSE_FORM);
            diagnostics.push(function.graph_break(diagnostic, site));
        }
    }
}

impl ShapeFinder<'_, '_> {
    /// `x[mask]`, `x[:, mask]`: a read with a boolean tensor index (a store `x[mask] = v` is TCF105's).
    fn is_mask_read(&self, subscript: &ast::ExprSubscript) -> bool {
        if subscript.ctx != ExprContext::Load || !self.tensors.is_tensor(&subscript.value) {
            return false;
        }
        match subscript.slice.as_ref() {
            Expr::Tuple(tuple) => tuple.elts.iter().any(|index| self.tensors.is_mask(index)),
            index => self.tensors.is_mask(index),
        }
    }

    /// `t.nonzero()`, `torch.unique(t)`, `torch.where(c)` (one argument), `t.masked_select(m)`.
    fn sizes_from_values(&self, call: &ast::ExprCall) -> bool {
        let qualified = self.imports.qualified_name(&call.func);
        if let Some(name) = qualified.as_deref().and_then(|q| q.strip_prefix("torch.")) {
            let one_argument = call.arguments.args.len() == 1 && call.arguments.keywords.is_empty();
            return SIZE_FROM_VALUES.contains(&name) || (name == "where" && one_argument);
        }
        match call.func.as_ref() {
            Expr::Attribute(method) => {
                SIZE_FROM_VALUES.contains(&method.attr.id.as_str()) && self.tensors.is_tensor(&method.value)
            }
            _ => false,
        }
    }
}
