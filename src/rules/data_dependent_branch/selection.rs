//! `if c: x = a else: x = b` -> `x = torch.where(c, a, b)`, for an `if` (with or without `else`)
//! whose branches only assign names, each from elementwise results of one tensor, and whose test
//! is a 0-d boolean tensor. Then the result has the shape of that tensor whichever way `c` goes.
//! Python values a branch computes for itself (`clamp_value = torch.finfo(h.dtype).max - 1000`)
//! move before the selection, and a Python part of the test (`h.dtype == torch.float16 and ...`)
//! stays an `if` around it.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::statement_visitor::{StatementVisitor, walk_stmt};
use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, CmpOp, Expr, Operator, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use super::rewrite::{Rewrite, Test, is_python_value};
use crate::fix::text::torch_name;
use crate::fix::{Fix, Safety};
use crate::model::file::FileModel;
use crate::model::file::imports::last_segment;
use crate::model::tensors::tensor::Tensors;
use crate::model::tensors::torch_calls::ELEMENTWISE;
const NOT_A_SELECTION: &str = "express the branch with `torch.cond`, or make it branchless: it does more than pick a \
                               value for the same names";

/// `name = value` in a branch, the `index`-th statement of its body.
#[derive(Clone, Copy)]
struct Assignment<'a> {
    name: &'a str,
    value: &'a Expr,
    statement: TextRange,
    index: usize,
}

/// The `torch.where` fix, or why there is none. `function` is the body of the function the `if`
/// is in: a Python value the branch computes moves before the selection only when it is a
/// temporary of the branches in it (see `is_branch_temporary`).
pub(super) fn where_fix(
    model: &FileModel,
    tensors: &Tensors,
    function: &[Stmt],
    if_stmt: &ast::StmtIf,
) -> Result<Fix, String> {
    let test = Test::split(model, tensors, &if_stmt.test)?;
    let (condition, negated) = zero_dim_condition(tensors, test.tensor).ok_or(
        "use `torch.cond`, or make the code branchless: tcfix cannot tell that the test is a 0-d boolean tensor \
         (`.any()`, `.all()`, `x.max() > 0`)",
    )?;
    let else_body: &[Stmt] = match if_stmt.elif_else_clauses.as_slice() {
        [] => &[],
        [clause] if clause.test.is_none() => &clause.body,
        _ => return Err("the `if` has `elif` branches: express it with `torch.cond`, or make it branchless".into()),
    };
    if test.python_part_end.is_some() && !else_body.is_empty() {
        return Err("rewrite it by hand: the `else` also runs when the Python part of the test is false, which \
                    `torch.where` on the tensor part cannot say"
            .into());
    }
    let taken = assignments(&if_stmt.body).ok_or(NOT_A_SELECTION)?;
    let other = assignments(else_body).ok_or(NOT_A_SELECTION)?;
    let in_both: HashSet<&str> =
        taken.iter().filter(|a| other.iter().any(|o| o.name == a.name)).map(|a| a.name).collect();
    let (taken_hoisted, taken) = hoist(model, tensors, function, taken, &in_both)?;
    let (other_hoisted, other) = hoist(model, tensors, function, other, &in_both)?;
    if taken.is_empty() && other.is_empty() {
        return Err(NOT_A_SELECTION.into());
    }
    let assigned: HashSet<&str> = taken.iter().chain(&other).map(|a| a.name).collect();
    let mut selections = Vec::new();
    for assignment in &taken {
        let (name, value) = (assignment.name, assignment.value);
        let else_value = other.iter().find(|other| other.name == name).map(|other| other.value);
        if else_value.is_none() && !other.is_empty() {
            return Err(format!("`{name}` is assigned in one branch only: `torch.where` needs a value for it from both"));
        }
        if [Some(value), else_value].into_iter().flatten().any(Expr::is_none_literal_expr) {
            return Err(format!(
                "`{name}` is None on one side: `torch.where` picks between tensors only; keep the tensor and handle \
                 the other case where `{name}` is used, by hand"
            ));
        }
        // Without an `else` the name keeps its value: `x = x.clamp(...)` selects between `x` and that.
        let base = elementwise_base(tensors, value);
        let kept = match else_value {
            Some(else_value) => {
                let base = base.ok_or(NOT_A_SELECTION)?;
                elementwise_base(tensors, else_value).filter(|b| *b == base).ok_or(NOT_A_SELECTION)?
            }
            None if base.as_deref() == Some(name) => base.unwrap_or_default(),
            None => {
                return Err(format!(
                    "rewrite it by hand with `torch.where(cond, new, old)`: `{name}` is assigned only when the test \
                     holds, and may otherwise be None or unbound"
                ));
            }
        };
        // Reading a name the branches assign would see its new value after the rewrite.
        let reads_assigned = [Some(value), else_value]
            .into_iter()
            .flatten()
            .any(|v| names_read(v).iter().any(|read| assigned.contains(read.as_str()) && read != name));
        if reads_assigned {
            return Err(NOT_A_SELECTION.into());
        }
        selections.push((name, value.range(), else_value.map(Ranged::range), kept));
    }
    if taken.len() != other.len() && !other.is_empty() {
        return Err(NOT_A_SELECTION.into());
    }
    // One `torch.where` per name re-evaluates the test each time: it must not read a name that an
    // earlier line has just reassigned.
    if selections.len() > 1 && names_read(condition).iter().any(|read| assigned.contains(read.as_str())) {
        return Err("the test reads a name the branches assign: rewrite by hand, computing the test once".into());
    }
    let rewrite = Rewrite::new(model, if_stmt, &test)?;
    let (torch, import) = torch_name(model);
    let condition = rewrite.text(condition.range());
    let mut lines: Vec<String> =
        taken_hoisted.iter().chain(&other_hoisted).map(|hoisted| rewrite.text(hoisted.statement)).collect();
    for (name, when_true, when_false, kept) in selections {
        let when_true = rewrite.text(when_true);
        let when_false = when_false.map_or_else(|| kept.clone(), |range| rewrite.text(range));
        let (when_true, when_false) = if negated { (when_false, when_true) } else { (when_true, when_false) };
        lines.push(format!("{name} = {torch}.where({condition}, {when_true}, {when_false})"));
    }
    let mut edits = rewrite.edits(&lines);
    edits.extend(import);
    let title = "Compute both branches and pick with `torch.where` (unsafe: both sides now always run, and NaN or \
                 inf in the side not taken can poison the gradients)";
    Ok(Fix::new(title, Safety::Unsafe, edits))
}

/// Splits a branch's assignments into the values it computes for itself, which can run before the
/// selection whichever way the test goes, and the rest. A Python value moves when it is a
/// temporary of the branches (so running it always changes no read) and it comes before every
/// reassignment of a name it reads (so it reads the values from before the `if`). So does a tensor
/// that only this branch assigns and only it reads, computed without side effects
/// (`scale = m / self.limit` before `inv_freq = self.inv_freq / scale`): computed always, it is
/// a temporary no one reads on the other side. A name both branches assign is selected, never
/// moved: the second branch's value would overwrite the first's.
fn hoist<'a>(
    model: &FileModel,
    tensors: &Tensors,
    function: &[Stmt],
    assignments: Vec<Assignment<'a>>,
    in_both: &HashSet<&str>,
) -> Result<(Vec<Assignment<'a>>, Vec<Assignment<'a>>), String> {
    let temporary_tensor =
        |a: &Assignment| is_side_effect_free(tensors, a.value) && is_branch_temporary(model, function, a.name);
    let (hoisted, selected): (Vec<_>, Vec<_>) = assignments.into_iter().partition(|a| {
        let python = !tensors.is_tensor(a.value) && is_python_value(model, tensors, a.value);
        !in_both.contains(a.name) && (python || (tensors.is_tensor(a.value) && temporary_tensor(a)))
    });
    if let Some(shared) = hoisted.iter().find(|a| !is_branch_temporary(model, function, a.name)) {
        return Err(format!(
            "rewrite it by hand: `{}` is a Python value the branch computes, and code outside the branch uses it \
             too, which would then see it computed on every call",
            shared.name
        ));
    }
    for moved in &hoisted {
        let reads = names_read(moved.value);
        if let Some(late) = selected.iter().find(|s| s.index < moved.index && reads.iter().any(|r| r == s.name)) {
            return Err(format!(
                "`{}` reads `{}` after the branch reassigns it: rewrite it by hand",
                moved.name, late.name
            ));
        }
    }
    Ok((hoisted, selected))
}

/// Whether every mention of `name` in the function lies in an `if`/`elif`/`else` body whose first
/// statement to mention it assigns it (`clamp_value = ...`, without reading it): each branch that
/// uses it computes it first, so assigning it once more before an `if` changes no read. Any
/// other mention (a read after the `if`, a nested function, an attribute of that name) counts
/// against it.
fn is_branch_temporary(model: &FileModel, function: &[Stmt], name: &str) -> bool {
    struct Bodies<'a>(Vec<&'a [Stmt]>);
    // A visitor of its own: the fix asks about every mention of one name in all the function's code: the checker walks compiled code only.
    impl<'a> StatementVisitor<'a> for Bodies<'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::If(if_stmt) = stmt {
                self.0.push(&if_stmt.body);
                self.0.extend(if_stmt.elif_else_clauses.iter().map(|clause| clause.body.as_slice()));
            }
            walk_stmt(self, stmt);
        }
    }
    let (Some(first), Some(last)) = (function.first(), function.last()) else { return false };
    let source = &model.source;
    let mentions: Vec<TextRange> = source
        .parsed
        .tokens()
        .in_range(TextRange::new(first.start(), last.end()))
        .iter()
        .filter(|token| token.kind() == TokenKind::Name && &source.text[token.range()] == name)
        .map(Ranged::range)
        .collect();
    let mut bodies = Bodies(Vec::new());
    bodies.visit_body(function);
    let span = |body: &[Stmt]| body.first().zip(body.last()).map(|(f, l)| TextRange::new(f.start(), l.end()));
    mentions.iter().all(|mention| {
        let innermost = bodies
            .0
            .iter()
            .filter_map(|body| span(body).filter(|range| range.contains_range(*mention)).map(|range| (body, range)))
            .min_by_key(|(_, range)| range.len());
        let Some((body, _)) = innermost else { return false };
        let first_mention = body.iter().find(|stmt| mentions.iter().any(|m| stmt.range().contains_range(*m)));
        matches!(first_mention, Some(Stmt::Assign(assign))
            if matches!(assign.targets.as_slice(), [Expr::Name(target)] if target.id.as_str() == name)
                && !names_read(&assign.value).iter().any(|read| read == name))
    })
}

/// Whether computing `expr` changes nothing but its own result: arithmetic, comparisons, names,
/// attributes, literals and elementwise methods of tensors (`m / self.limit`, `x.clamp(0, 1)`),
/// never a call of a submodule or an in-place method.
fn is_side_effect_free(tensors: &Tensors, expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) | Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => true,
        Expr::Attribute(attr) => is_side_effect_free(tensors, &attr.value),
        Expr::BinOp(op) => is_side_effect_free(tensors, &op.left) && is_side_effect_free(tensors, &op.right),
        Expr::UnaryOp(op) => is_side_effect_free(tensors, &op.operand),
        Expr::Compare(compare) => {
            std::iter::once(compare.left.as_ref()).chain(&compare.comparators).all(|e| is_side_effect_free(tensors, e))
        }
        Expr::Call(call) => {
            let Expr::Attribute(method) = call.func.as_ref() else { return false };
            ELEMENTWISE.contains(&method.attr.id.as_str())
                && tensors.is_tensor(&method.value)
                && is_side_effect_free(tensors, &method.value)
                && call.arguments.args.iter().chain(call.arguments.keywords.iter().map(|k| &k.value))
                    .all(|arg| is_side_effect_free(tensors, arg))
        }
        _ => false,
    }
}

/// The test as a condition for `torch.where`, and whether it was negated (`not c`).
fn zero_dim_condition<'e>(tensors: &Tensors, test: &'e Expr) -> Option<(&'e Expr, bool)> {
    if let Expr::UnaryOp(op) = test
        && op.op == UnaryOp::Not {
            let (condition, negated) = zero_dim_condition(tensors, &op.operand)?;
            return Some((condition, !negated));
        }
    match test {
        Expr::Call(call) if is_any_or_all(tensors, call) => Some((test, false)),
        // `x.max() > k`, `m > self.limit` with `m = x.max() + 1`: the model knows the rank.
        Expr::Compare(compare) if compare.ops.len() == 1 && is_ordering(compare.ops[0]) => {
            tensors.is_zero_dim(test).then_some((test, false))
        }
        // `found = m > k` then `if found:`
        Expr::Name(_) => (tensors.is_mask(test) && tensors.is_zero_dim(test)).then_some((test, false)),
        _ => None,
    }
}

fn is_ordering(op: CmpOp) -> bool {
    matches!(op, CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE | CmpOp::Eq | CmpOp::NotEq)
}

/// `mask.any()`, `torch.isinf(x).all()`, `torch.any(mask)`: a 0-d boolean tensor.
pub(super) fn is_any_or_all(tensors: &Tensors, call: &ast::ExprCall) -> bool {
    let name = last_segment(&call.func);
    let is_any_or_all = matches!(name, Some("any" | "all"));
    match call.func.as_ref() {
        Expr::Attribute(method) if call.arguments.is_empty() && tensors.is_tensor(&method.value) => is_any_or_all,
        _ => {
            let one_argument = call.arguments.keywords.is_empty() && call.arguments.args.len() == 1;
            is_any_or_all && one_argument && tensors.is_tensor_call(call)
        }
    }
}

fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_) => true,
        Expr::UnaryOp(op) => op.op == UnaryOp::USub && matches!(op.operand.as_ref(), Expr::NumberLiteral(_)),
        _ => false,
    }
}

/// `name = value` statements, one per name: what a branch that only selects values looks like.
fn assignments(body: &[Stmt]) -> Option<Vec<Assignment<'_>>> {
    let mut found: Vec<Assignment> = Vec::new();
    for (index, stmt) in body.iter().enumerate() {
        let Stmt::Assign(assign) = stmt else { return None };
        let [Expr::Name(name)] = assign.targets.as_slice() else { return None };
        if found.iter().any(|seen| seen.name == name.id.as_str()) {
            return None;
        }
        found.push(Assignment { name: name.id.as_str(), value: &assign.value, statement: stmt.range(), index });
    }
    Some(found)
}

/// The tensor an elementwise expression is computed from (`x`, `x.clamp(-m, m)`,
/// `torch.nan_to_num(x)`, `x * 0.5`, `self.inv_freq / (m / 16)`), as its text, when its other
/// operands are not tensors of their own shape: its result then has the shape of that tensor.
/// The tensor is a name, or a parameter or buffer of the module (`self.inv_freq`).
fn elementwise_base(tensors: &Tensors, expr: &Expr) -> Option<String> {
    let no_tensor = |args: &[Expr], keywords: &[ast::Keyword]| {
        args.iter().chain(keywords.iter().map(|k| &k.value)).all(|arg| !tensors.is_tensor(arg))
    };
    match expr {
        Expr::Name(name) => tensors.is_tensor(expr).then(|| name.id.to_string()),
        Expr::Attribute(attr) if tensors.is_tensor_attribute(expr) => Some(format!("self.{}", attr.attr.id)),
        Expr::UnaryOp(op) if op.op == UnaryOp::USub => elementwise_base(tensors, &op.operand),
        // With a number literal or a 0-d tensor (`m / 16` with `m = ids.max() + 1`): an attribute
        // of unknown kind could be a tensor parameter whose shape broadcasts.
        Expr::BinOp(op) if matches!(op.op, Operator::Add | Operator::Sub | Operator::Mult | Operator::Div) => {
            let keeps_shape = |operand: &Expr| is_number(operand) || tensors.is_zero_dim(operand);
            let from_left = keeps_shape(&op.right).then(|| elementwise_base(tensors, &op.left)).flatten();
            from_left.or_else(|| keeps_shape(&op.left).then(|| elementwise_base(tensors, &op.right)).flatten())
        }
        Expr::Call(call) => {
            let name = last_segment(&call.func)?;
            if !ELEMENTWISE.contains(&name) {
                return None;
            }
            let args = &call.arguments;
            match call.func.as_ref() {
                Expr::Attribute(method) if tensors.is_tensor(&method.value) => {
                    no_tensor(&args.args, &args.keywords).then(|| elementwise_base(tensors, &method.value)).flatten()
                }
                _ if tensors.is_tensor(expr) => {
                    let (first, rest) = args.args.split_first()?;
                    no_tensor(rest, &args.keywords).then(|| elementwise_base(tensors, first)).flatten()
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The names an expression reads.
fn names_read(expr: &Expr) -> Vec<String> {
    struct Reads(Vec<String>);
    // A visitor of its own: a search of one expression of the fix's branch.
    impl<'a> Visitor<'a> for Reads {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr {
                self.0.push(name.id.to_string());
            }
            walk_expr(self, expr);
        }
    }
    let mut reads = Reads(Vec::new());
    reads.visit_expr(expr);
    reads.0
}
