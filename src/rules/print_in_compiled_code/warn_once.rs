//! The warn-once block: `if not self._warned: self._warned = True; logger.warning(...)`. Guarding
//! only the call would still set the flag under compile, so the message would never be written,
//! not even by a later eager run. The guard goes around the whole block instead: the flag is set
//! only when the message really is written.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::file::imports::dotted_name;
/// The `if` statement to guard instead of `output` (an output call's statement directly in its
/// body), when that `if` is a warn-once block: it has no `elif`/`else`, its test reads a flag its
/// body sets (`self._warned = True`, `_seen.add(key)`), and its body does nothing else than set
/// that flag and write output (`is_output`). The flag must outlive the call (an attribute, or a
/// module-level name): a local the block sets (`use_cache = False`) is what the call computes.
pub fn enclosing_block(body: &[Stmt], output: TextRange, is_output: &dyn Fn(&Stmt) -> bool) -> Option<TextRange> {
    let block = innermost_if(body, output)?;
    if !block.elif_else_clauses.is_empty() {
        return None;
    }
    let mut tested = Vec::new();
    names_in(&block.test, &mut tested);
    let outlives_the_call = |flag: &str| flag.contains('.') || declared_global(body, flag) || !assigned_in(body, flag);
    let sets_flag = |stmt: &Stmt| {
        flag_set_by(stmt).is_some_and(|flag| tested.contains(&flag) && outlives_the_call(&flag))
    };
    let only_flag_and_output = block.body.iter().all(|stmt| sets_flag(stmt) || is_output(stmt));
    (only_flag_and_output && block.body.iter().any(sets_flag)).then(|| block.range())
}

/// The innermost `if` whose own body holds the statement at `range`.
fn innermost_if(body: &[Stmt], range: TextRange) -> Option<&ast::StmtIf> {
    for stmt in body {
        if !stmt.range().contains_range(range) {
            continue;
        }
        return match stmt {
            Stmt::If(block) if block.body.iter().any(|inner| inner.range() == range) => Some(block),
            Stmt::If(block) => innermost_if(&block.body, range)
                .or_else(|| block.elif_else_clauses.iter().find_map(|clause| innermost_if(&clause.body, range))),
            Stmt::For(s) => innermost_if(&s.body, range).or_else(|| innermost_if(&s.orelse, range)),
            Stmt::While(s) => innermost_if(&s.body, range).or_else(|| innermost_if(&s.orelse, range)),
            Stmt::With(s) => innermost_if(&s.body, range),
            Stmt::Try(s) => innermost_if(&s.body, range)
                .or_else(|| innermost_if(&s.orelse, range))
                .or_else(|| innermost_if(&s.finalbody, range)),
            _ => None,
        };
    }
    None
}

/// The flag a statement sets: `flag = ...`, `self.flag = ...`, `flag += 1`, or `seen.add(key)`.
fn flag_set_by(stmt: &Stmt) -> Option<String> {
    match stmt {
        Stmt::Assign(assign) => match assign.targets.as_slice() {
            [target] => dotted_name(target),
            _ => None,
        },
        Stmt::AugAssign(assign) => dotted_name(&assign.target),
        Stmt::AnnAssign(assign) => dotted_name(&assign.target),
        Stmt::Expr(ast::StmtExpr { value, .. }) => match value.as_ref() {
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Attribute(method) if method.attr.id.as_str() == "add" => dotted_name(&method.value),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Whether the function declares `name` global or nonlocal (a flag kept outside the call).
fn declared_global(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::Global(global) => global.names.iter().any(|n| n.id.as_str() == name),
        Stmt::Nonlocal(nonlocal) => nonlocal.names.iter().any(|n| n.id.as_str() == name),
        _ => false,
    })
}

/// Whether the function binds `name` anywhere in its body (then it is a local of the call).
fn assigned_in(body: &[Stmt], name: &str) -> bool {
    use ruff_python_ast::visitor::{Visitor, walk_stmt};
    struct Binds<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'a> Visitor<'a> for Binds<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            let targets: Vec<&Expr> = match stmt {
                Stmt::Assign(assign) => assign.targets.iter().collect(),
                Stmt::AugAssign(assign) => vec![assign.target.as_ref()],
                Stmt::AnnAssign(assign) => vec![assign.target.as_ref()],
                Stmt::For(for_stmt) => vec![for_stmt.target.as_ref()],
                _ => Vec::new(),
            };
            self.found |= targets.iter().any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == self.name));
            // A nested def or class has its own locals.
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                walk_stmt(self, stmt);
            }
        }
    }
    let mut binds = Binds { name, found: false };
    binds.visit_body(body);
    binds.found
}

/// Every name and attribute chain the test reads (`not self._warned` reads `self._warned`).
fn names_in(expr: &Expr, out: &mut Vec<String>) {
    match expr {
        Expr::Name(_) | Expr::Attribute(_) => out.extend(dotted_name(expr)),
        Expr::UnaryOp(op) => names_in(&op.operand, out),
        Expr::BoolOp(op) => op.values.iter().for_each(|value| names_in(value, out)),
        Expr::Compare(compare) => {
            names_in(&compare.left, out);
            compare.comparators.iter().for_each(|value| names_in(value, out));
        }
        _ => {}
    }
}
