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
//! Only lists of two or more number literals: `not in (1,)` is a plain `!= 1` (a decode step
//! against a prefill: both normal), and a list of names or strings says nothing of what is usual.

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
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => self.needs_false(&not.operand),
            _ => self.unlisted(test, CmpOp::NotIn),
        }
    }

    fn needs_false(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => self.needs(&not.operand),
            _ => self.unlisted(test, CmpOp::In),
        }
    }
}

impl ListedValues<'_> {
    /// `value <op> [n, m, ...]` with `op` the test that leaves the listed values out (`not in` for
    /// a branch taken, `in` for one skipped): "only when `value` is not one of n, m".
    fn unlisted(&self, test: &Expr, op: CmpOp) -> Option<String> {
        let Expr::Compare(compare) = test else { return None };
        let ([found], [listed]) = (&*compare.ops, &*compare.comparators) else { return None };
        let values = match listed {
            Expr::List(ast::ExprList { elts, .. })
            | Expr::Tuple(ast::ExprTuple { elts, .. })
            | Expr::Set(ast::ExprSet { elts, .. }) => elts,
            _ => return None,
        };
        let numbers = values.iter().all(|value| value.is_number_literal_expr());
        if *found != op || values.len() < 2 || !numbers {
            return None;
        }
        let text = |expr: &Expr| &self.model.source.text[expr.range()];
        let listed: Vec<&str> = values.iter().map(text).collect();
        Some(format!("only when `{}` is not one of {}", text(&compare.left), listed.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use crate::project::findings_of_texts;

    /// Each finding as "line severity message".
    fn findings(text: &str) -> Vec<String> {
        let found = findings_of_texts(&[("scan.py", text)]);
        found.iter().map(|(_, line, d)| format!("{line} {:?} {}", d.severity, d.message)).collect()
    }

    #[test]
    fn a_message_behind_an_unlisted_size_is_low_and_says_which_values() {
        let found = findings(
            "import torch\n\
             def scan(q):\n\
            \x20   _, d = q.shape\n\
            \x20   if d not in [16, 32, 64]:\n\
            \x20       print(f'untested head size {d}')\n\
            \x20   if d in (16, 32):\n\
            \x20       return q\n\
            \x20   print('slow path')\n\
            \x20   return q * 2\n\
             scan_compiled = torch.compile(scan)\n",
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].starts_with("5 Low") && found[0].ends_with("; only when `d` is not one of 16, 32, 64"),
            "{found:#?}"
        );
        assert!(
            found[1].starts_with("8 Low") && found[1].ends_with("; only when `d` is not one of 16, 32"),
            "{found:#?}"
        );
    }

    #[test]
    fn a_single_value_or_strings_or_an_or_say_nothing() {
        let found = findings(
            "import torch\n\
             def scan(q, mode):\n\
            \x20   n = q.shape[1]\n\
            \x20   if n not in (1,):\n\
            \x20       print('prefill')\n\
            \x20   if mode not in ['a', 'b']:\n\
            \x20       print('unknown mode')\n\
            \x20   if n not in [16, 32] or q.is_cuda:\n\
            \x20       print('fallback')\n\
            \x20   return q\n\
             scan_compiled = torch.compile(scan)\n",
        );
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found.iter().all(|f| f.contains(" High ")), "{found:#?}");
    }
}
