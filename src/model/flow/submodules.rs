//! Which of the file's module classes each `self.<attr>` of a module holds, read from what its
//! methods put there: `Block(d)`, `nn.ModuleList([Block(d) for _ in range(n)])`,
//! `self.layers.append(Block(d))` (also through a local: `layer = Block(d)` then
//! `self.layers.append(layer)`), and `ATTENTION_CLASSES[config.attn](config)`, a module-level
//! dict of classes (transformers picks its attention class that way). An `nn.Sequential(...)`
//! holds nothing here: its own forward runs the loop, so a break inside skips only that frame.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use std::sync::Arc;

use ruff_text_size::Ranged;

use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_function};
use crate::model::compiled::reach::Target;
use crate::model::file::FileModel;
use crate::model::file::call_graph::HeldClasses;
use crate::model::file::module::is_self;
use crate::model::file::{method_body, self_assignments, single_assignment};
/// The `forward` methods of the classes `self.<attr>` of `class` holds.
pub fn forwards(model: &FileModel, class: usize, attr: &str) -> Vec<usize> {
    let held = held_by(model, class);
    let mut forwards: Vec<usize> =
        held.get(attr).into_iter().flatten().filter_map(|&held| model.method(held, "forward")).collect();
    forwards.sort_unstable();
    forwards
}

/// The file's module classes `self.<attr>` of `class` holds.
pub fn classes(model: &FileModel, class: usize, attr: &str) -> Vec<usize> {
    let held = held_by(model, class);
    let mut classes: Vec<usize> = held.get(attr).into_iter().flatten().copied().collect();
    classes.sort_unstable();
    classes
}

/// The methods named `method` of the file's classes that `self.<attr>` of `class` holds:
/// what `self.pe.encode(x)` runs when `self.pe = Encoding(...)` (Dynamo inlines it as it does
/// the submodule's `forward`).
pub fn held_methods(model: &FileModel, class: usize, attr: &str, method: &str) -> Vec<usize> {
    let held = held_by(model, class);
    let mut methods: Vec<usize> =
        held.get(attr).into_iter().flatten().filter_map(|&held| model.method_or_inherited(held, method)).collect();
    methods.sort_unstable();
    methods.dedup();
    methods
}

/// What the compiled code of `function` (a method) calls on its submodules besides their
/// `forward`: `self.pe.encode(x)` -> the file's `Encoding.encode`, where `__init__` (or another
/// method) stores `self.pe = Encoding(...)`. Read before the index says which classes are
/// modules (it asks this to know what is reached), so from the constructor calls alone. Code
/// that does not run on a normal compiled call calls nothing (as `reach::targets` reads it).
pub fn held_method_targets(model: &FileModel, function: usize) -> Vec<Target> {
    let Some(class) = model.self_class(function) else { return Vec::new() };
    struct HeldCalls<'m, 'a> {
        model: &'m FileModel<'a>,
        found: Vec<(&'a str, &'a str)>,
    }
    impl<'a> CompiledCodeVisitor<'a> for HeldCalls<'_, 'a> {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            if self.model.dead_code.covering(expr.range()).is_some() {
                return false;
            }
            if let Expr::Call(call) = expr
                && let Some((attr, method)) = held_method_call(call)
                && method != "forward"
            {
                self.found.push((attr, method));
            }
            true
        }
    }
    let mut calls = HeldCalls { model, found: Vec::new() };
    visit_function(model, function, &mut calls);
    if calls.found.is_empty() {
        return Vec::new();
    }
    let assignments = self_assignments(model, class);
    let built = |attr: &str| {
        (assignments.iter().filter(|assignment| assignment.attr == attr))
            .filter_map(|assignment| match assignment.value()? {
                Expr::Call(call) => match call.func.as_ref() {
                    Expr::Name(name) => model.class_named(name.id.as_str()),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<usize>>()
    };
    let mut targets: Vec<Target> = (calls.found.into_iter())
        .flat_map(|(attr, method)| {
            built(attr).into_iter().filter_map(move |held| model.method_or_inherited(held, method))
        })
        .map(|method| Target::Local(model.function(method).qualname.clone()))
        .collect();
    targets.sort();
    targets.dedup();
    targets
}

/// `self.<attr>.<method>(...)`: the attribute and the method.
pub fn held_method_call(call: &ast::ExprCall) -> Option<(&str, &str)> {
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    let Expr::Attribute(held) = method.value.as_ref() else { return None };
    is_self(&held.value).then(|| (held.attr.id.as_str(), method.attr.id.as_str()))
}

/// What each attribute of `class` holds, worked out once per class for the file
/// (`FileModel::held_classes`): every class that holds it asks again, and so do the loops.
fn held_by(model: &FileModel, class: usize) -> Arc<HeldClasses> {
    if let Some(known) = model.held_classes.borrow().get(&class) {
        return Arc::clone(known);
    }
    let dicts = model.class_dicts.get_or_init(|| class_dicts(model));
    let held = Arc::new(held_classes(model, class, dicts));
    model.held_classes.borrow_mut().insert(class, Arc::clone(&held));
    held
}

fn held_classes(model: &FileModel, class: usize, dicts: &HashMap<String, Vec<usize>>) -> HeldClasses {
    let assignments = self_assignments(model, class);
    // Blocks appended to an `nn.Sequential` run in its forward, not in a loop of ours.
    let sequential: HashSet<&str> = assignments
        .iter()
        .filter(|assignment| assignment.value().is_some_and(|value| is_sequential(model, value)))
        .map(|assignment| assignment.attr.as_str())
        .collect();
    let additions: HashMap<usize, Additions> = model
        .methods_of(class)
        .iter()
        .map(|&method| {
            let mut additions = Additions::default();
            additions.visit_body(method_body(model, method));
            (method, additions)
        })
        .collect();
    let mut held: HashMap<String, HashSet<usize>> = HashMap::default();
    let mut add = |attr: &str, value: &Expr, method: usize| {
        if sequential.contains(attr) {
            return;
        }
        let locals = &additions[&method].locals;
        let mut constructors = Constructors { model, dicts, locals, depth: 0, found: HashSet::default() };
        constructors.visit_expr(value);
        held.entry(attr.to_string()).or_default().extend(constructors.found);
    };
    for assignment in assignments {
        let value = match assignment.stmt {
            Stmt::AugAssign(assign) => Some(assign.value.as_ref()),
            _ => assignment.value(),
        };
        if let Some(value) = value {
            add(&assignment.attr, value, assignment.method);
        }
    }
    for (&method, additions) in &additions {
        for &(ref attr, value) in &additions.found {
            add(attr, value, method);
        }
    }
    held
}

/// `nn.Sequential(...)`: its own forward runs the loop, so a break inside only skips that frame.
fn is_sequential(model: &FileModel, value: &Expr) -> bool {
    let Expr::Call(call) = value else { return false };
    model.imports.refers_to(&call.func, "torch.nn.Sequential")
}

/// `NAME = {"eager": Attention, "sdpa": SdpaAttention}` at module level: NAME -> the module
/// classes among the values.
fn class_dicts(model: &FileModel) -> HashMap<String, Vec<usize>> {
    let mut dicts = HashMap::default();
    for stmt in model.source.parsed.suite() {
        let Some((Expr::Name(name), Expr::Dict(dict))) = single_assignment(stmt) else { continue };
        let classes: Vec<usize> = dict
            .items
            .iter()
            .filter_map(|item| match &item.value {
                Expr::Name(value) => module_class(model, value.id.as_str()),
                _ => None,
            })
            .collect();
        if !classes.is_empty() {
            dicts.insert(name.id.to_string(), classes);
        }
    }
    dicts
}

fn module_class(model: &FileModel, name: &str) -> Option<usize> {
    let class = model.class_named(name)?;
    model.classes[class].is_module.then_some(class)
}

/// Calls of the file's own module classes inside an expression, directly, through a dict of
/// classes (`ATTENTION_CLASSES[key](config)`), or through the method's locals
/// (`nn.ModuleList(layers)` after `layers.append(Block(d))`).
struct Constructors<'m, 'a, 'l> {
    model: &'m FileModel<'a>,
    dicts: &'l HashMap<String, Vec<usize>>,
    locals: &'l HashMap<String, Vec<&'l Expr>>,
    /// Locals followed so far: two steps are enough (`layers = []`, `layers.append(layer)`,
    /// `layer = Block(d)`), and stopping keeps `x = f(x)` from looping.
    depth: usize,
    found: HashSet<usize>,
}

impl<'a: 'l, 'l> Visitor<'a> for Constructors<'_, '_, 'l> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr
            && self.depth < 3
            && let Some(values) = self.locals.get(name.id.as_str())
        {
            self.depth += 1;
            values.iter().for_each(|value| self.visit_expr(value));
            self.depth -= 1;
        }
        if let Expr::Call(ast::ExprCall { func, .. }) = expr {
            match func.as_ref() {
                Expr::Name(name) => self.found.extend(module_class(self.model, name.id.as_str())),
                Expr::Subscript(subscript) => {
                    if let Expr::Name(dict) = subscript.value.as_ref() {
                        self.found.extend(self.dicts.get(dict.id.as_str()).into_iter().flatten());
                    }
                }
                _ => {}
            }
        }
        walk_expr(self, expr);
    }
}

/// What a method adds to containers on `self` (`self.layers.append(x)`, `.extend(xs)`,
/// `.insert(i, x)`), and what its local names are assigned or given (`layers.append(x)`,
/// `layers += [x]`), to follow `self.layers.append(layer)` and `nn.ModuleList(layers)`.
#[derive(Default)]
struct Additions<'a> {
    locals: HashMap<String, Vec<&'a Expr>>,
    found: Vec<(String, &'a Expr)>,
}

impl<'a> Visitor<'a> for Additions<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            Stmt::Assign(assign) => {
                if let [Expr::Name(name)] = assign.targets.as_slice() {
                    self.locals.entry(name.id.to_string()).or_default().push(&assign.value);
                }
            }
            Stmt::AugAssign(assign) => {
                if let Expr::Name(name) = assign.target.as_ref() {
                    self.locals.entry(name.id.to_string()).or_default().push(&assign.value);
                }
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(method) = call.func.as_ref()
        {
            let adds = matches!(method.attr.id.as_str(), "append" | "extend" | "insert");
            let value = call.arguments.args.last();
            match (adds, method.value.as_ref(), value) {
                (true, Expr::Attribute(container), Some(value)) if is_self(&container.value) => {
                    self.found.push((container.attr.id.to_string(), value));
                }
                (true, Expr::Name(list), Some(value)) => {
                    self.locals.entry(list.id.to_string()).or_default().push(value);
                }
                _ => {}
            }
        }
        walk_expr(self, expr);
    }
}
