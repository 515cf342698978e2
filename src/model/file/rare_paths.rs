//! Branches a normal compiled call never takes, read from the test alone: a branch taken only
//! when a tensor holds NaN or inf (an anomaly report, like an `except` handler), one taken only
//! for an empty tensor (Dynamo specializes sizes 0 and 1, so a non-empty input never traces it),
//! one right before an `assert` of the opposite test (it runs only when the assert then fails),
//! and the body of a one-shot loader after its first call (`global K; if K is not None:
//! return`). `dead_code` marks them; a hazard there costs a normal call nothing.

use ruff_python_ast::comparable::ComparableExpr;
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, Stmt, UnaryOp};

use crate::model::file::imports::{Imports, last_segment};
use crate::model::file::output_calls::writes_output;
/// `torch.isnan(x).any()`, `x.isinf().any().item()`, `not torch.isfinite(x).all()`, and `and` of
/// anything with one of those (or `or` of those only): true only when a value is NaN or inf.
pub fn only_when_not_finite(test: &Expr) -> bool {
    match test {
        Expr::BoolOp(op) if op.op == BoolOp::And => op.values.iter().any(only_when_not_finite),
        Expr::BoolOp(op) => op.values.iter().all(only_when_not_finite),
        Expr::UnaryOp(op) if op.op == UnaryOp::Not => reduced(&op.operand, "all").is_some_and(is_finite_check),
        _ => reduced(test, "any").is_some_and(is_non_finite_check),
    }
}

/// `torch.numel(x) == 0`, `x.numel() == 0`, `x.shape[0] == 0`, `x.size(1) == 0` (either side), and
/// `and` of anything with one of those: true only for an empty tensor.
pub fn only_when_empty(test: &Expr) -> bool {
    match test {
        Expr::BoolOp(op) if op.op == BoolOp::And => op.values.iter().any(only_when_empty),
        Expr::Compare(compare) => {
            let ([CmpOp::Eq], [right]) = (&*compare.ops, &*compare.comparators) else { return false };
            let left = compare.left.as_ref();
            (is_zero(right) && is_tensor_size(left)) || (is_zero(left) && is_tensor_size(right))
        }
        _ => false,
    }
}

/// Whether `body`, the branch of `if test:`, only writes output and `next` is an `assert` of the
/// opposite test: `if x.shape != s: print(...)` then `assert x.shape == s`. The branch runs only
/// when the assert after it fails, so on a call that works it never runs (Dynamo decides the test
/// while tracing and does not trace the branch). Not a branch that does anything else (`if
/// x.dim() != 3: x = x.unsqueeze(1)`, `fix(x)`): that may mend what the assert checks, and then
/// the assert holds.
pub fn before_failing_assert(test: &Expr, body: &[Stmt], next: Option<&Stmt>, imports: &Imports) -> bool {
    let Some(Stmt::Assert(assert)) = next else { return false };
    let writes_output = |stmt: &Stmt| matches!(stmt, Stmt::Expr(expr) if matches!(expr.value.as_ref(), Expr::Call(call) if writes_output(call, imports)));
    opposite(test, &assert.test) && body.iter().all(writes_output)
}

/// `not a` and `a`; `a != b` and `a == b` (and the other comparison pairs), either way round.
fn opposite(a: &Expr, b: &Expr) -> bool {
    let negates = |negated: &Expr, plain: &Expr| match negated {
        Expr::UnaryOp(not) if not.op == UnaryOp::Not => {
            ComparableExpr::from(&not.operand) == ComparableExpr::from(plain)
        }
        _ => false,
    };
    if negates(a, b) || negates(b, a) {
        return true;
    }
    let (Expr::Compare(a), Expr::Compare(b)) = (a, b) else { return false };
    let ([op_a], [op_b]) = (&*a.ops, &*b.ops) else { return false };
    negated_comparison(*op_a) == *op_b
        && ComparableExpr::from(&a.left) == ComparableExpr::from(&b.left)
        && ComparableExpr::from(&a.comparators[0]) == ComparableExpr::from(&b.comparators[0])
}

/// The comparison that holds exactly when `op` fails.
fn negated_comparison(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::NotEq,
        CmpOp::NotEq => CmpOp::Eq,
        CmpOp::Lt => CmpOp::GtE,
        CmpOp::GtE => CmpOp::Lt,
        CmpOp::Gt => CmpOp::LtE,
        CmpOp::LtE => CmpOp::Gt,
        CmpOp::Is => CmpOp::IsNot,
        CmpOp::IsNot => CmpOp::Is,
        CmpOp::In => CmpOp::NotIn,
        CmpOp::NotIn => CmpOp::In,
    }
}

/// The global a one-shot loader sets on its first call, when `body` is one: it declares
/// `global K`, its first statement (after the docstring and the declaration) returns when `K is
/// not None` (or when `K` is truthy), and it assigns `K` after that. What follows that first
/// statement runs on the first call only.
pub fn one_shot_global(body: &[Stmt]) -> Option<(&str, usize)> {
    let mut globals = Vec::new();
    let mut at = 0;
    while let Some(stmt) = body.get(at) {
        match stmt {
            Stmt::Global(global) => globals.extend(global.names.iter().map(|n| n.id.as_str())),
            Stmt::Expr(expr) if expr.value.is_string_literal_expr() => {}
            _ => break,
        }
        at += 1;
    }
    let Stmt::If(guard) = body.get(at)? else { return None };
    let name = loaded_global(&guard.test)?;
    let returns = matches!(guard.body.last(), Some(Stmt::Return(_)));
    let declared = globals.contains(&name);
    let set_later = body[at + 1..].iter().any(|stmt| assigns(stmt, name));
    (returns && guard.elif_else_clauses.is_empty() && declared && set_later).then_some((name, at))
}

/// `K is not None` or `K`: the name tested.
fn loaded_global(test: &Expr) -> Option<&str> {
    match test {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Compare(compare) => match (&*compare.ops, &*compare.comparators, compare.left.as_ref()) {
            ([CmpOp::IsNot], [Expr::NoneLiteral(_)], Expr::Name(name)) => Some(name.id.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `stmt` (or a statement nested in it) assigns `name`.
fn assigns(stmt: &Stmt, name: &str) -> bool {
    use ruff_python_ast::visitor::{Visitor, walk_expr};
    struct Stores<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'a> Visitor<'a> for Stores<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(n) = expr {
                self.found |= n.ctx == ast::ExprContext::Store && n.id.as_str() == self.name;
            }
            walk_expr(self, expr);
        }
    }
    let mut stores = Stores { name, found: false };
    stores.visit_stmt(stmt);
    stores.found
}

/// `x.any()` / `torch.any(x)` (with `reduction` "any" or "all"), then an optional `.item()`: the
/// reduced tensor `x`. A test without the reduction (`if torch.isnan(x):`) is `x` itself.
fn reduced<'e>(expr: &'e Expr, reduction: &str) -> Option<&'e Expr> {
    let expr = method_receiver(expr, "item").unwrap_or(expr);
    if let Some(inner) = method_receiver(expr, reduction) {
        return Some(inner);
    }
    if let Expr::Call(call) = expr
        && last_segment(&call.func) == Some(reduction)
        && let [inner] = &*call.arguments.args
    {
        return Some(inner);
    }
    Some(expr)
}

/// `torch.isnan(x)`, `x.isinf()`, `torch.isposinf(x)`, `torch.isneginf(x)`.
fn is_non_finite_check(expr: &Expr) -> bool {
    is_check(expr, &["isnan", "isinf", "isposinf", "isneginf"])
}

/// `torch.isfinite(x)`, `x.isfinite()`.
fn is_finite_check(expr: &Expr) -> bool {
    is_check(expr, &["isfinite"])
}

fn is_check(expr: &Expr, names: &[&str]) -> bool {
    let Expr::Call(call) = expr else { return false };
    last_segment(&call.func).is_some_and(|name| names.contains(&name))
}

/// `receiver` of `receiver.method()` called without arguments.
fn method_receiver<'e>(expr: &'e Expr, method: &str) -> Option<&'e Expr> {
    let Expr::Call(call) = expr else { return None };
    let Expr::Attribute(attr) = call.func.as_ref() else { return None };
    (attr.attr.id.as_str() == method && call.arguments.is_empty()).then_some(attr.value.as_ref())
}

fn is_zero(expr: &Expr) -> bool {
    matches!(expr, Expr::NumberLiteral(n) if matches!(&n.value, ast::Number::Int(i) if i.as_u8() == Some(0)))
}

/// A size of a tensor: `torch.numel(x)`, `x.numel()`, `x.nelement()`, `x.shape[i]`, `x.size(i)`.
fn is_tensor_size(expr: &Expr) -> bool {
    match expr {
        Expr::Subscript(subscript) => {
            matches!(subscript.value.as_ref(), Expr::Attribute(attr) if attr.attr.id.as_str() == "shape")
        }
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(attr) => match attr.attr.id.as_str() {
                "numel" | "nelement" => call.arguments.is_empty() || is_torch(&attr.value),
                "size" => call.arguments.args.len() == 1,
                _ => false,
            },
            _ => false,
        },
        _ => false,
    }
}

fn is_torch(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(name) if name.id.as_str() == "torch")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_parser::parse_expression;

    fn test(text: &str) -> Expr {
        parse_expression(text).unwrap().into_expr()
    }

    #[test]
    fn nan_and_inf_tests_are_read_as_such() {
        for text in [
            "torch.isnan(x).any().item()",
            "torch.isinf(x).any()",
            "x.isnan().any()",
            "torch.any(torch.isnan(x))",
            "not torch.isfinite(x).all()",
            "x.dtype == torch.float16 and not torch.isfinite(x).all()",
            "torch.isinf(x).any() or torch.isnan(x).any()",
        ] {
            assert!(only_when_not_finite(&test(text)), "{text}");
        }
    }

    #[test]
    fn finite_tests_and_mixed_tests_are_not() {
        for text in ["torch.isfinite(x).all()", "not torch.isnan(x).any()", "torch.isnan(x).any() or y", "x.any()"] {
            assert!(!only_when_not_finite(&test(text)), "{text}");
        }
    }

    #[test]
    fn a_branch_before_the_opposite_assert_is_read_as_such() {
        let statements = |text: &str| ruff_python_parser::parse_module(text).unwrap().into_suite();
        let imports = Imports::default();
        let report = statements("print(x.shape)\nlogger.warning('bad size')\nwarnings.warn('odd')");
        for (branch, check) in [
            ("x.shape != (b, h, d)", "assert x.shape == (b, h, d)"),
            ("not ok", "assert ok"),
            ("n % g", "assert not n % g, 'divisible'"),
            ("mask is None", "assert mask is not None"),
            ("n >= limit", "assert n < limit"),
        ] {
            let next = statements(check);
            assert!(before_failing_assert(&test(branch), &report, next.first(), &imports), "{branch} / {check}");
        }
        for (branch, check) in [
            ("x.shape != (b, h, d)", "assert x.shape == (b, h)"),
            ("x.shape != s", "assert x.shape != s"),
            ("n > limit", "assert n < limit"),
            ("a != b != c", "assert a == b == c"),
            ("not ok", "ok = True"),
        ] {
            let next = statements(check);
            assert!(!before_failing_assert(&test(branch), &report, next.first(), &imports), "{branch} / {check}");
        }
        assert!(!before_failing_assert(&test("not ok"), &report, None, &imports));
        // A branch that may mend what the assert checks runs on a working call.
        let check = statements("assert x.dim() == 3");
        for mends in ["x = x.unsqueeze(1)", "x.unsqueeze_(1)", "print(x)\nx = x[None]", "fix(x)", "make_ready(self)"] {
            let body = statements(mends);
            assert!(!before_failing_assert(&test("x.dim() != 3"), &body, check.first(), &imports), "{mends}");
        }
    }

    #[test]
    fn empty_tensor_tests_are_read_as_such() {
        for text in ["torch.numel(x) == 0", "x.numel() == 0", "0 == x.shape[0]", "x is not None and x.size(1) == 0"] {
            assert!(only_when_empty(&test(text)), "{text}");
        }
        for text in ["len(x) == 0", "x.numel() == 1", "x.numel() != 0", "x.shape[0] == 0 or y"] {
            assert!(!only_when_empty(&test(text)), "{text}");
        }
    }
}
