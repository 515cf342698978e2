//! The readers of a hook's records, for TCF202's record-always fix. Once the hook records on every
//! call, a method of the collector that reads the records (`for key, value in self.norms.items():`)
//! would return them also on the steps the flags were off; wrapped in `if self.<flag>:`, it returns
//! what it did, as long as the flags keep their value from forward to the read. Only the collector's
//! own class in the hook's file is changed, and only when every read of the records there is such a
//! loop (or `.clear()`): any other read, or a record the flags do not map one to one, leaves the
//! readers alone and the fix's title says that they must check the flags.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::record_always::{FlagTests, Record};
use crate::fix::{Edit, Fix, Safety};
use crate::fix::text::{block_indent_unit, wrap_in_if};
use crate::model::file::FileModel;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;

/// The collector's methods that read the records, and the edits that make them check the flags.
pub(super) struct Readers {
    pub methods: Vec<String>,
    pub edits: Vec<Edit>,
}

impl Readers {
    pub(super) fn of(model: &FileModel, hook: usize, tests: &FlagTests) -> Option<Self> {
        if tests.stores_attributes {
            return None;
        }
        let containers = flags_by_container(&tests.records)?;
        let class = collector_class(model, &containers)?;
        let mut finder = ReadFinder {
            model,
            class,
            containers: &containers,
            hook: model.function(hook).node.range(),
            loops: Vec::new(),
            other_read: false,
        };
        finder.visit_body(model.source.parsed.suite());
        if finder.other_read || finder.loops.is_empty() {
            return None;
        }
        let mut readers = Readers { methods: Vec::new(), edits: Vec::new() };
        for (method, for_stmt, flags) in finder.loops {
            let condition = flags.iter().map(|flag| format!("self.{flag}")).collect::<Vec<_>>().join(" and ");
            let unit = block_indent_unit(model.source, for_stmt.start(), for_stmt.body.first()?.start());
            readers.edits.extend(wrap_in_if(model.source, for_stmt.range(), &condition, &unit)?);
            let name = format!("`{}`", model.function(method).qualname);
            if !readers.methods.contains(&name) {
                readers.methods.push(name);
            }
        }
        Some(readers)
    }

    /// The hook's fix with the readers': one fix, since neither is right without the other.
    pub(super) fn fix(self, tests: FlagTests) -> Fix {
        let title = format!(
            "Record on every call: take the hook's tests of {} out, so that Dynamo has no flag to guard on and \
             forward stays one graph, and have {} read the records only while the flags are on (unsafe: the hook \
             now computes its records on every call, and the readers return what they did only if the flags keep \
             their value from forward to the read; code elsewhere that reads the records must check the flags too)",
            tests.flags.join(" and "),
            self.methods.join(" and ")
        );
        let mut edits = tests.edits;
        edits.extend(self.edits);
        Fix::new(title, Safety::Unsafe, edits)
    }
}

/// Each container with the flags its stores were under: one object, flags on every store, and the
/// same flags for every store into a container (else a reader could not tell which to check).
fn flags_by_container(records: &[Record]) -> Option<Vec<(String, Vec<String>)>> {
    let object = &records.first()?.object;
    let mut containers: Vec<(String, Vec<String>)> = Vec::new();
    for record in records {
        if &record.object != object || record.flags.is_empty() {
            return None;
        }
        match containers.iter().find(|(container, _)| *container == record.container) {
            Some((_, flags)) if *flags != record.flags => return None,
            Some(_) => {}
            None => containers.push((record.container.clone(), record.flags.clone())),
        }
    }
    Some(containers)
}

/// The one class of the file that assigns every flag and every container on `self`.
fn collector_class(model: &FileModel, containers: &[(String, Vec<String>)]) -> Option<usize> {
    let wanted: Vec<&str> = containers
        .iter()
        .flat_map(|(container, flags)| std::iter::once(container).chain(flags))
        .map(String::as_str)
        .collect();
    let mut classes = (0..model.classes.len()).filter(|&class| {
        let assigned = self_assignments(model, class);
        wanted.iter().all(|attr| assigned.iter().any(|assignment| assignment.attr == *attr))
    });
    let class = classes.next()?;
    classes.next().is_none().then_some(class)
}

/// The loops of the collector's methods over a container, and whether anything else in the file
/// reads one (outside the hook).
struct ReadFinder<'m, 'a> {
    model: &'m FileModel<'a>,
    class: usize,
    containers: &'m [(String, Vec<String>)],
    hook: TextRange,
    loops: Vec<(usize, &'a ast::StmtFor, Vec<String>)>,
    other_read: bool,
}

impl<'a> ReadFinder<'_, 'a> {
    /// The flags of the container `expr` names as `self.<container>`.
    fn container(&self, expr: &Expr) -> Option<&Vec<String>> {
        let Expr::Attribute(attr) = expr else { return None };
        if !is_self(&attr.value) {
            return None;
        }
        self.containers.iter().find(|(container, _)| attr.attr.id == container.as_str()).map(|(_, flags)| flags)
    }

    /// `self.c`, `self.c.items()`, `.values()`, `.keys()`.
    fn iterated(&self, iter: &Expr) -> Option<&Vec<String>> {
        match iter {
            Expr::Call(call) if call.arguments.is_empty() => match call.func.as_ref() {
                Expr::Attribute(method) if matches!(method.attr.id.as_str(), "items" | "values" | "keys") => {
                    self.container(&method.value)
                }
                _ => None,
            },
            iter => self.container(iter),
        }
    }

    /// `self.c.clear()`: empties the records, reads none.
    fn clears(&self, stmt: &Stmt) -> bool {
        let Stmt::Expr(expr) = stmt else { return false };
        let Expr::Call(call) = expr.value.as_ref() else { return false };
        matches!(call.func.as_ref(), Expr::Attribute(method)
            if method.attr.id.as_str() == "clear" && call.arguments.is_empty() && self.container(&method.value).is_some())
    }

    fn method_around(&self, range: TextRange) -> Option<usize> {
        self.model.methods_of(self.class).iter().copied().find(|&method| self.model.function(method).node.range().contains_range(range))
    }
}

// A visitor of its own: the fix asks who reads the hook's records anywhere in the class, eager methods included.
impl<'a> Visitor<'a> for ReadFinder<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.hook.contains_range(stmt.range()) || self.clears(stmt) {
            return;
        }
        if let Stmt::For(for_stmt) = stmt
            && let (Some(flags), Some(method)) = (self.iterated(&for_stmt.iter), self.method_around(stmt.range()))
        {
            self.loops.push((method, for_stmt, flags.clone()));
            self.visit_expr(&for_stmt.target);
            self.visit_body(&for_stmt.body);
            self.visit_body(&for_stmt.orelse);
            return;
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Attribute(attr) = expr {
            let named = self.containers.iter().any(|(container, _)| attr.attr.id == container.as_str());
            if named && attr.ctx == ExprContext::Load && !self.hook.contains_range(expr.range()) {
                self.other_read = true;
            }
        }
        walk_expr(self, expr);
    }
}
