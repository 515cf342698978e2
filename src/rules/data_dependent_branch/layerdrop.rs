//! `if dropout_probability < self.layerdrop:`: LayerDrop skips a layer on a random draw, which no
//! graph can express without running every layer. tcfix offers no fix: turning LayerDrop off under
//! compile (`not torch.compiler.is_compiling() and ...`, what it once wrote) removes the break by
//! training a different model than eager does, which is removing the feature, not fixing the
//! hazard. The finding says what keeps the feature instead (`LAYERDROP`).

use ruff_python_ast::{self as ast, Expr};

use crate::model::defaults::layerdrop::compares_with_layerdrop;
/// What to do about an `if` on a LayerDrop draw, `None` when the test is not one.
pub(super) fn layerdrop_advice(if_stmt: &ast::StmtIf) -> Option<String> {
    let layerdrop = match if_stmt.test.as_ref() {
        compare @ Expr::Compare(_) => compares_with_layerdrop(compare),
        Expr::BoolOp(bool_op) => bool_op.values.iter().any(compares_with_layerdrop),
        _ => false,
    };
    layerdrop.then(|| LAYERDROP.to_string())
}

/// What keeps LayerDrop under compile (the rule README says how): compiling each layer, or a
/// branch Dynamo traces, or the skip computed with `torch.where` (every layer then runs).
pub(super) const LAYERDROP: &str = "compile each layer (`layer.compile()`) instead of the loop, or draw the skip as a \
     tensor and use `torch.cond` or `torch.where(skip, h, layer(h))`: no fix keeps LayerDrop in one graph";
