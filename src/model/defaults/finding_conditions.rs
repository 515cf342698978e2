//! The condition each finding's code needs before it runs, as the model finds them
//! (`unset_flags`, `keyword_flags`, `replaced_submodules`, `constructor_flags`,
//! `config_defaults`): a walk marks the branches it reads, and every finding inside one gets that
//! branch's condition, the outermost first.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

pub struct FindingConditions {
    /// The findings: (range, position in the caller's list), sorted by start, so that the
    /// findings inside a range are found by a binary search and not by testing every one (a
    /// file can hold tens of thousands of classes, each with a finding).
    by_start: Vec<(TextRange, usize)>,
    /// By finding, in the caller's order: the condition its code needs, once one is found.
    conditions: Vec<Option<String>>,
}

impl FindingConditions {
    pub fn new(ranges: &[TextRange]) -> Self {
        let mut by_start: Vec<(TextRange, usize)> = ranges.iter().copied().zip(0..).collect();
        by_start.sort_by_key(|(range, _)| range.start());
        Self { by_start, conditions: vec![None; ranges.len()] }
    }

    /// The positions of the findings that lie in `range`.
    fn inside(&self, range: TextRange) -> impl Iterator<Item = usize> + '_ {
        let first = self.by_start.partition_point(|(found, _)| found.start() < range.start());
        self.by_start[first..]
            .iter()
            .take_while(move |(found, _)| found.start() <= range.end())
            .filter(move |(found, _)| range.contains_range(*found))
            .map(|&(_, position)| position)
    }

    /// Code in `range` runs only when `condition` holds: the findings there that have no condition
    /// yet need it (a walk marks outer branches first, so the outermost wins).
    pub fn mark(&mut self, range: TextRange, condition: &str) {
        let inside: Vec<usize> = self.inside(range).filter(|&at| self.conditions[at].is_none()).collect();
        for at in inside {
            self.conditions[at] = Some(condition.to_string());
        }
    }

    /// Whether a finding lies in `range`: a walk need not look anywhere else.
    pub fn touches(&self, range: TextRange) -> bool {
        self.inside(range).next().is_some()
    }

    pub fn into_vec(self) -> Vec<Option<String>> {
        self.conditions
    }
}

/// The range of a branch's body, from its first statement to its last.
pub fn body_range(body: &[Stmt]) -> Option<TextRange> {
    Some(TextRange::new(body.first()?.start(), body.last()?.end()))
}

/// The test of an `if` that returns when it holds (`if not self.checks: return x`, no `elif` or
/// `else`, its body ending in `return`): the statements after it run only when the test fails.
/// Not one that raises: `if self.vision_tower is None: raise ...` is what the function needs to
/// run at all, and a caller that reaches the rest has what it needs.
pub fn early_exit_test(stmt: &Stmt) -> Option<&Expr> {
    let Stmt::If(if_stmt) = stmt else { return None };
    let leaves = matches!(if_stmt.body.last(), Some(Stmt::Return(_)));
    (leaves && if_stmt.elif_else_clauses.is_empty()).then_some(&*if_stmt.test)
}

/// What `default <op> bound` gives: whether a number the defaults leave makes a comparison with a
/// literal hold (`steps > 1` with `steps=1`: no). `None` for an operator that is no comparison of
/// numbers.
pub fn compares(default: f64, op: CmpOp, bound: f64) -> Option<bool> {
    Some(match op {
        CmpOp::Lt => default < bound,
        CmpOp::LtE => default <= bound,
        CmpOp::Gt => default > bound,
        CmpOp::GtE => default >= bound,
        CmpOp::Eq => default == bound,
        CmpOp::NotEq => default != bound,
        _ => return None,
    })
}

/// The range of the statements after `body[at]`, when there are any.
pub fn rest_range(body: &[Stmt], at: usize) -> Option<TextRange> {
    body_range(body.get(at + 1..)?)
}

/// Each part of `a and b and c` with what runs only when it holds (for `or`, fails): the parts
/// after it. After the first part that is the whole test: a finding on the whole test (`if
/// self.every > 0 and step.item():`) needs it too.
pub fn short_circuit(bool_op: &ast::ExprBoolOp) -> impl Iterator<Item = (&Expr, TextRange)> {
    let values = &bool_op.values;
    values.iter().enumerate().filter_map(move |(at, value)| {
        let rest = values.get(at + 1..)?;
        let after = rest.first()?.range().cover(rest.last()?.range());
        Some((value, if at == 0 { bool_op.range() } else { after }))
    })
}

/// What a walk of branches asks of each test: the condition under which a branch runs.
pub trait BranchTests {
    /// The condition under which `test` holds (`flag`, `flag and x`): its body runs only then.
    fn needs(&self, test: &Expr) -> Option<String>;
    /// The condition under which `test` fails (`not flag`): the clauses after it run only then.
    fn needs_false(&self, test: &Expr) -> Option<String>;
}

/// A walk of a function's body that marks the findings in `if`/`elif`/`else` clauses and in the
/// arms of conditional expressions by what `tests` says of each test; nested functions and
/// classes are not its body.
pub struct BranchWalk<'w, T> {
    pub tests: T,
    pub conditions: &'w mut FindingConditions,
}

impl<'b, T: BranchTests> Visitor<'b> for BranchWalk<'_, T> {
    /// After `if <test>: return ...`, the rest of the body runs only when the test fails: a
    /// finding there needs what makes it fail (`if not self.checks: return x` -> `checks` on).
    fn visit_body(&mut self, body: &'b [Stmt]) {
        for (at, stmt) in body.iter().enumerate() {
            self.visit_stmt(stmt);
            if let Some(test) = early_exit_test(stmt)
                && let Some(rest) = rest_range(body, at)
                && self.conditions.touches(rest)
                && let Some(condition) = self.tests.needs_false(test)
            {
                self.conditions.mark(rest, &condition);
            }
        }
    }

    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        if !self.conditions.touches(stmt.range()) || matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
            return;
        }
        if let Stmt::If(if_stmt) = stmt {
            let mut after_false: Option<String> = None;
            let clauses = std::iter::once((Some(&*if_stmt.test), &if_stmt.body, if_stmt.range()))
                .chain(if_stmt.elif_else_clauses.iter().map(|c| (c.test.as_ref(), &c.body, c.range())));
            for (test, body, whole) in clauses {
                if let Some(condition) = &after_false {
                    self.conditions.mark(whole, condition);
                    continue;
                }
                let Some(test) = test else { continue };
                if let Some(condition) = self.tests.needs(test) {
                    if let Some(body) = body_range(body) {
                        self.conditions.mark(body, &condition);
                    }
                } else {
                    after_false = self.tests.needs_false(test);
                }
            }
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'b Expr) {
        if !self.conditions.touches(expr.range()) || matches!(expr, Expr::Lambda(_)) {
            return;
        }
        if let Expr::If(if_exp) = expr {
            if let Some(condition) = self.tests.needs(&if_exp.test) {
                self.conditions.mark(if_exp.body.range(), &condition);
            } else if let Some(condition) = self.tests.needs_false(&if_exp.test) {
                self.conditions.mark(if_exp.orelse.range(), &condition);
            }
        }
        // In `a and b`, `b` runs only when `a` holds (`self.every > 0 and step.item() % ...`);
        // in `a or b`, only when `a` fails. The first part that says so wins.
        if let Expr::BoolOp(bool_op) = expr {
            for (part, rest) in short_circuit(bool_op) {
                let condition = match bool_op.op {
                    BoolOp::And => self.tests.needs(part),
                    BoolOp::Or => self.tests.needs_false(part),
                };
                if let Some(condition) = condition {
                    self.conditions.mark(rest, &condition);
                    break;
                }
            }
        }
        walk_expr(self, expr);
    }
}
