//! The TCF202 fix that keeps one graph: the hook's tests of its flags are taken out, so that it
//! records on every call and Dynamo has no flag to guard on. `if not collector.enabled: return`
//! goes; `if collector.record_norms: <record>` becomes `<record>`. Measured under torch 2.15 on the
//! whole-model decoder (hooks on every block, flags flipped between steps): forward stays one graph
//! in inference and training, where `@torch.compiler.disable` sent it to eager. Unsafe: the hook
//! now computes and stores its records on every call, also when the flags are off, and the code
//! that reads them (the training script, which tcfix does not see) must check the flags itself.
//! Only for a hook that stores values in places it overwrites (`collector.latest[key] = v`,
//! `probe.last = v`): a hook that appends would grow its list on every call (measured: Dynamo then
//! guards on the list and recompiles), and one whose records break the graph (`.item()`) would
//! break it on every call, in forward's loop.

use ruff_python_ast::{self as ast, Expr, Stmt, UnaryOp};
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextRange};

use crate::fix::text::{indentation, stands_alone};
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::{FileModel, FunctionNode};

/// The edits and the tests they take out, when every flag test of the hook is one of the two
/// shapes (`None` otherwise); `is_flag` says whether an expression reads a flag.
pub(super) struct FlagTests {
    pub edits: Vec<Edit>,
    /// The tests taken out: reads inside them are gone after the fix.
    pub tests: Vec<TextRange>,
    /// The flags, as written (`collector.enabled`).
    pub flags: Vec<String>,
}

impl FlagTests {
    pub(super) fn of(model: &FileModel, hook: usize, is_flag: &dyn Fn(&Expr) -> bool) -> Option<Self> {
        let FunctionNode::Def(def) = model.function(hook).node else { return None };
        let text = model.source.text.as_str();
        let mut found = FlagTests { edits: Vec::new(), tests: Vec::new(), flags: Vec::new() };
        for stmt in &def.body {
            let Stmt::If(if_stmt) = stmt else {
                if is_store(stmt) || is_docstring(stmt) {
                    continue;
                }
                return None;
            };
            let (flag, negated) = match if_stmt.test.as_ref() {
                Expr::UnaryOp(op) if op.op == UnaryOp::Not => (op.operand.as_ref(), true),
                test => (test, false),
            };
            let stores = negated || if_stmt.body.iter().all(is_store);
            if !is_flag(flag) || !if_stmt.elif_else_clauses.is_empty() || !stands_alone(text, stmt.range()) || !stores {
                return None;
            }
            let edit = if negated { returns_early(text, if_stmt)? } else { unwrap(text, if_stmt)? };
            found.edits.push(edit);
            found.tests.push(if_stmt.test.range());
            found.flags.push(format!("`{}`", &text[flag.range()]));
        }
        (!found.edits.is_empty()).then_some(found)
    }

    pub(super) fn fix(self) -> Fix {
        let title = format!(
            "Record on every call: take the hook's tests of {} out, so that Dynamo has no flag to guard on and \
             forward stays one graph (unsafe: the hook now computes and stores its records on every call, also \
             when the flags are off; have the code that reads them check the flags, outside the compiled model)",
            self.flags.join(" and ")
        );
        Fix::new(title, Safety::Unsafe, self.edits)
    }
}

/// `x.attr = v`, `x.d[key] = v`: a store that overwrites what the last call stored.
fn is_store(stmt: &Stmt) -> bool {
    let Stmt::Assign(assign) = stmt else { return false };
    assign.targets.iter().all(|target| matches!(target, Expr::Attribute(_) | Expr::Subscript(_)))
}

fn is_docstring(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Expr(expr) if expr.value.is_string_literal_expr())
}

/// `if not flag: return`: the line goes.
fn returns_early(text: &str, if_stmt: &ast::StmtIf) -> Option<Edit> {
    let [Stmt::Return(ret)] = if_stmt.body.as_slice() else { return None };
    if ret.value.as_deref().is_some_and(|value| !value.is_none_literal_expr()) {
        return None;
    }
    let whole = TextRange::new(text.line_start(if_stmt.start()), text.full_line_end(if_stmt.end()));
    Some(Edit::replace(whole, ""))
}

/// `if flag:` and its block: the block, one level out. A line that does not carry the block's
/// indentation (inside a multi-line string) must not change: no fix then.
fn unwrap(text: &str, if_stmt: &ast::StmtIf) -> Option<Edit> {
    let first = if_stmt.body.first()?;
    let outer = indentation(text, if_stmt.start());
    let inner = indentation(text, first.start());
    if text.line_start(first.start()) == text.line_start(if_stmt.start()) || inner.len() <= outer.len() {
        return None;
    }
    let block = &text[TextRange::new(text.line_start(first.start()), if_stmt.end())];
    let mut lines = Vec::new();
    for line in block.split_inclusive('\n') {
        if line.trim().is_empty() {
            lines.push(line.trim_start_matches([' ', '\t']).to_string());
        } else {
            lines.push(format!("{outer}{}", line.strip_prefix(inner)?));
        }
    }
    let whole = TextRange::new(text.line_start(if_stmt.start()), if_stmt.end());
    Some(Edit::replace(whole, lines.concat()))
}
