//! Code that runs only for a value outside the ones the code lists.
//!
//! `if head_dim not in [16, 32, 64, 128]: print("WARNING: untested head size")`: Dynamo decides
//! the test while it traces (a size is a constant on the first compile, and a dynamic one is
//! guarded), so a model built with a listed value never traces the branch and its graph does not
//! break there (measured under torch 2.15: 0 breaks for the listed sizes, a break at each trace for another).
//! The list is what the authors call normal: a finding behind such a test is real only for a
//! value off it, so it stays, low, and says so ("only when `head_dim` is not one of 16, 32, 64,
//! 128").
//!
//! The body of `not in`, and the `else` of `in` (or what follows `if n in (...): return`). Only
//! lists of two or more number literals, none of them 0, 1 or negative: `not in (1,)` is a plain
//! `!= 1` (a decode step against a prefill: both normal), and `not in (0, 1)` lists the degenerate
//! sizes and leaves out the usual ones (`if x.dim() not in (0, 1): print(...)` runs on every
//! batch; after `if n in (0, 1): return` runs every normal call); a list of names or strings
//! says nothing of what is usual.

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions};
use crate::model::file::{FileModel, FunctionNode};

/// For each of `ranges`, the condition its code needs when a test against a list of values
/// guards it.
pub fn off_unless_unlisted_value(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    if model.source.text.contains(" in ") {
        for function in &model.functions {
            let FunctionNode::Def(def) = function.node else { continue };
            if conditions.touches(def.range()) {
                BranchWalk { tests: ListedValues { model }, conditions: &mut conditions }.visit_body(&def.body);
            }
        }
    }
    conditions.into_vec()
}

struct ListedValues<'m> {
    model: &'m FileModel<'m>,
}

impl BranchTests for ListedValues<'_> {
    fn needs(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::BoolOp(op) if op.op == BoolOp::And => op.values.iter().find_map(|value| self.needs(value)),
            // `not v in [...]` is `v not in [...]`.
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => self.unlisted(&not.operand, CmpOp::In),
            _ => self.unlisted(test, CmpOp::NotIn),
        }
    }

    /// The `else` of `if n in (16, 32):`, or what follows `if n in (16, 32): return`.
    fn needs_false(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => self.needs(&not.operand),
            _ => self.unlisted(test, CmpOp::In),
        }
    }
}

impl ListedValues<'_> {
    /// `value <op> [n, m, ...]`, `op` being what leaves the listed values out (`not in`, or `in`
    /// under a `not`): "only when `value` is not one of n, m".
    fn unlisted(&self, test: &Expr, op: CmpOp) -> Option<String> {
        let Expr::Compare(compare) = test else { return None };
        let ([found], [listed]) = (&*compare.ops, &*compare.comparators) else { return None };
        let values = match listed {
            Expr::List(ast::ExprList { elts, .. })
            | Expr::Tuple(ast::ExprTuple { elts, .. })
            | Expr::Set(ast::ExprSet { elts, .. }) => elts,
            _ => return None,
        };
        let text = |expr: &Expr| &self.model.source.text[expr.range()];
        let tried_size = |value: &Expr| match value {
            Expr::NumberLiteral(number) => match &number.value {
                ast::Number::Int(int) => int.as_u64().is_some_and(|n| n > 1),
                ast::Number::Float(float) => *float != 0.0 && *float != 1.0,
                ast::Number::Complex { .. } => false,
            },
            // `-1` is a negation, no literal: not a tried size either.
            _ => false,
        };
        if *found != op || values.len() < 2 || !values.iter().all(tried_size) {
            return None;
        }
        let listed: Vec<&str> = values.iter().map(text).collect();
        Some(format!("only when `{}` is not one of {}", text(&compare.left), listed.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use crate::project::findings_of_texts;

    /// Each finding of `scan.py` as "line severity message".
    fn findings(body: &[&str]) -> Vec<String> {
        let text = format!(
            "import torch\ndef scan(q):\n    n = q.shape[-1]\n{}\n    return q\nscan_compiled = torch.compile(scan)\n",
            body.join("\n")
        );
        let found = findings_of_texts(&[("scan.py", &text)]);
        found.iter().map(|(_, line, d)| format!("{line} {:?} {}", d.severity, d.message)).collect()
    }

    #[test]
    fn a_message_behind_an_unlisted_size_is_low_and_says_which_values() {
        let found = findings(&[
            "    if n not in [16, 32, 64]:",
            "        print(f'untested head size {n}')",
            "    if not n in (16, 32):",
            "        print('slow path')",
            "    if n in (16, 32, 64):",
            "        q = q * 2",
            "    else:",
            "        print('untested')",
        ]);
        assert_eq!(found.len(), 3, "{found:#?}");
        let [first, second, third] = &found[..] else { unreachable!() };
        assert!(first.starts_with("5 Low") && first.ends_with("; only when `n` is not one of 16, 32, 64"), "{first}");
        assert!(second.starts_with("7 Low") && second.ends_with("; only when `n` is not one of 16, 32"), "{second}");
        assert!(third.starts_with("11 Low") && third.ends_with("; only when `n` is not one of 16, 32, 64"), "{third}");
    }

    #[test]
    fn other_lists_and_tests_say_nothing() {
        let found = findings(&[
            "    if n not in (1,):",
            "        print('prefill')",
            "    if q.dtype not in ['a', 'b']:",
            "        print('unknown mode')",
            "    if n not in [16, 32] or q.is_cuda:",
            "        print('fallback')",
            "    if q.dim() not in (0, 1):",
            "        print('a batch')",
            "    if n in (0, 1):",
            "        return q",
            "    print('every normal call')",
            "    if n not in (0.0, 2.5):",
            "        print('a float list with a degenerate value')",
        ]);
        assert_eq!(found.len(), 6, "{found:#?}");
        assert!(found.iter().all(|f| f.contains(" High ")), "{found:#?}");
    }
}
