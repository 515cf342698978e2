//! `if dropout_probability < self.layerdrop:` -> `if not torch.compiler.is_compiling() and
//! dropout_probability < self.layerdrop:`. LayerDrop skips a layer on a random draw, which no graph
//! can express without running every layer; under Dynamo `is_compiling()` is the constant True, so
//! the `and` stops before the tensor comparison is traced and no layer is dropped under compile.
//! Eager runs test the draw as before. A test that keeps the layer when it holds (`p > rate`)
//! gets `is_compiling() or` instead.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use crate::fix::text::torch_name_at;
use crate::fix::torch_api::{TorchVersion, is_compiling_call};
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::FileModel;
use crate::model::layerdrop::{LayerDropTest, compares_with_layerdrop};

/// The fix for an `if` on a LayerDrop draw, `None` when the test is not one, `Err` with why when
/// it is one that cannot be turned off here.
pub(super) fn layerdrop_off_fix(
    model: &FileModel,
    target: TorchVersion,
    if_stmt: &ast::StmtIf,
) -> Option<Result<Fix, String>> {
    let test = match if_stmt.test.as_ref() {
        compare @ Expr::Compare(_) if compares_with_layerdrop(compare) => LayerDropTest::of(compare),
        Expr::BoolOp(bool_op) if bool_op.values.iter().any(compares_with_layerdrop) => layerdrop_operand(bool_op),
        _ => return None,
    };
    let Some(test) = test else { return Some(Err(LAYERDROP.into())) };
    // The guard skips the rest of the test under compile: a name it binds (`(p := torch.rand([]))`)
    // would be unbound after it.
    if contains_named_expr(&if_stmt.test) {
        return Some(Err(LAYERDROP.into()));
    }
    // A fix that loads torch into the module would change what importing it does: only where the
    // file already names torch (it draws with `torch.rand`, so it nearly always does).
    let torch = torch_name_at(model, if_stmt.test.start());
    if torch.import.is_some() {
        return Some(Err(LAYERDROP.into()));
    }
    let compiling = is_compiling_call(&torch.name, target);
    let (guard, short_circuit) =
        if test.drops_when_true { (format!("not {compiling}"), "and") } else { (compiling, "or") };
    // A comparison binds tighter than `and`/`or`, and an `and` (`or`) test only gets `... and`
    // (`... or`) in front: no parentheses needed.
    let edits = vec![Edit::insert(if_stmt.test.start(), format!("{guard} {short_circuit} "))];
    let title = format!(
        "Turn LayerDrop off under torch.compile with `{guard} {short_circuit}` (unsafe: compiled training runs every \
         layer, where eager drops each with probability `layerdrop`; eager runs are unchanged): no graph break here, \
         so the layer loop is traced instead of running eagerly"
    );
    Some(Ok(Fix::new(title, Safety::Unsafe, edits)))
}

fn contains_named_expr(expr: &Expr) -> bool {
    struct Named(bool);
    impl<'a> Visitor<'a> for Named {
        fn visit_expr(&mut self, expr: &'a Expr) {
            self.0 |= expr.is_named_expr();
            walk_expr(self, expr);
        }
    }
    let mut named = Named(false);
    named.visit_expr(expr);
    named.0
}

/// `self.training and p < self.layerdrop`: the one LayerDrop comparison among the operands, when
/// the test as a whole still means what it does (an `and` holds only when the layer is dropped,
/// an `or` whenever it is kept), so that forcing the whole test keeps the layer.
fn layerdrop_operand(bool_op: &ast::ExprBoolOp) -> Option<LayerDropTest<'_>> {
    let [operand] = bool_op.values.iter().filter(|value| compares_with_layerdrop(value)).collect::<Vec<_>>()[..] else {
        return None;
    };
    let test = LayerDropTest::of(operand)?;
    (test.drops_when_true == (bool_op.op == ast::BoolOp::And)).then_some(test)
}

const LAYERDROP: &str = "turn LayerDrop off under compile (`if not torch.compiler.is_compiling() and ...`), or \
     compile each layer (`layer.compile()`): no branchless form skips a layer";
