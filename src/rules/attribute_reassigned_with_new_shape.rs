//! TCF207 attribute-reassigned-with-new-shape: compiled code that checks a tensor attribute and
//! rebuilds it for the input's size (`if self.rel_indices.shape[1] != N: self.rel_indices =
//! self.get_rel_indices(N)`, timm's ConViT). The old value is read before it is replaced, so
//! Dynamo guards on its size. Measured under torch 2.15: a registered buffer is static, so every
//! new size recompiles until the recompile limit (8); a plain tensor attribute recompiles once,
//! then automatic dynamic shapes cover it (once per size with `dynamic=False`).
//! Empty buffers grown this way are TCF201's; Python scalars are TCF203's.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::file::Body;
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_all};
use crate::model::file::FileModel;
use crate::model::file::init_method;
use crate::model::file::module::is_self;
use crate::model::compiled::reach::describe;
use crate::model::tensors::scalars::scalar_attributes;
use crate::rules::lazily_grown_buffer::{empty_buffers, register_buffer_arguments};
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF207",
    name: "attribute-reassigned-with-new-shape",
    summary: "size attributes for the largest input up front",
    explanation: include_str!("../../codemods/attribute-reassigned-with-new-shape/README.md"),
    hazard: "Compiled code rebuilds a tensor attribute for the input's size after checking the old one.",
    why: "Dynamo guards on the old tensor's size, so a buffer rebuilt for a new size recompiles for every size \
              (a plain attribute once), and after the recompile limit the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

struct Rebuild {
    attribute: String,
    range: TextRange,
    /// The input size it is rebuilt for, as written.
    size: String,
    /// The `if` that checks it.
    check: TextRange,
}

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(Rebuilds { model: checker.model, classes: HashMap::default(), class: None, found: Vec::new() })
}

/// The rebuilds in the compiled code of each module class's region functions, found in the
/// checker's walk, and reported when the walk of their function ends.
struct Rebuilds<'m, 'a> {
    model: &'m FileModel<'a>,
    /// By class, found on its first rebuild: the attributes other rules report, and the
    /// registered buffers.
    classes: HashMap<usize, (HashSet<String>, HashSet<String>)>,
    /// The module class of the function being walked.
    class: Option<usize>,
    /// The rebuilds in the function being walked.
    found: Vec<Rebuild>,
}

impl<'a> RegionHooks<'a> for Rebuilds<'_, 'a> {
    fn start(&mut self, function: &Function<'_, 'a>) -> bool {
        let model = self.model;
        self.class = model.self_class(function.id).filter(|&class| model.classes[class].is_module);
        self.class.is_some()
    }

    /// `if <test reading self.X>: ... self.X = <value reading an input size>` (or
    /// `self.register_buffer("X", <value>)`).
    fn stmt(&mut self, function: &Function<'_, 'a>, stmt: &'a Stmt, _site: Site) {
        let Stmt::If(if_stmt) = stmt else { return };
        let tested = self_attributes_read(&if_stmt.test);
        if tested.is_empty() {
            return;
        }
        let mut assignments = Assignments::default();
        assignments.visit_body(&if_stmt.body);
        for clause in &if_stmt.elif_else_clauses {
            assignments.visit_body(&clause.body);
        }
        for (attribute, value, range) in assignments.found {
            if !tested.contains(&attribute) || self.found.iter().any(|r| r.range == range) {
                continue;
            }
            if let Some(size) = function.sizes().read_by(value) {
                let size = self.model.source.text[size.range()].to_string();
                self.found.push(Rebuild { attribute, range, size, check: if_stmt.range() });
            }
        }
    }

    fn end(&mut self, function: &Function<'_, 'a>, diagnostics: &mut Vec<Diagnostic>) {
        let (model, Some(class)) = (self.model, self.class) else { return };
        for rebuild in std::mem::take(&mut self.found) {
            let (others, buffers) = self
                .classes
                .entry(class)
                .or_insert_with(|| (attributes_of_other_rules(model, class), registered_buffers(model, class)));
            if others.contains(&rebuild.attribute) {
                continue;
            }
            let buffer = buffers.contains(&rebuild.attribute);
            if !buffer && stored_on_every_call(model, function.id, &rebuild) {
                continue;
            }
            diagnostics.push(report(model, function.id, &rebuild, buffer));
        }
    }
}

fn report(model: &FileModel, function: usize, rebuild: &Rebuild, buffer: bool) -> Diagnostic {
    let place = describe(model, function);
    let (what, severity, cost) = if buffer {
        // Medium, not high: a model fed one input size (a ViT at its image size) pays one
        // recompile, when the first call replaces what `__init__` registered; only varying sizes
        // pay more.
        (
            "buffer",
            Severity::Medium,
            "buffers are static to Dynamo, so the first call whose size differs from the one `__init__` \
             registered recompiles, and so does every new size after it (dynamic shapes do not help); after 8 \
             sizes the frame runs eagerly",
        )
    } else {
        (
            "attribute",
            Severity::Low,
            "Dynamo guards on its size: it recompiles once, then treats the size as dynamic (with `dynamic=False`, \
             once per size)",
        )
    };
    let message =
        format!("{what} `self.{}` is checked and rebuilt for `{}` in {place}: {cost}", rebuild.attribute, rebuild.size);
    Diagnostic::new(&RULE, rebuild.range, message).with_severity(severity).without_fix(
        "build it once in `__init__` for the largest size and slice it in forward, or compute it in forward \
         without storing it on `self`",
    )
}

/// Attributes TCF201 (empty buffers grown in forward) and TCF203 (Python scalars) report.
fn attributes_of_other_rules(model: &FileModel, class: usize) -> HashSet<String> {
    let mut names: HashSet<String> = scalar_attributes(model, class).into_iter().map(|a| a.init.attr).collect();
    if let Some(init) = init_method(model, class) {
        names.extend(empty_buffers(model, init).into_iter().map(|b| b.name));
    }
    names
}

/// Names the class registers with `self.register_buffer("name", ...)` in any method.
fn registered_buffers(model: &FileModel, class: usize) -> HashSet<String> {
    struct Finder(HashSet<String>);
    // A visitor of its own: all the class's methods, eager ones included (once per class).
    impl<'a> CompiledCodeVisitor<'a> for Finder {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            if let Expr::Call(call) = expr
                && let Some((Expr::StringLiteral(name), _, _)) = register_buffer_arguments(call) {
                    self.0.insert(name.value.to_str().to_string());
                }
            true
        }
    }
    let mut finder = Finder(HashSet::default());
    for &method in model.methods_of(class) {
        visit_all(model.function(method).node.body(), &mut finder);
    }
    finder.0
}

/// Per-call state (recurrent_gemma's `conv1d_state`): besides the rebuild, the function stores a
/// new value computed from this call's data (`self.state = window[:, :, -k:]`). Its size follows
/// the inputs on every call anyway, so the check adds no recompile (measured: the same compile
/// count with and without it). Moving or casting the old value (`self.table.to(x.device)`) is no
/// new state.
fn stored_on_every_call(model: &FileModel, function: usize, rebuild: &Rebuild) -> bool {
    let Body::Stmts(body) = model.function(function).node.body() else { return false };
    let mut assignments = Assignments::default();
    assignments.visit_body(body);
    assignments.found.iter().any(|(attribute, value, range)| {
        *attribute == rebuild.attribute && !rebuild.check.contains_range(*range) && reads_local_data(value)
    })
}

/// Whether `value` reads the data of a local name (`window[...]`, `pad(x, ...)`), not only its
/// metadata (`x.device`, `x.shape`).
fn reads_local_data(value: &Expr) -> bool {
    struct Reads(bool);
    // A visitor of its own: a search of one assigned value.
    impl<'a> Visitor<'a> for Reads {
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Attribute(attr) if matches!(attr.attr.id.as_str(), "device" | "dtype" | "shape" | "ndim") => {}
                Expr::Name(name) if name.id != "self" => self.0 = true,
                _ => walk_expr(self, expr),
            }
        }
    }
    let mut reads = Reads(false);
    reads.visit_expr(value);
    reads.0
}

/// The `self.<attr>` names an expression reads.
fn self_attributes_read(expr: &Expr) -> HashSet<String> {
    struct Finder(HashSet<String>);
    // A visitor of its own: a search of one expression (a rebuild's test).
    impl<'a> Visitor<'a> for Finder {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Attribute(attr) = expr
                && attr.ctx == ExprContext::Load && is_self(&attr.value) {
                    self.0.insert(attr.attr.id.to_string());
                }
            walk_expr(self, expr);
        }
    }
    let mut finder = Finder(HashSet::default());
    finder.visit_expr(expr);
    finder.0
}

/// `self.X = value` statements and `self.register_buffer("X", value)` calls in a block.
#[derive(Default)]
struct Assignments<'a> {
    found: Vec<(String, &'a Expr, TextRange)>,
}

// A visitor of its own: every statement of the function, eager branches included, read once per rebuild found.
impl<'a> Visitor<'a> for Assignments<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    if let Expr::Attribute(attr) = target
                        && is_self(&attr.value) {
                            self.found.push((attr.attr.id.to_string(), &assign.value, stmt.range()));
                        }
                }
            }
            Stmt::Expr(expr) => {
                if let Expr::Call(call) = expr.value.as_ref()
                    && let Some((Expr::StringLiteral(name), Some(value), _)) = register_buffer_arguments(call) {
                        self.found.push((name.value.to_str().to_string(), value, stmt.range()));
                    }
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, _expr: &'a Expr) {}
}
