//! The TCF202 fix that keeps one graph: the hook's tests of its flags are taken out, so that it
//! records on every call and Dynamo has no flag to guard on. `if not collector.enabled: return`
//! goes; `if collector.record_norms: <record>` becomes `<record>`. Measured under torch 2.15 on the
//! whole-model decoder (hooks on every block, flags flipped between steps): forward stays one graph
//! in inference and training, where `@torch.compiler.disable` sent it to eager. Unsafe: the hook
//! now computes and stores its records on every call, also when the flags are off, and the code
//! that reads them must check the flags (`record_readers` makes the collector's own loops over
//! the records do so, where it can). Besides its flag tests, the hook may compute local values,
//! loop over labels bound at registration, and return early on tests of its inputs (kept: they
//! read no flag, and at the top level they return under the same conditions as before). Only for a hook that stores detached values in places it overwrites (`collector.latest[key] =
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
use crate::model::file::module::is_docstring;
use crate::model::file::{FileModel, FunctionNode};
/// The edits that take a hook's flag tests out, the tests they take out, and the flags.
pub(super) struct FlagTests {
    pub edits: Vec<Edit>,
    /// The tests taken out: reads inside them are gone after the fix.
    pub tests: Vec<TextRange>,
    /// The flags, as written (`collector.enabled`).
    pub flags: Vec<String>,
    /// The containers the hook stores into by key, each with the flags its stores were under.
    pub records: Vec<Record>,
    /// Whether the hook also stores into plain attributes (`probe.last = ...`).
    pub stores_attributes: bool,
}

/// `collector.norms[key] = value`, stored while `collector.<flags>` were on.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Record {
    pub object: String,
    pub container: String,
    pub flags: Vec<String>,
}

impl FlagTests {
    /// When every statement of the hook is a flag test of the two shapes, a store, a local value
    /// or a loop of stores over a registration-time sequence, or an early return on a test of its
    /// inputs (see the module's doc), else `None`; `is_flag` says whether an expression reads a flag.
    pub(super) fn of(model: &FileModel, hook: usize, is_flag: &dyn Fn(&Expr) -> bool) -> Option<Self> {
        let FunctionNode::Def(def) = model.function(hook).node else { return None };
        let mut walk = HookWalk {
            model,
            is_flag,
            stores: Stores::of(def),
            found: FlagTests {
                edits: Vec::new(),
                tests: Vec::new(),
                flags: Vec::new(),
                records: Vec::new(),
                stores_attributes: false,
            },
        };
        walk.suite(&def.body, &mut Vec::new(), true)?;
        (!walk.found.edits.is_empty()).then_some(walk.found)
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

/// The walk over the hook's body that collects the fix's edits, or gives up.
struct HookWalk<'m, 'a> {
    model: &'m FileModel<'a>,
    is_flag: &'m dyn Fn(&Expr) -> bool,
    stores: Stores<'a>,
    found: FlagTests,
}

impl<'a> HookWalk<'_, 'a> {
    /// `under`: the flags the statements run under (an early return on a flag guards the rest of
    /// its suite). Flag tests are only taken out at the hook's top level, where their edits do
    /// not nest.
    fn suite(&mut self, suite: &'a [Stmt], under: &mut Vec<String>, top: bool) -> Option<()> {
        for stmt in suite {
            match stmt {
                Stmt::If(if_stmt) => self.test(stmt, if_stmt, under, top)?,
                Stmt::For(for_stmt) => self.loop_of_stores(for_stmt, under)?,
                Stmt::Assign(assign) if self.stores.is_local(assign) => self.stores.bind_local(assign),
                _ if is_docstring(stmt) => {}
                _ => self.store(stmt, under)?,
            }
        }
        Some(())
    }

    fn test(&mut self, stmt: &'a Stmt, if_stmt: &'a ast::StmtIf, under: &mut Vec<String>, top: bool) -> Option<()> {
        let (flag, negated) = match if_stmt.test.as_ref() {
            Expr::UnaryOp(op) if op.op == UnaryOp::Not => (op.operand.as_ref(), true),
            test => (test, false),
        };
        let plain = if_stmt.elif_else_clauses.is_empty() && stands_alone(&self.model.source.text, stmt.range());
        if !(self.is_flag)(flag) {
            // A test of the hook's inputs (`if output.dim() != 4: return`) stays: it reads no flag.
            let mut reads = FlagReads { is_flag: self.is_flag, found: false };
            reads.visit_expr(&if_stmt.test);
            return (plain && !reads.found && returns_nothing(&if_stmt.body)).then_some(());
        }
        if !plain || !top {
            return None;
        }
        let Expr::Attribute(attr) = flag else { return None };
        let name = attr.attr.id.to_string();
        self.found.tests.push(if_stmt.test.range());
        self.found.flags.push(format!("`{}`", &self.model.source.text[flag.range()]));
        if negated {
            self.found.edits.push(returns_early(self.model, if_stmt)?);
            under.push(name);
        } else {
            let mut inner = under.clone();
            inner.push(name);
            self.suite(&if_stmt.body, &mut inner, false)?;
            self.found.edits.push(unwrap(self.model, if_stmt)?);
        }
        Some(())
    }

    /// `for label in labels: collector.d[f"x_{label}"] = v` where `labels` is bound at
    /// registration: the keys stay fixed.
    fn loop_of_stores(&mut self, for_stmt: &'a ast::StmtFor, under: &[String]) -> Option<()> {
        let (Expr::Name(target), Expr::Name(sequence)) = (for_stmt.target.as_ref(), for_stmt.iter.as_ref()) else {
            return None;
        };
        if !for_stmt.orelse.is_empty() || for_stmt.is_async || !self.stores.fixed.contains(sequence.id.as_str()) {
            return None;
        }
        self.stores.fixed.insert(target.id.as_str());
        for stmt in &for_stmt.body {
            self.store(stmt, under)?;
        }
        Some(())
    }

    fn store(&mut self, stmt: &Stmt, under: &[String]) -> Option<()> {
        let Stmt::Assign(assign) = stmt else { return None };
        if !self.stores.holds(assign) {
            return None;
        }
        for target in &assign.targets {
            match target {
                Expr::Subscript(subscript) => {
                    let record = match subscript.value.as_ref() {
                        Expr::Attribute(attr) => match attr.value.as_ref() {
                            Expr::Name(object) => Some(Record {
                                object: object.id.to_string(),
                                container: attr.attr.id.to_string(),
                                flags: under.to_vec(),
                            }),
                            _ => None,
                        },
                        _ => None,
                    };
                    // A container the readers cannot be found for: no reader is changed.
                    match record {
                        Some(record) => self.found.records.push(record),
                        None => self.found.stores_attributes = true,
                    }
                }
                _ => self.found.stores_attributes = true,
            }
        }
        Some(())
    }
}

/// Whether an expression reads a flag anywhere in it.
struct FlagReads<'f> {
    is_flag: &'f dyn Fn(&Expr) -> bool,
    found: bool,
}

// A visitor of its own: a search of one expression of the hook's body, asked by the fix.
impl<'a> Visitor<'a> for FlagReads<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        self.found |= (self.is_flag)(expr);
        walk_expr(self, expr);
    }
}

/// `return` or `return None`, alone.
fn returns_nothing(body: &[Stmt]) -> bool {
    matches!(body, [Stmt::Return(ret)] if ret.value.as_deref().is_none_or(Expr::is_none_literal_expr))
}

/// What the hook's stores may be: overwrites, of detached values, at keys fixed at registration.
struct Stores<'a> {
    /// Parameters with a default (`index=index`), and loop variables over them: bound when the
    /// hook is made.
    fixed: HashSet<&'a str>,
    /// The other parameters (the module, its inputs and output), and the locals computed from
    /// them without `.detach()`: storing them would keep their autograd graph alive.
    attached: HashSet<&'a str>,
}

impl<'a> Stores<'a> {
    fn of(def: &'a ast::StmtFunctionDef) -> Self {
        let mut stores = Stores { fixed: HashSet::default(), attached: HashSet::default() };
        for parameter in def.parameters.iter_non_variadic_params() {
            let name = parameter.parameter.name.id.as_str();
            if parameter.default.is_some() { stores.fixed.insert(name) } else { stores.attached.insert(name) };
        }
        stores
    }

    /// `x.attr = v`, `x.d[key] = v`.
    fn holds(&self, assign: &ast::StmtAssign) -> bool {
        let places = assign.targets.iter().all(|target| match target {
            Expr::Attribute(_) => true,
            Expr::Subscript(subscript) => self.is_fixed_key(&subscript.slice),
            _ => false,
        });
        places && self.is_kept_value(&assign.value)
    }

    /// `name = v` or `a, b = v`: a local value, computed on every call once the flags are gone,
    /// so it must neither break the graph nor copy to the host.
    fn is_local(&self, assign: &ast::StmtAssign) -> bool {
        let names = |target: &Expr| match target {
            Expr::Name(_) => true,
            Expr::Tuple(tuple) => tuple.elts.iter().all(Expr::is_name_expr),
            _ => false,
        };
        assign.targets.iter().all(names) && !Names::of(&assign.value).copies_to_host()
    }

    fn bind_local(&mut self, assign: &'a ast::StmtAssign) {
        let value = Names::of(&assign.value);
        let attached = value.reads_any(&self.attached) && !value.methods.contains(&"detach");
        let targets = assign.targets.iter().flat_map(|target| match target {
            Expr::Tuple(tuple) => tuple.elts.iter().collect::<Vec<_>>(),
            target => vec![target],
        });
        for name in targets.filter_map(Expr::as_name_expr) {
            let name = name.id.as_str();
            self.fixed.remove(name);
            if attached { self.attached.insert(name) } else { self.attached.remove(name) };
        }
    }

    /// A literal, or built from literals and parameters bound at registration (`f"block{index}"`).
    fn is_fixed_key(&self, key: &Expr) -> bool {
        let names = Names::of(key);
        !names.other_parts && names.found.iter().all(|name| self.fixed.contains(name))
    }

    /// No graph break or host copy, and the call's tensors detached.
    fn is_kept_value(&self, value: &Expr) -> bool {
        let names = Names::of(value);
        !names.copies_to_host() && (!names.reads_any(&self.attached) || names.methods.contains(&"detach"))
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

impl<'a> Names<'a> {
    fn of(expr: &'a Expr) -> Self {
        let mut names = Names::default();
        names.visit_expr(expr);
        names
    }

    fn copies_to_host(&self) -> bool {
        self.methods.iter().any(|method| matches!(*method, "item" | "tolist" | "cpu" | "numpy"))
    }

    fn reads_any(&self, names: &HashSet<&str>) -> bool {
        self.found.iter().any(|name| names.contains(name))
    }
}

// A visitor of its own: a search of one expression of the hook's body, asked by the fix.
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

/// `if not flag: return`: the line goes (not with a comment on it, which would be lost).
fn returns_early(model: &FileModel, if_stmt: &ast::StmtIf) -> Option<Edit> {
    let text = model.source.text.as_str();
    if !returns_nothing(&if_stmt.body) {
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
