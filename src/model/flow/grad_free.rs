//! Values that cannot require grad, known from where they come from: booleans and integers
//! (masks, integer casts, a tensor some subscript indexes with, which must be integer or boolean),
//! tensors that factories make (`torch.zeros_like(x)`, `x.new_zeros(n)`, `torch.arange(n)`), and what
//! torch computes from those alone (`2.0 / torch.sqrt(counts.float())`). Autograd gives a result
//! `requires_grad` only when one of its inputs has it, so a value built from these alone never does.
//! A value from a submodule, a parameter or a helper is not known, and neither is a name whose
//! binding does not reach the use in the same block.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use crate::model::file::FileModel;
use crate::model::file::imports::last_segment;
use crate::model::flow::reaching_binding::{Uses, last_binding, names_bound};
use crate::model::tensors::tensor::Tensors;
use crate::model::tensors::torch_calls::FACTORIES;

/// Keywords that set how a result is laid out, not what it is computed from.
const LAYOUT_KEYWORDS: [&str; 8] =
    ["dim", "keepdim", "dtype", "device", "non_blocking", "copy", "memory_format", "out"];

/// How deep a chain of bindings is followed (`w` from `counts` from `valid` ...).
const MAX_DEPTH: usize = 8;

pub struct GradFree<'m, 'a> {
    model: &'m FileModel<'a>,
    def: &'a ast::StmtFunctionDef,
    tensors: &'m Tensors<'a, 'a>,
}

impl<'m, 'a> GradFree<'m, 'a> {
    pub fn new(model: &'m FileModel<'a>, def: &'a ast::StmtFunctionDef, tensors: &'m Tensors<'a, 'a>) -> Self {
        GradFree { model, def, tensors }
    }

    /// Whether `expr`, evaluated at `at` (the statement holding it), cannot require grad.
    pub fn holds(&self, expr: &Expr, at: TextRange) -> bool {
        self.within(expr, at, 0)
    }

    fn within(&self, expr: &Expr, at: TextRange, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        if self.tensors.is_mask(expr) {
            return true;
        }
        let inner = |e: &Expr| self.within(e, at, depth + 1);
        match expr {
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) => true,
            Expr::Name(name) => self.name_is_grad_free(name.id.as_str(), at, depth),
            Expr::BinOp(op) => inner(&op.left) && inner(&op.right),
            Expr::UnaryOp(op) => inner(&op.operand),
            Expr::Subscript(subscript) => inner(&subscript.value),
            Expr::Call(call) => self.call_is_grad_free(call, at, depth),
            _ => false,
        }
    }

    /// A local whose binding reaching `at` is grad-free, or a parameter the function never
    /// rebinds and indexes with (`rows[valid]`: an index tensor is integer or boolean).
    fn name_is_grad_free(&self, name: &str, at: TextRange, depth: usize) -> bool {
        match last_binding(self.def, name, at) {
            Some((value, Uses::Untouched | Uses::Read)) => self.within(value, value.range(), depth + 1),
            Some((_, Uses::Bound)) => false,
            None => self.is_parameter(name) && !names_bound(&self.def.body).contains(&name) && self.indexes_with(name),
        }
    }

    fn is_parameter(&self, name: &str) -> bool {
        self.def.parameters.iter().any(|parameter| parameter.name().as_str() == name)
    }

    /// Whether some subscript of the function indexes with `name`, alone or in a tuple.
    fn indexes_with(&self, name: &str) -> bool {
        let mut finder = IndexUse { name, found: false };
        for stmt in &self.def.body {
            finder.visit_stmt(stmt);
        }
        finder.found
    }

    /// A factory, a cast to an integer type, `detach`, or a torch function or tensor method whose
    /// tensors are all grad-free.
    fn call_is_grad_free(&self, call: &ast::ExprCall, at: TextRange, depth: usize) -> bool {
        let asks_for_grad = call
            .arguments
            .find_keyword("requires_grad")
            .is_some_and(|keyword| !matches!(&keyword.value, Expr::BooleanLiteral(literal) if !literal.value));
        if asks_for_grad {
            return false;
        }
        let name = last_segment(&call.func);
        let arguments_grad_free = || {
            call.arguments.args.iter().all(|arg| self.argument_is_grad_free(arg, at, depth))
                && call.arguments.keywords.iter().all(|keyword| {
                    keyword.arg.as_ref().is_some_and(|arg| LAYOUT_KEYWORDS.contains(&arg.as_str()))
                        || self.argument_is_grad_free(&keyword.value, at, depth)
                })
        };
        let qualified = self.model.imports.qualified_name(&call.func);
        let from_torch = qualified.as_deref().is_some_and(|q| q.starts_with("torch."));
        match call.func.as_ref() {
            Expr::Attribute(method) if !from_torch => match method.attr.id.as_str() {
                "detach" | "long" | "int" | "bool" | "short" | "byte" => true,
                "requires_grad_" => false,
                name if FACTORIES.contains(&name) => true,
                _ => self.within(&method.value, at, depth + 1) && arguments_grad_free(),
            },
            // `torch.nn.Parameter(x)` makes a leaf that requires grad.
            _ if !from_torch || name == Some("Parameter") => false,
            _ => name.is_some_and(|name| FACTORIES.contains(&name)) || arguments_grad_free(),
        }
    }

    /// An argument that brings no grad: a literal, a dtype or other torch constant, a size or
    /// device read off a tensor, or a grad-free tensor.
    fn argument_is_grad_free(&self, arg: &Expr, at: TextRange, depth: usize) -> bool {
        match arg {
            Expr::StringLiteral(_) => true,
            Expr::Tuple(tuple) => tuple.iter().all(|e| self.argument_is_grad_free(e, at, depth)),
            Expr::Attribute(attribute)
                if matches!(attribute.attr.id.as_str(), "dtype" | "device" | "shape" | "ndim") =>
            {
                true
            }
            Expr::Attribute(_) if !self.tensors.is_tensor(arg) => {
                self.model.imports.qualified_name(arg).is_some_and(|q| q.starts_with("torch."))
            }
            _ => self.within(arg, at, depth + 1),
        }
    }
}

/// Finds `x[name]` and `x[..., name]`.
struct IndexUse<'n> {
    name: &'n str,
    found: bool,
}

impl<'a> Visitor<'a> for IndexUse<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Subscript(subscript) = expr {
            let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == self.name);
            self.found |= match subscript.slice.as_ref() {
                Expr::Tuple(tuple) => tuple.iter().any(is_name),
                slice => is_name(slice),
            };
        }
        walk_expr(self, expr);
    }
}
