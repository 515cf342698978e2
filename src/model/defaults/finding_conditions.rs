//! The condition each finding's code needs before it runs, as the model finds them
//! (`unset_flags`, `keyword_flags`, `replaced_submodules`, `constructor_flags`,
//! `config_defaults`): a walk marks the branches it reads, and every finding inside one gets that
//! branch's condition, the outermost first.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, BoolOp, Expr, Stmt};
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

/// What a walk of branches asks of each test: the condition under which a branch runs.
pub trait BranchTests {
    /// The condition under which `test` holds (`flag`, `flag and x`): its body runs only then.
    fn needs(&self, test: &Expr) -> Option<String>;
    /// The condition under which `test` fails (`not flag`): the clauses after it run only then.
    fn needs_false(&self, test: &Expr) -> Option<String>;
}

/// A walk of a function's body that marks the findings in `if`/`elif`/`else` clauses, after an
/// `if` that returns or raises, and in the arms of conditional expressions by what `tests` says of
/// each test; nested functions and classes are not its body.
pub struct BranchWalk<'w, T> {
    pub tests: T,
    pub conditions: &'w mut FindingConditions,
}

impl<T: BranchTests> BranchWalk<'_, T> {
    /// An `if` with no other clause whose body ends in `return` or `raise` (`if not self.gated:
    /// return x`): the statements after it run only when its test fails.
    /// `flag and t.any()`: Python evaluates the operands after a test only when it holds, so a
    /// finding there, or one on the whole `and` whose first operand is such a test (a branch on
    /// it breaks the graph only when the first operand lets it reach the tensor), needs it.
    fn mark_after_leading_operand(&mut self, and: &ast::ExprBoolOp) {
        let Some(first) = and.values.first() else { return };
        if let Some(condition) = self.tests.needs(first) {
            self.conditions.mark(and.range(), &condition);
        }
    }

    fn after_early_exit(&self, stmt: &Stmt) -> Option<String> {
        let Stmt::If(if_stmt) = stmt else { return None };
        let exits = matches!(if_stmt.body.last(), Some(Stmt::Return(_) | Stmt::Raise(_)));
        (exits && if_stmt.elif_else_clauses.is_empty()).then(|| self.tests.needs_false(&if_stmt.test)).flatten()
    }
}

impl<'b, T: BranchTests> Visitor<'b> for BranchWalk<'_, T> {
    fn visit_body(&mut self, body: &'b [Stmt]) {
        for (at, stmt) in body.iter().enumerate() {
            self.visit_stmt(stmt);
            let rest = &body[at + 1..];
            if let Some(rest) = body_range(rest).filter(|&rest| self.conditions.touches(rest))
                && let Some(condition) = self.after_early_exit(stmt)
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
        if let Expr::BoolOp(bool_op) = expr
            && bool_op.op == BoolOp::And
        {
            self.mark_after_leading_operand(bool_op);
        }
        walk_expr(self, expr);
    }
}
