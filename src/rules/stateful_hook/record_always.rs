//! The TCF202 fix that keeps one graph: the hook's tests of its flags are taken out, so that it
//! records on every call and Dynamo has no flag to guard on. `if not collector.enabled: return`
//! goes; `if collector.record_norms: <record>` becomes `<record>`. Measured under torch 2.15 on the
//! whole-model decoder (hooks on every block, flags flipped between steps): forward stays one graph
//! in inference and training, where `@torch.compiler.disable` sent it to eager. Unsafe: the hook
//! now computes and stores its records on every call, also when the flags are off, and the code
//! that reads them (the training script, which tcfix does not see) must check the flags itself.
//! Only for a hook that stores detached values in places it overwrites (`collector.latest[key] =
//! out.detach().mean()` with a key fixed at registration, `probe.last = out.detach()`): a hook that
//! appends, or keys by something that changes, would grow its container on every call (and Dynamo
//! guards on a container's length); one whose records break the graph (`.item()`) or copy to the
//! host (`.cpu()`) would do so on every call, in forward's loop; a stored output that is not
//! detached would keep its autograd graph alive until the next call. Comments in the lines the fix
//! rewrites, and multi-line strings, make it refuse: their text must not change.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, Stmt, UnaryOp};
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextRange};

use crate::fix::text::{indentation, inside_string, stands_alone};
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::{FileModel, FunctionNode};
/// The edits that take a hook's flag tests out, the tests they take out, and the flags.
pub(super) struct FlagTests {
    pub edits: Vec<Edit>,
    /// The tests taken out: reads inside them are gone after the fix.
    pub tests: Vec<TextRange>,
    /// The flags, as written (`collector.enabled`).
    pub flags: Vec<String>,
}

impl FlagTests {
    /// When every statement of the hook is a flag test of the two shapes or a store (see the
    /// module's doc), else `None`; `is_flag` says whether an expression reads a flag.
    pub(super) fn of(model: &FileModel, hook: usize, is_flag: &dyn Fn(&Expr) -> bool) -> Option<Self> {
        let FunctionNode::Def(def) = model.function(hook).node else { return None };
        let stores = Stores::of(def);
        let mut found = FlagTests { edits: Vec::new(), tests: Vec::new(), flags: Vec::new() };
        for stmt in &def.body {
            let Stmt::If(if_stmt) = stmt else {
                if stores.holds(stmt) || is_docstring(stmt) {
                    continue;
                }
                return None;
            };
            let (flag, negated) = match if_stmt.test.as_ref() {
                Expr::UnaryOp(op) if op.op == UnaryOp::Not => (op.operand.as_ref(), true),
                test => (test, false),
            };
            let plain = if_stmt.elif_else_clauses.is_empty() && stands_alone(&model.source.text, stmt.range());
            if !is_flag(flag) || !plain || (!negated && !if_stmt.body.iter().all(|stmt| stores.holds(stmt))) {
                return None;
            }
            let edit = if negated { returns_early(model, if_stmt)? } else { unwrap(model, if_stmt)? };
            found.edits.push(edit);
            found.tests.push(if_stmt.test.range());
            found.flags.push(format!("`{}`", &model.source.text[flag.range()]));
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

/// What the hook's stores may be: overwrites, of detached values, at keys fixed at registration.
struct Stores<'a> {
    /// Parameters with a default (`index=index`): bound when the hook is made.
    fixed: HashSet<&'a str>,
    /// The other parameters: the module, its inputs and output.
    call_values: HashSet<&'a str>,
}

impl<'a> Stores<'a> {
    fn of(def: &'a ast::StmtFunctionDef) -> Self {
        let mut stores = Stores { fixed: HashSet::default(), call_values: HashSet::default() };
        for parameter in def.parameters.iter_non_variadic_params() {
            let name = parameter.parameter.name.id.as_str();
            if parameter.default.is_some() { stores.fixed.insert(name) } else { stores.call_values.insert(name) };
        }
        stores
    }

    /// `x.attr = v`, `x.d[key] = v`.
    fn holds(&self, stmt: &Stmt) -> bool {
        let Stmt::Assign(assign) = stmt else { return false };
        let places = assign.targets.iter().all(|target| match target {
            Expr::Attribute(_) => true,
            Expr::Subscript(subscript) => self.is_fixed_key(&subscript.slice),
            _ => false,
        });
        places && self.is_kept_value(&assign.value)
    }

    /// A literal, or built from literals and parameters bound at registration (`f"block{index}"`).
    fn is_fixed_key(&self, key: &Expr) -> bool {
        let mut names = Names::default();
        names.visit_expr(key);
        !names.other_parts && names.found.iter().all(|name| self.fixed.contains(name))
    }

    /// No graph break or host copy, and the call's tensors detached.
    fn is_kept_value(&self, value: &Expr) -> bool {
        let mut names = Names::default();
        names.visit_expr(value);
        let host = names.methods.iter().any(|method| matches!(*method, "item" | "tolist" | "cpu" | "numpy"));
        let reads_call = names.found.iter().any(|name| self.call_values.contains(name));
        !host && (!reads_call || names.methods.contains(&"detach"))
    }
}

/// The names an expression reads, the methods it calls, and whether it has parts other than
/// names and literals (calls, attributes, subscripts).
#[derive(Default)]
struct Names<'a> {
    found: Vec<&'a str>,
    methods: Vec<&'a str>,
    other_parts: bool,
}

impl<'a> Visitor<'a> for Names<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) => self.found.push(name.id.as_str()),
            Expr::Call(call) => {
                self.other_parts = true;
                if let Expr::Attribute(method) = call.func.as_ref() {
                    self.methods.push(method.attr.id.as_str());
                }
            }
            Expr::Attribute(_) | Expr::Subscript(_) => self.other_parts = true,
            _ => {}
        }
        walk_expr(self, expr);
    }
}

fn is_docstring(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Expr(expr) if expr.value.is_string_literal_expr())
}

/// `if not flag: return`: the line goes (not with a comment on it, which would be lost).
fn returns_early(model: &FileModel, if_stmt: &ast::StmtIf) -> Option<Edit> {
    let text = model.source.text.as_str();
    let [Stmt::Return(ret)] = if_stmt.body.as_slice() else { return None };
    if ret.value.as_deref().is_some_and(|value| !value.is_none_literal_expr()) {
        return None;
    }
    let whole = TextRange::new(text.line_start(if_stmt.start()), text.full_line_end(if_stmt.end()));
    (!text[whole].contains('#')).then(|| Edit::replace(whole, ""))
}

/// `if flag:` and its block: the block, one level out. Not when a comment sits on the header or
/// before the first statement (it would be lost), nor when a line of the block is inside a string
/// (its text would change).
fn unwrap(model: &FileModel, if_stmt: &ast::StmtIf) -> Option<Edit> {
    let text = model.source.text.as_str();
    let first = if_stmt.body.first()?;
    let outer = indentation(text, if_stmt.start());
    let inner = indentation(text, first.start());
    let body_line = text.line_start(first.start());
    // `if flag: store` on one line has no block to move out.
    if body_line <= if_stmt.start() || inner.len() <= outer.len() {
        return None;
    }
    if text[TextRange::new(if_stmt.start(), body_line)].contains('#') {
        return None;
    }
    let block = TextRange::new(text.line_start(first.start()), if_stmt.end());
    let mut lines = Vec::new();
    let mut start = block.start();
    for line in text[block].split_inclusive('\n') {
        if inside_string(model.source, start) {
            return None;
        }
        start += ruff_text_size::TextSize::of(line);
        if line.trim().is_empty() {
            lines.push(line.trim_start_matches([' ', '\t']).to_string());
        } else {
            lines.push(format!("{outer}{}", line.strip_prefix(inner)?));
        }
    }
    let whole = TextRange::new(text.line_start(if_stmt.start()), if_stmt.end());
    Some(Edit::replace(whole, lines.concat()))
}
