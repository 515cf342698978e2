//! Code that runs only for a half-precision tensor.
//!
//! `if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any(): clamp`: Dynamo
//! reads a tensor's dtype while it traces, as a constant, so a float32 or bfloat16 run never
//! reaches the `.any()` and its graph does not break there. A model runs in float32 unless the
//! user asks for less: a finding behind such a test is real only for a float16 run, so it stays,
//! low, and says so ("only when `hidden_states` is float16").
//!
//! Not in a file that asks for half precision itself (`h = self.proj(x).half()`, `autocast`,
//! `dtype=torch.float16`): its runs may be float16 whatever the user asks.

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{BoolOp, CmpOp, Expr, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions};
use crate::model::file::{FileModel, FunctionNode};

/// For each of `ranges`, the condition its code needs when a test of a tensor's dtype for a half
/// precision guards it.
pub fn off_unless_half_precision(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    let text = model.source.text.as_str();
    if text.contains(".dtype") && !HALF_PRECISION_ASKED.iter().any(|asked| text.contains(asked)) {
        for function in &model.functions {
            let FunctionNode::Def(def) = function.node else { continue };
            if conditions.touches(def.range()) {
                BranchWalk { tests: DtypeTests, conditions: &mut conditions }.visit_body(&def.body);
            }
        }
    }
    conditions.into_vec()
}

/// What a file writes to run in half precision itself.
const HALF_PRECISION_ASKED: &[&str] = &[
    ".half()",
    ".bfloat16()",
    "autocast",
    "dtype=torch.float16",
    "dtype=torch.bfloat16",
    "(torch.float16",
    "(torch.bfloat16",
    "set_default_dtype",
];

struct DtypeTests;

impl BranchTests for DtypeTests {
    fn needs(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::BoolOp(op) if op.op == BoolOp::And => op.values.iter().find_map(|value| self.needs(value)),
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => self.needs_false(&not.operand),
            Expr::Compare(_) => half_precision_test(test, true),
            _ => None,
        }
    }

    fn needs_false(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => self.needs(&not.operand),
            Expr::Compare(_) => half_precision_test(test, false),
            _ => None,
        }
    }
}

/// `x.dtype == torch.float16`, `x.dtype in (torch.float16, torch.bfloat16)` (`holds`), or their
/// negations `!=` / `not in` (not `holds`): "only when `x` is float16".
fn half_precision_test(test: &Expr, holds: bool) -> Option<String> {
    let Expr::Compare(compare) = test else { return None };
    let ([op], [dtypes]) = (&*compare.ops, &*compare.comparators) else { return None };
    let positive = match op {
        CmpOp::Eq | CmpOp::In => true,
        CmpOp::NotEq | CmpOp::NotIn => false,
        _ => return None,
    };
    if positive != holds {
        return None;
    }
    let Expr::Attribute(dtype) = compare.left.as_ref() else { return None };
    let Expr::Name(tensor) = dtype.value.as_ref() else { return None };
    if dtype.attr.id.as_str() != "dtype" {
        return None;
    }
    let names = match dtypes {
        Expr::Tuple(tuple) if matches!(op, CmpOp::In | CmpOp::NotIn) => half_precisions(&tuple.elts)?,
        Expr::List(list) if matches!(op, CmpOp::In | CmpOp::NotIn) => half_precisions(&list.elts)?,
        single if matches!(op, CmpOp::Eq | CmpOp::NotEq) => half_precisions(std::slice::from_ref(single))?,
        _ => return None,
    };
    Some(format!("only when `{}` is {}", tensor.id, names.join(" or ")))
}

/// The half precisions named, when every one of `dtypes` is one: `torch.float16`, `torch.half`,
/// `torch.bfloat16`.
fn half_precisions(dtypes: &[Expr]) -> Option<Vec<&'static str>> {
    dtypes
        .iter()
        .map(|dtype| match dtype {
            Expr::Attribute(attr) if matches!(attr.value.as_ref(), Expr::Name(torch) if torch.id.as_str() == "torch") => {
                match attr.attr.id.as_str() {
                    "float16" | "half" => Some("float16"),
                    "bfloat16" => Some("bfloat16"),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .filter(|names| !names.is_empty())
}
