//! What the fixes of an `if` on tensor data share: splitting the test into the Python part that can
//! stay an `if` and the tensor part that cannot, and writing new statements in place of the `if`
//! (or of its body, under the kept Python part) at the right indentation, comments kept or refused.

use ruff_python_ast::token::{TokenKind, parenthesized_range};
use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, AnyNodeRef, Expr, ExprRef, UnaryOp};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::fix::Edit;
use crate::fix::text::{block_indent_unit, indentation, inside_string, line_ending, stands_alone};
use crate::model::file::FileModel;
use crate::model::tensors::tensor::Tensors;
/// An `if` test as `<Python part> and <tensor part>`: `labels is not None and labels.max() >= n`.
/// Python evaluates the tensor part only when the Python part holds, so the Python part can stay
/// an `if` around the rewrite.
pub(super) struct Test<'a> {
    /// The text to delete from the header to leave the Python part (` and labels.max() >= n`),
    /// when there is one.
    pub python_part_end: Option<TextRange>,
    /// The operand whose truth is tensor data.
    pub tensor: &'a Expr,
}

impl<'a> Test<'a> {
    /// The test split at its last `and` operand, when that is the only one on tensor data; or why not.
    pub fn split(model: &FileModel, tensors: &Tensors, test: &'a Expr) -> Result<Self, &'static str> {
        let Expr::BoolOp(bool_op) = test else { return Ok(Test { python_part_end: None, tensor: test }) };
        if bool_op.op != ast::BoolOp::And {
            return Err("combine the tensor tests with `|` (`(a != 0) | (b != 0)`), or rewrite it by hand: Python \
                        tests the operands of `or` one by one");
        }
        let Some((tensor, python)) = bool_op.values.split_last() else { return Err("the test is empty") };
        if python.iter().any(|value| tensors.is_data_dependent(value)) {
            return Err("more than the last `and` operand reads tensor data: combine the tensor tests with `&` \
                        (`(a > 0) & b.any()`) first, or rewrite it by hand");
        }
        let tokens = model.source.parsed.tokens();
        let parenthesized = |expr: &Expr| {
            parenthesized_range(ExprRef::from(expr), AnyNodeRef::from(bool_op), tokens).unwrap_or(expr.range())
        };
        let Some(python_last) = python.last() else { return Err("the test is empty") };
        let python_end = parenthesized(python_last).end();
        Ok(Test { python_part_end: Some(TextRange::new(python_end, parenthesized(tensor).end())), tensor })
    }
}

/// New statements in place of an `if`: of the whole statement, or, when the test has a Python part,
/// of its body under `if <Python part>:`.
pub(super) struct Rewrite<'m, 'a> {
    model: &'m FileModel<'a>,
    /// What the edit replaces: the `if`, or its body.
    range: TextRange,
    /// The header text to delete (` and <tensor part>`), when the Python part stays.
    python_part_end: Option<TextRange>,
    /// The indentation of the new statements.
    pub indent: String,
    /// One level of indentation, as the `if` indents its body.
    pub unit: String,
    /// What code moved out of the body loses at the start of its continuation lines: the body's
    /// indentation beyond the `if`'s (empty when the body stays where it is).
    outdent: String,
}

impl<'m, 'a> Rewrite<'m, 'a> {
    pub fn new(model: &'m FileModel<'a>, if_stmt: &ast::StmtIf, test: &Test) -> Result<Self, &'static str> {
        let text = &model.source.text;
        let (Some(first), Some(last)) = (if_stmt.body.first(), if_stmt.body.last()) else {
            return Err("the `if` has no body");
        };
        if !stands_alone(text, if_stmt.range()) {
            return Err("the `if` shares its line with other code");
        }
        let body = TextRange::new(first.start(), last.end());
        if !stands_alone(text, body) {
            return Err("the `if` and its body share a line: put the body on its own lines first");
        }
        let body_indent = indentation(text, first.start());
        let if_indent = indentation(text, if_stmt.start());
        let unit = block_indent_unit(model.source, if_stmt.start(), first.start());
        let rewrite = match test.python_part_end {
            Some(tensor_part) => Rewrite {
                model,
                range: body,
                python_part_end: Some(tensor_part),
                indent: body_indent.to_string(),
                unit,
                outdent: String::new(),
            },
            None => Rewrite {
                model,
                range: if_stmt.range(),
                python_part_end: None,
                indent: if_indent.to_string(),
                outdent: body_indent.strip_prefix(if_indent).unwrap_or_default().to_string(),
                unit,
            },
        };
        let replaced = std::iter::once(rewrite.range).chain(rewrite.python_part_end);
        let tokens = model.source.parsed.tokens();
        if replaced.into_iter().any(|range| tokens.in_range(range).iter().any(|t| t.kind() == TokenKind::Comment)) {
            return Err("the `if` holds comments the rewrite would drop: rewrite it by hand");
        }
        Ok(rewrite)
    }

    /// The source text of `range`, as it reads at the new statements' indentation: each
    /// continuation line loses what the body's indentation adds, except inside a string.
    pub fn text(&self, range: TextRange) -> String {
        let source = self.model.source;
        let text = &source.text[range];
        if self.outdent.is_empty() {
            return text.to_string();
        }
        let mut moved = String::with_capacity(text.len());
        let mut offset = range.start();
        for line in text.split_inclusive('\n') {
            let continuation = offset != range.start() && !inside_string(source, offset);
            moved.push_str(if continuation { line.strip_prefix(self.outdent.as_str()).unwrap_or(line) } else { line });
            offset += TextSize::of(line);
        }
        moved
    }

    /// The line break the file uses where the `if` is.
    pub fn newline(&self) -> &'static str {
        line_ending(&self.model.source.text, self.range.start())
    }

    /// The edits writing `statements`, one after the other, where the `if` (or its body) was.
    pub fn edits(self, statements: &[String]) -> Vec<Edit> {
        let separator = format!("{}{}", self.newline(), self.indent);
        let mut edits = vec![Edit::replace(self.range, statements.join(&separator))];
        edits.extend(self.python_part_end.map(|range| Edit::replace(range, "")));
        edits
    }
}

/// The operand under any `not`s, and whether their number is odd.
pub(super) fn strip_not(mut expr: &Expr) -> (&Expr, bool) {
    let mut negated = false;
    while let Expr::UnaryOp(op) = expr {
        if op.op != UnaryOp::Not {
            break;
        }
        negated = !negated;
        expr = &op.operand;
    }
    (expr, negated)
}

/// Whether `expr` is a Python value computed from constants and tensor metadata only
/// (`torch.finfo(h.dtype).max - 1000`, `x.shape[0] * 2`): computing it when the branch would not
/// have run has no effect and reads no tensor data.
pub(super) fn is_python_value(model: &FileModel, tensors: &Tensors, expr: &Expr) -> bool {
    struct Check<'f, 't, 'b, 'm, 'a> {
        model: &'f FileModel<'b>,
        tensors: &'t Tensors<'m, 'a>,
        ok: bool,
    }
    // A visitor of its own: the fix's own check of the small subtree it rewrites.
    impl<'e> Visitor<'e> for Check<'_, '_, '_, '_, '_> {
        fn visit_expr(&mut self, expr: &'e Expr) {
            if !self.ok {
                return;
            }
            match expr {
                Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) | Expr::StringLiteral(_) => {}
                Expr::Name(_) => self.ok = !self.tensors.is_tensor(expr),
                Expr::Attribute(attr) if METADATA.contains(&attr.attr.id.as_str()) => {}
                Expr::Attribute(_) | Expr::Subscript(_) | Expr::UnaryOp(_) | Expr::BinOp(_) => {
                    self.ok = !self.tensors.is_tensor(expr);
                    walk_expr(self, expr);
                }
                // `torch.finfo(x.dtype)`, `float("-inf")`: no effect, no data read.
                Expr::Call(call) => {
                    let qualified = self.model.imports.qualified_name(&call.func);
                    let pure = matches!(qualified.as_deref(), Some("torch.finfo" | "torch.iinfo"))
                        || matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "float"
                            && matches!(call.arguments.args.as_ref(), [Expr::StringLiteral(_)]));
                    self.ok = pure && call.arguments.keywords.is_empty();
                    if self.ok {
                        walk_expr(self, expr);
                    }
                }
                _ => self.ok = false,
            }
        }
    }
    let mut check = Check { model, tensors, ok: true };
    check.visit_expr(expr);
    check.ok
}

/// Tensor metadata: known while tracing, no data read.
pub(super) const METADATA: &[&str] =
    &["shape", "dtype", "device", "ndim", "size", "dim", "numel", "is_cuda", "requires_grad", "layout"];
