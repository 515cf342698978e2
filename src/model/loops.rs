//! The loop amplifier: a graph break inside a `for`/`while` body of a traced frame makes Dynamo
//! give up on the whole frame ("graph break in loop", GB7000) and run it eagerly. The body may hold
//! the break itself, or call what breaks: a method, the forward of a block the loop runs
//! (`for block in self.blocks: x = block(x)`), a hook on modules that run in a loop.
//!
//! Measured under torch 2.15: a `print` in `Block.forward` with `for b in self.blocks: x = b(x)`
//! in `Net.forward` leaves `Net.forward` uncompiled; the same blocks run by an `nn.Sequential`
//! only split the graph (Sequential's own frame is skipped, not the caller's), so calls through a
//! Sequential are not amplified here.

use std::collections::{HashMap, HashSet};
use std::fmt;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::FileModel;
use crate::model::module::{is_self, self_assignments};

/// Why a graph break at a site costs a whole frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InLoop {
    /// The break sits in a loop body of the function itself (named).
    Body(String),
    /// The function is called in a loop of another one (named).
    CalledInLoop(String),
    /// The function is a hook registered in a loop: on repeated blocks that `forward` runs in a loop.
    HookOnRepeatedModules,
}

impl fmt::Display for InLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InLoop::Body(frame) => write!(f, "it is inside a loop, so Dynamo runs all of `{frame}` eagerly"),
            InLoop::CalledInLoop(frame) => {
                write!(f, "it runs in a loop in `{frame}`, so Dynamo runs all of `{frame}` eagerly")
            }
            InLoop::HookOnRepeatedModules => f.write_str(
                "the hook is registered on modules that run in a loop, so Dynamo runs all of the forward that loops eagerly",
            ),
        }
    }
}

/// The functions of a file that run inside a loop of a traced frame, each with the frame.
#[derive(Default)]
pub struct LoopCalls {
    frame_of: HashMap<usize, String>,
}

impl LoopCalls {
    /// Calls in loops of region functions, then everything those callees call in turn.
    pub fn find(model: &FileModel) -> Self {
        let mut submodules = Submodules::default();
        let mut frame_of = HashMap::new();
        let mut queue = Vec::new();
        for function in model.region_functions() {
            for call in calls(model, function, &mut submodules).into_iter().filter(|call| call.in_loop) {
                if call.callee != function && !frame_of.contains_key(&call.callee) {
                    frame_of.insert(call.callee, model.function(function).qualname.clone());
                    queue.push(call.callee);
                }
            }
        }
        while let Some(caller) = queue.pop() {
            let frame = frame_of[&caller].clone();
            for call in calls(model, caller, &mut submodules) {
                if !frame_of.contains_key(&call.callee) {
                    frame_of.insert(call.callee, frame.clone());
                    queue.push(call.callee);
                }
            }
        }
        Self { frame_of }
    }

    /// Whether a graph break at `site` in `function` sits in a loop of a traced frame, and how.
    pub fn in_loop(&self, model: &FileModel, function: usize, site: Site) -> Option<InLoop> {
        if site.in_loop {
            return Some(InLoop::Body(model.function(function).qualname.clone()));
        }
        if let Some(frame) = self.frame_of.get(&function) {
            return Some(InLoop::CalledInLoop(frame.clone()));
        }
        let looped_hook = model.hooks.iter().any(|hook| hook.function == function && hook.in_loop);
        looped_hook.then_some(InLoop::HookOnRepeatedModules)
    }
}

/// A call from compiled code to a function of the same file.
struct Call {
    callee: usize,
    in_loop: bool,
}

/// What `function`'s compiled code calls in this file: methods on `self`, functions by name, and
/// the `forward` of blocks held in `self.<attr>` (directly, or in a container the loop walks).
fn calls(model: &FileModel, function: usize, submodules: &mut Submodules) -> Vec<Call> {
    let class = model.self_class(function);
    let mut collector = CallCollector { loop_targets: HashMap::new(), found: Vec::new() };
    visit_compiled(model.function(function).node.body(), &mut collector);
    let mut calls = Vec::new();
    for (callee, in_loop) in collector.found {
        let functions: Vec<usize> = match callee {
            Callee::SelfAttribute(attr) => match class {
                Some(class) => match model.method(class, &attr) {
                    Some(method) => vec![method],
                    None => submodules.forwards(model, class, &attr),
                },
                None => Vec::new(),
            },
            Callee::Name(name) => model.resolve_name(&name, Some(function)).into_iter().collect(),
        };
        calls.extend(functions.into_iter().map(|callee| Call { callee, in_loop }));
    }
    calls
}

enum Callee {
    /// `self.attr(...)`, `self.attr[i](...)`, or a loop variable over `self.attr`.
    SelfAttribute(String),
    Name(String),
}

struct CallCollector {
    /// Loop variables bound to the items of `self.<attr>` (`for block in self.blocks`).
    loop_targets: HashMap<String, String>,
    found: Vec<(Callee, bool)>,
}

impl<'a> CompiledCodeVisitor<'a> for CallCollector {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        if let Stmt::For(for_stmt) = stmt {
            if let (Some(target), Some(attr)) = (item_name(&for_stmt.target), self_container(&for_stmt.iter)) {
                self.loop_targets.insert(target, attr);
            }
        }
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        let Expr::Call(call) = expr else { return true };
        let callee = match call.func.as_ref() {
            Expr::Attribute(attr) if is_self(&attr.value) => Some(Callee::SelfAttribute(attr.attr.id.to_string())),
            Expr::Subscript(subscript) => self_attribute(&subscript.value).map(Callee::SelfAttribute),
            Expr::Name(name) => Some(match self.loop_targets.get(name.id.as_str()) {
                Some(attr) => Callee::SelfAttribute(attr.clone()),
                None => Callee::Name(name.id.to_string()),
            }),
            _ => None,
        };
        self.found.extend(callee.map(|callee| (callee, site.in_loop)));
        true
    }
}

/// The loop variable that holds each item: `block` in `for block in ...` and in
/// `for i, block in enumerate(...)`.
fn item_name(target: &Expr) -> Option<String> {
    match target {
        Expr::Name(name) => Some(name.id.to_string()),
        Expr::Tuple(tuple) => match tuple.elts.as_slice() {
            [_, Expr::Name(name)] => Some(name.id.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// `self.blocks`, `self.blocks[:n]`, `enumerate(self.blocks)`: the attribute a loop walks.
fn self_container(iter: &Expr) -> Option<String> {
    match iter {
        Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "enumerate") => {
            self_container(call.arguments.args.first()?)
        }
        Expr::Subscript(subscript) => self_attribute(&subscript.value),
        _ => self_attribute(iter),
    }
}

fn self_attribute(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Attribute(attr) if is_self(&attr.value) => Some(attr.attr.id.to_string()),
        _ => None,
    }
}

/// Which of the file's module classes each `self.<attr>` holds, read from the values assigned
/// to it (`nn.ModuleList([Block(d) for _ in range(n)])`, `Block(d)`, `.append(Block(d))` is not
/// followed). Computed once per class.
#[derive(Default)]
struct Submodules {
    of_class: HashMap<usize, HashMap<String, HashSet<usize>>>,
}

impl Submodules {
    /// The `forward` methods of the classes `self.<attr>` of `class` holds.
    fn forwards(&mut self, model: &FileModel, class: usize, attr: &str) -> Vec<usize> {
        let held = self.of_class.entry(class).or_insert_with(|| held_classes(model, class));
        let mut forwards: Vec<usize> =
            held.get(attr).into_iter().flatten().filter_map(|&held| model.method(held, "forward")).collect();
        forwards.sort_unstable();
        forwards
    }
}

fn held_classes(model: &FileModel, class: usize) -> HashMap<String, HashSet<usize>> {
    let mut held: HashMap<String, HashSet<usize>> = HashMap::new();
    for assignment in self_assignments(model, class) {
        let Some(value) = assignment.value() else { continue };
        if is_sequential(model, value) {
            continue;
        }
        let mut constructors = Constructors { model, found: HashSet::new() };
        constructors.visit_expr(value);
        held.entry(assignment.attr).or_default().extend(constructors.found);
    }
    held
}

/// `nn.Sequential(...)`: its own forward runs the loop, so a break inside only skips that frame.
fn is_sequential(model: &FileModel, value: &Expr) -> bool {
    let Expr::Call(call) = value else { return false };
    model.imports.qualified_name(&call.func).as_deref() == Some("torch.nn.Sequential")
}

/// Calls of the file's own module classes inside an expression.
struct Constructors<'m, 'a> {
    model: &'m FileModel<'a>,
    found: HashSet<usize>,
}

impl<'a> Visitor<'a> for Constructors<'_, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(ast::ExprCall { func, .. }) = expr {
            if let Expr::Name(name) = func.as_ref() {
                let class = self.model.classes.iter().position(|class| class.node.name.id.as_str() == name.id.as_str());
                self.found.extend(class.filter(|&class| self.model.classes[class].is_module));
            }
        }
        walk_expr(self, expr);
    }
}
