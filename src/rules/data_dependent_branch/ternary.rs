//! `name = A if <0-d bool tensor> else B`, with `A` and `B` Python numbers (literals, config
//! lookups): `name = torch.where(<test>, A, B)`, a 0-d tensor. Phimoe's rotary scaling picks
//! `long_mscale` or `short_mscale` on `seq_len > original_max_position_embeddings`, with `seq_len`
//! a reduction of `position_ids`. Both sides are now evaluated, and the name holds a tensor where it
//! held a number: offered only where every later use of the name is arithmetic (or `is None`),
//! which takes a 0-d tensor as it took the number.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, CmpOp, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::fix::text::torch_name;
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::FileModel;
use crate::model::tensors::tensor::Tensors;
/// The fix for a ternary on tensor data, or why there is none. `assigned` is the name the
/// ternary is the value of (`mscale = a if t else b`), seen by the checker's walk.
pub(super) fn where_fix(
    model: &FileModel,
    tensors: &Tensors,
    body: &[Stmt],
    ternary: &ast::ExprIf,
    assigned: Option<&str>,
) -> Result<Fix, String> {
    const NO_FIX: &str = "write `torch.where(cond, a, b)` by hand where both sides can be computed: the ternary \
                          does not pick between two Python numbers for a name";
    if !tensors.is_zero_dim(&ternary.test) || !is_number(&ternary.body) || !is_number(&ternary.orelse) {
        return Err(NO_FIX.into());
    }
    let Some(name) = assigned else { return Err(NO_FIX.into()) };
    if !only_arithmetic_uses(body, name, ternary.range()) {
        return Err(format!(
            "write `torch.where(cond, a, b)` by hand if every use of `{name}` can take a 0-d tensor: some use \
             (a test, a conversion, a size) needs a Python number"
        ));
    }
    let (torch, import) = torch_name(model);
    if import.is_some() {
        return Err("the module does not import torch: write `torch.where(cond, a, b)` by hand".into());
    }
    let text = &model.source.text;
    let replacement = format!(
        "{torch}.where({}, {}, {})",
        &text[ternary.test.range()],
        &text[ternary.body.range()],
        &text[ternary.orelse.range()]
    );
    let title = format!(
        "Pick with `{torch}.where` instead of a ternary (unsafe: `{name}` becomes a 0-d tensor instead of a Python \
         number, and both sides are evaluated: a lookup that fails on the side not taken now fails every time)"
    );
    Ok(Fix::new(title, Safety::Unsafe, vec![Edit::replace(ternary.range(), replacement)]))
}

/// `1.0`, `-2`, `self.config.rope_parameters["long_mscale"]`: a number, or a lookup with no call.
fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_) => true,
        Expr::UnaryOp(op) => is_number(&op.operand),
        Expr::Attribute(attr) => matches!(attr.value.as_ref(), Expr::Name(_) | Expr::Attribute(_) | Expr::Subscript(_)),
        Expr::Subscript(subscript) => {
            matches!(subscript.slice.as_ref(), Expr::StringLiteral(_) | Expr::NumberLiteral(_))
                && matches!(subscript.value.as_ref(), Expr::Attribute(_) | Expr::Subscript(_))
        }
        _ => false,
    }
}

/// Whether every read of `name` outside the ternary is an operand of arithmetic, an `is None` /
/// `is not None` test, or a side of a ternary assigned back to it
/// (`mscale = attention_scaling if mscale is None else mscale`).
fn only_arithmetic_uses(body: &[Stmt], name: &str, ternary: TextRange) -> bool {
    struct Uses<'n> {
        name: &'n str,
        ternary: TextRange,
        other: bool,
    }
    impl Uses<'_> {
        fn is_name(&self, expr: &Expr) -> bool {
            matches!(expr, Expr::Name(n) if n.id == self.name && n.ctx == ExprContext::Load)
        }
    }
    // A visitor of its own: the fix asks about every use of one name in all the function's code, eager branches and nested defs included: the checker walks compiled code only.
    impl<'a> Visitor<'a> for Uses<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::Assign(assign) = stmt
                && let ([Expr::Name(target)], Expr::If(if_expr)) = (assign.targets.as_slice(), assign.value.as_ref())
                && target.id == self.name
            {
                self.visit_expr(&if_expr.test);
                for side in [&if_expr.body, &if_expr.orelse] {
                    if !self.is_name(side) {
                        self.visit_expr(side);
                    }
                }
                return;
            }
            walk_stmt(self, stmt);
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                _ if self.ternary.contains_range(expr.range()) => {}
                Expr::BinOp(op) if self.is_name(&op.left) || self.is_name(&op.right) => {
                    for operand in [&op.left, &op.right] {
                        if !self.is_name(operand) {
                            self.visit_expr(operand);
                        }
                    }
                }
                Expr::Compare(compare)
                    if self.is_name(&compare.left)
                        && matches!(&*compare.ops, [CmpOp::Is | CmpOp::IsNot])
                        && compare.comparators.iter().all(Expr::is_none_literal_expr) => {}
                _ if self.is_name(expr) => self.other = true,
                _ => walk_expr(self, expr),
            }
        }
    }
    let mut uses = Uses { name, ternary, other: false };
    uses.visit_body(body);
    !uses.other
}
