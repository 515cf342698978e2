//! The warn-once block: `if not self._warned: self._warned = True; logger.warning(...)`. Guarding
//! only the call would still set the flag under compile, so the message would never be written,
//! not even by a later eager run. The guard goes around the whole block instead: the flag is set
//! only when the message really is written.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};
use rustc_hash::FxHashSet as HashSet;

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

/// The flag or counter that code next to `output` updates when the guard cannot take it in (not a
/// warn-once block of its own): a flag set beside the call (`logger.warning(err)` then
/// `setattr(self, "warned", True)` in a helper whose caller tests the flag), or state that an `if`
/// around the call tests and a statement beside that `if` updates (`COUNTS[key] += 1` then
/// `if COUNTS[key] <= n: log(...)`; `if not self.warned: print(...)` then `self.warned = True`).
/// Guarding the call alone, that state still changes under compile while the message is skipped, so
/// the message is never written, not even by a later eager run. Measured under torch 2.15 on both
/// shapes (issue #27's blind audit: fairseq's NaN detector, detectron2's `log_first_n`).
pub fn state_updated_beside<'t>(
    tested_in_file: &dyn Fn() -> &'t HashSet<String>,
    body: &[Stmt],
    output: TextRange,
) -> Option<String> {
    let mut suite = body;
    let mut tests: Vec<String> = Vec::new();
    loop {
        let at = suite.iter().position(|stmt| stmt.range().contains_range(output))?;
        let inner = &suite[at];
        let (next, test) = match inner {
            _ if inner.range() == output => (None, None),
            Stmt::If(block) if block.body.iter().any(|s| s.range().contains_range(output)) => {
                (Some(&block.body[..]), Some(&*block.test))
            }
            Stmt::If(block) => {
                let clause = block.elif_else_clauses.iter().find(|c| c.range().contains_range(output))?;
                (Some(&clause.body[..]), clause.test.as_ref())
            }
            Stmt::With(s) => (Some(&s.body[..]), None),
            // A loop runs its body several times or not at all, a `try` may leave it half way:
            // what they hold is still beside the call (`for name in names: print(name)` then
            // `self.warned = True`; `try: print(...)` / `finally: self.warned = True`).
            Stmt::For(s) => (parts_holding(&[&s.body, &s.orelse], output), None),
            Stmt::While(s) => (parts_holding(&[&s.body, &s.orelse], output), None),
            Stmt::Try(s) => {
                let handlers: Vec<&[Stmt]> = s
                    .handlers
                    .iter()
                    .map(|ast::ExceptHandler::ExceptHandler(handler)| handler.body.as_slice())
                    .collect();
                let parts: Vec<&[Stmt]> = [&s.body[..], &s.orelse, &s.finalbody].into_iter().chain(handlers).collect();
                (parts_holding(&parts, output), None)
            }
            _ => return None,
        };
        if let Some(test) = test {
            reads_in(test, &mut tests);
        }
        // Beside the call: the statements of this block other than the one holding it, and
        // whatever they hold (`if self.training: self.warned = True`); for a loop or `try`, its
        // other parts too.
        let mut beside: Vec<&Stmt> = Vec::new();
        for (i, stmt) in suite.iter().enumerate() {
            if i == at {
                if !matches!(stmt, Stmt::If(_) | Stmt::With(_)) {
                    nested_in_other_parts(stmt, output, &mut beside);
                }
            } else {
                nested_statements(stmt, &mut beside);
            }
        }
        for stmt in beside {
            let Some((state, flag_like)) = state_set_by(stmt, body) else { continue };
            // A flag or counter set right beside the call is what a caller tests (`setattr` with
            // a computed name cannot be looked up: taken as one); one set deeper counts only
            // when an `if` around the call tests it (another warn-once block's flag does not).
            let direct = suite.iter().any(|sibling| std::ptr::eq(sibling, stmt));
            let tested = || state.contains('<') || tested_in_file().contains(&state);
            if tests.contains(&state) || (direct && flag_like && tested()) {
                return Some(state);
            }
        }
        suite = next?;
    }
}

/// The part of a compound statement that holds `output`.
fn parts_holding<'a>(parts: &[&'a [Stmt]], output: TextRange) -> Option<&'a [Stmt]> {
    parts.iter().copied().find(|part| part.iter().any(|stmt| stmt.range().contains_range(output)))
}

/// `stmt` and every statement it holds, nested functions and classes aside.
fn nested_statements<'a>(stmt: &'a Stmt, out: &mut Vec<&'a Stmt>) {
    use ruff_python_ast::statement_visitor::{StatementVisitor, walk_stmt};
    struct Nested<'a, 'o>(&'o mut Vec<&'a Stmt>);
    // A visitor of its own: the fix's own search of the block it guards.
    impl<'a> StatementVisitor<'a> for Nested<'a, '_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            self.0.push(stmt);
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                walk_stmt(self, stmt);
            }
        }
    }
    Nested(out).visit_stmt(stmt);
}

/// The statements of a loop's or a `try`'s parts that do not hold `output`, and what they hold.
fn nested_in_other_parts<'a>(stmt: &'a Stmt, output: TextRange, out: &mut Vec<&'a Stmt>) {
    let parts: Vec<&'a [Stmt]> = match stmt {
        Stmt::For(s) => vec![&s.body, &s.orelse],
        Stmt::While(s) => vec![&s.body, &s.orelse],
        Stmt::Try(s) => [&s.body[..], &s.orelse, &s.finalbody]
            .into_iter()
            .chain(s.handlers.iter().map(|ast::ExceptHandler::ExceptHandler(handler)| handler.body.as_slice()))
            .collect(),
        _ => return,
    };
    for part in parts {
        for inner in part.iter().filter(|inner| !inner.range().contains_range(output)) {
            nested_statements(inner, out);
        }
    }
}

/// Every name and attribute chain some `if` or `while` test of the file reads: the state a
/// caller may test.
pub fn tested_in(file: &[Stmt]) -> HashSet<String> {
    use ruff_python_ast::visitor::{Visitor, walk_stmt};
    struct Tests(Vec<String>);
    // A visitor of its own: the tests of the whole file, setup code included (which the checker never walks), read once per file and only when a fix asks.
    impl<'a> Visitor<'a> for Tests {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::If(block) => {
                    reads_in(&block.test, &mut self.0);
                    block.elif_else_clauses.iter().filter_map(|c| c.test.as_ref()).for_each(|t| reads_in(t, &mut self.0));
                }
                Stmt::While(block) => reads_in(&block.test, &mut self.0),
                _ => {}
            }
            walk_stmt(self, stmt);
        }
    }
    let mut tests = Tests(Vec::new());
    tests.visit_body(file);
    tests.0.into_iter().collect()
}

/// The outliving state a statement updates, and whether the update looks like a flag or a counter
/// (a bool stored, an augmented assignment, `setattr(..., bool)`, `.add(...)`). Subscripts
/// and method calls name their receiver (`COUNTS[key] += 1` updates `COUNTS`).
fn state_set_by(stmt: &Stmt, body: &[Stmt]) -> Option<(String, bool)> {
    // `True`/`False`: a flag. A cache entry stored beside a warning (`mapping[name] = None` in
    // transformers' `lazy_load_kernel`) gates nothing: the next call warns again.
    let constant = |value: &Expr| matches!(value, Expr::BooleanLiteral(_));
    match stmt {
        Stmt::Assign(assign) => match assign.targets.as_slice() {
            [target] => Some((outliving(target, body)?, constant(&assign.value))),
            _ => None,
        },
        Stmt::AnnAssign(assign) => {
            Some((outliving(&assign.target, body)?, assign.value.as_deref().is_some_and(constant)))
        }
        Stmt::AugAssign(assign) => Some((outliving(&assign.target, body)?, true)),
        Stmt::Expr(ast::StmtExpr { value, .. }) => {
            let Expr::Call(call) = value.as_ref() else { return None };
            match call.func.as_ref() {
                Expr::Name(name) if name.id.as_str() == "setattr" => match call.arguments.args.as_ref() {
                    [object, Expr::StringLiteral(field), value] => {
                        Some((format!("{}.{}", dotted_name(object)?, field.value.to_str()), constant(value)))
                    }
                    [object, field, value] => {
                        Some((format!("{}.<{}>", dotted_name(object)?, dotted_name(field)?), constant(value)))
                    }
                    _ => None,
                },
                Expr::Attribute(method) if method.attr.id.as_str() == "add" => Some((outliving(&method.value, body)?, true)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The name of what an assignment target updates, when that outlives the call: an attribute, an
/// item of a name the function does not bind (a module-level counter), a `global` name.
fn outliving(target: &Expr, body: &[Stmt]) -> Option<String> {
    match target {
        Expr::Name(name) => declared_global(body, name.id.as_str()).then(|| name.id.to_string()),
        Expr::Attribute(_) => dotted_name(target),
        Expr::Subscript(subscript) => {
            let base = dotted_name(&subscript.value)?;
            (base.contains('.') || declared_global(body, &base) || !assigned_in(body, &base)).then_some(base)
        }
        _ => None,
    }
}

/// Every name and attribute chain an `if` test reads, inside subscripts and calls too.
fn reads_in(expr: &Expr, out: &mut Vec<String>) {
    use ruff_python_ast::visitor::{Visitor, walk_expr};
    struct Reads<'o>(&'o mut Vec<String>);
    // A visitor of its own: a search of one `if`/`while` test.
    impl<'a> Visitor<'a> for Reads<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Some(name) = matches!(expr, Expr::Name(_) | Expr::Attribute(_)).then(|| dotted_name(expr)).flatten() {
                self.0.push(name);
            }
            walk_expr(self, expr);
        }
    }
    Reads(out).visit_expr(expr);
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
    // A visitor of its own: the fix asks whether all the function's code binds one name, eager branches included.
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
