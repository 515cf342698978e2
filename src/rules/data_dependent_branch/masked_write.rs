//! `if mask.any(): x[mask] = -inf` -> `x[mask] = -inf`: writing a Python number through an all-False
//! boolean mask changes nothing, so the test only guards a no-op and can go. Measured under torch
//! 2.15 (wav2vec2's `logits[1:][neg_is_pos] = float("-inf")`, training): 2 graphs before, 1 after,
//! outputs and gradients equal. A number, not a tensor, is written: a tensor of values would have
//! to match the number of True elements, and its backward makes the frame eager (TCF105).

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use super::rewrite::{Rewrite, Test, is_python_value};
use super::selection::is_any_or_all;
use crate::fix::{Fix, Safety};
use crate::model::file::FileModel;
use crate::model::tensors::tensor::Tensors;
/// The fix for `if m.any(): <target>[m] = <number>`, when the `if` is that (else `None`).
pub(super) fn unguarded_write_fix(model: &FileModel, tensors: &Tensors, if_stmt: &ast::StmtIf) -> Option<Result<Fix, String>> {
    let [Stmt::Assign(assign)] = if_stmt.body.as_slice() else { return None };
    let [Expr::Subscript(target)] = assign.targets.as_slice() else { return None };
    if !if_stmt.elif_else_clauses.is_empty() {
        return None;
    }
    let test = Test::split(model, tensors, &if_stmt.test).ok()?;
    let Expr::Call(any) = test.tensor else { return None };
    let text = |expr: &Expr| &model.source.text[expr.range()];
    // `m.any()`, `torch.any(m)`: not `all`, whose guard would keep the write from the True elements.
    let mask = match any.func.as_ref() {
        Expr::Attribute(method) if method.attr.id.as_str() == "any" && any.arguments.is_empty() => &method.value,
        func if model.imports.qualified_name(func).as_deref() == Some("torch.any") => any.arguments.args.first()?,
        _ => return None,
    };
    let same_mask = is_any_or_all(tensors, any) && text(mask) == text(&target.slice) && tensors.is_mask(mask);
    // The write now runs on every call: the tensor written into must be reached without a call.
    if !same_mask || !is_number(model, tensors, &assign.value) || !is_plain_place(&target.value) {
        return None;
    }
    let rewrite = match Rewrite::new(model, if_stmt, &test) {
        Ok(rewrite) => rewrite,
        Err(reason) => return Some(Err(reason.into())),
    };
    let write = rewrite.text(assign.range());
    let edits = rewrite.edits(&[write]);
    let title = "Drop the test: writing through an all-False mask changes nothing (unsafe: the in-place write now \
                 always runs, and autograd rejects it on a leaf that requires grad or on a tensor saved for backward, \
                 even when the mask is all False)";
    Some(Ok(Fix::new(title, Safety::Unsafe, edits)))
}

/// `float("-inf")`, `-1e4`, `torch.finfo(x.dtype).min`: one Python number, which broadcasts to
/// any number of selected elements, none included.
fn is_number(model: &FileModel, tensors: &Tensors, expr: &Expr) -> bool {
    let literal = |expr: &Expr| match expr {
        Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::Call(_) => true,
        Expr::UnaryOp(op) => matches!(op.operand.as_ref(), Expr::NumberLiteral(_)),
        Expr::Attribute(attr) => matches!(attr.value.as_ref(), Expr::Call(_)),
        _ => false,
    };
    literal(expr) && is_python_value(model, tensors, expr)
}

/// `logits`, `self.buf`, `logits[1:]`: a place, not a computation.
fn is_plain_place(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(attr) => is_plain_place(&attr.value),
        Expr::Subscript(subscript) => {
            is_plain_place(&subscript.value)
                && match subscript.slice.as_ref() {
                    Expr::Slice(_) | Expr::NumberLiteral(_) | Expr::EllipsisLiteral(_) => true,
                    Expr::Tuple(tuple) => tuple.elts.iter().all(|e| matches!(e, Expr::Slice(_) | Expr::NumberLiteral(_))),
                    _ => false,
                }
        }
        _ => false,
    }
}
