//! The loop amplifier: a graph break inside a `for`/`while` body of a traced frame makes Dynamo
//! give up on the whole frame ("graph break in loop", GB7000) and run it eagerly. The body may hold
//! the break itself, or call what breaks: a method, the forward of a block the loop runs
//! (`for block in self.blocks: x = block(x)`, also through `zip`, `reversed`, `.items()` or
//! `block = self.blocks[i]`), a hook on modules that run in a loop. Which classes a container
//! holds is `submodules`' business.
//!
//! Measured under torch 2.15: a `print` in `Block.forward` with `for b in self.blocks: x = b(x)`
//! in `Net.forward` leaves `Net.forward` uncompiled; the same blocks run by an `nn.Sequential`
//! only split the graph (Sequential's own frame is skipped, not the caller's), so calls through a
//! Sequential are not amplified here.

use rustc_hash::FxHashMap as HashMap;
use std::fmt;

use ruff_python_ast::{Expr, Stmt};

use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_function};
use crate::model::file::FileModel;
use crate::model::file::module::is_self;
use crate::model::flow::submodules;
/// Why a graph break at a site costs a whole frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InLoop {
    /// The break sits in a loop body of the function itself (named).
    Body(String),
    /// The break sits in a generator expression of the function itself (named).
    Generator(String),
    /// The function is called in a loop of another one (named).
    CalledInLoop(String),
    /// The function is a hook registered in a loop: on repeated blocks that `forward` runs in a loop.
    HookOnRepeatedModules,
}

impl fmt::Display for InLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InLoop::Body(frame) => write!(f, "it is inside a loop, so Dynamo runs all of `{frame}` eagerly"),
            InLoop::Generator(frame) => write!(
                f,
                "it is inside a generator expression, where Dynamo cannot resume after a break, so it runs all of \
                 `{frame}` eagerly"
            ),
            InLoop::CalledInLoop(frame) => {
                write!(f, "it runs in a loop in `{frame}`, so Dynamo runs all of `{frame}` eagerly")
            }
            InLoop::HookOnRepeatedModules => f.write_str(
                "the hook is registered on modules that run in a loop, so Dynamo runs all of the forward that loops eagerly",
            ),
        }
    }
}

/// The functions of a file that run inside a loop of a traced frame, each with the frames: a
/// helper two loops call (`get_cached_class_embeddings` and `get_cached_task_embeddings` both
/// looping over `_get_cache_key_at_index`) sends both eagerly. The first found is the one a
/// message names.
#[derive(Default)]
pub struct LoopCalls {
    frames_of: HashMap<usize, Vec<String>>,
}

impl LoopCalls {
    /// Calls in loops of region functions, then everything those callees call in turn.
    pub fn find(model: &FileModel) -> Self {
        let calls = |function: usize| resolve(model, function, &CalledNames::of(model, function));
        let mut frames_of: HashMap<usize, Vec<String>> = HashMap::default();
        let mut queue = Vec::new();
        for &function in model.region_functions() {
            for call in calls(function).into_iter().filter(|call| call.in_loop && call.callee != function) {
                let frame = &model.function(function).qualname;
                if add_frames(&mut frames_of, call.callee, std::slice::from_ref(frame)) {
                    queue.push(call.callee);
                }
            }
        }
        while let Some(caller) = queue.pop() {
            let frames = frames_of[&caller].clone();
            for call in calls(caller) {
                if add_frames(&mut frames_of, call.callee, &frames) {
                    queue.push(call.callee);
                }
            }
        }
        Self { frames_of }
    }

    /// Whether a graph break at `site` in `function` sits in a loop of a traced frame, and how.
    pub fn in_loop(&self, model: &FileModel, function: usize, site: Site) -> Option<InLoop> {
        if site.in_loop {
            return Some(InLoop::Body(model.function(function).qualname.clone()));
        }
        if site.in_generator {
            return Some(InLoop::Generator(model.function(function).qualname.clone()));
        }
        if let Some(frame) = self.frames_of.get(&function).and_then(|frames| frames.first()) {
            return Some(InLoop::CalledInLoop(frame.clone()));
        }
        let looped_hook = model.hooks_of(function).any(|hook| hook.in_loop);
        looped_hook.then_some(InLoop::HookOnRepeatedModules)
    }

    /// Every frame that runs `function` in one of its loops (directly or through what it calls).
    pub fn frames_running(&self, function: usize) -> &[String] {
        self.frames_of.get(&function).map_or(&[], Vec::as_slice)
    }
}

/// Adds `frames` to those running `function` in a loop; whether any was new.
fn add_frames(frames_of: &mut HashMap<usize, Vec<String>>, function: usize, frames: &[String]) -> bool {
    let known = frames_of.entry(function).or_default();
    let before = known.len();
    for frame in frames {
        if !known.contains(frame) {
            known.push(frame.clone());
        }
    }
    known.len() > before
}

/// A call from compiled code to a function of the same file.
struct Call {
    callee: usize,
    in_loop: bool,
}

/// What `function`'s compiled code calls in this file: methods on `self`, functions by name, and
/// the `forward` of blocks held in `self.<attr>` (directly, or in a container the loop walks).
fn resolve(model: &FileModel, function: usize, names: &CalledNames) -> Vec<Call> {
    let class = model.self_class(function);
    let mut calls = Vec::new();
    for (callee, in_loop) in &names.found {
        let functions: Vec<usize> = match callee {
            Callee::SelfAttribute(attr) => match class {
                Some(class) => match model.method(class, attr) {
                    Some(method) => vec![method],
                    None => submodules::forwards(model, class, attr),
                },
                None => Vec::new(),
            },
            Callee::Name(name) => model.resolve_name(name, Some(function)).into_iter().collect(),
        };
        calls.extend(functions.into_iter().map(|callee| Call { callee, in_loop: *in_loop }));
    }
    calls
}

enum Callee {
    /// `self.attr(...)`, `self.attr[i](...)`, or a loop variable over `self.attr`.
    SelfAttribute(String),
    Name(String),
}

/// What a function's compiled code calls, by the names it calls them (resolved by `LoopCalls`).
#[derive(Default)]
struct CalledNames {
    /// Loop variables bound to the items of `self.<attr>` (`for block in self.blocks`).
    loop_targets: HashMap<String, String>,
    /// Each call, and whether it sits in a loop.
    found: Vec<(Callee, bool)>,
}

impl CalledNames {
    fn of(model: &FileModel, function: usize) -> Self {
        let mut names = CalledNames::default();
        visit_function(model, function, &mut names);
        names
    }
}

impl<'a> CompiledCodeVisitor<'a> for CalledNames {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        match stmt {
            Stmt::For(for_stmt) => bind_items(&for_stmt.target, &for_stmt.iter, &mut self.loop_targets),
            // `layer = self.layers[i]`: the name holds one of the blocks.
            Stmt::Assign(assign) => {
                if let [Expr::Name(name)] = assign.targets.as_slice() {
                    match assign.value.as_ref() {
                        Expr::Subscript(subscript) => match self_attribute(&subscript.value) {
                            Some(attr) => self.loop_targets.insert(name.id.to_string(), attr),
                            None => self.loop_targets.remove(name.id.as_str()),
                        },
                        _ => self.loop_targets.remove(name.id.as_str()),
                    };
                }
            }
            _ => {}
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

/// Binds the loop variables that hold the items of a `self.<attr>` container:
/// `for block in self.blocks` (or `self.blocks[:n]`, `self.blocks.values()`, `reversed(...)`),
/// `for i, block in enumerate(...)`, `for name, block in self.blocks.items()`,
/// `for block, norm in zip(self.blocks, self.norms)`. Other loop variables are unbound.
fn bind_items(target: &Expr, iter: &Expr, bound: &mut HashMap<String, String>) {
    match target {
        Expr::Name(name) => {
            match self_container(iter) {
                Some(attr) => bound.insert(name.id.to_string(), attr),
                None => bound.remove(name.id.as_str()),
            };
        }
        Expr::Tuple(tuple) => {
            let items = items_of(iter);
            for (index, element) in tuple.elts.iter().enumerate() {
                match items.get(index).copied().flatten() {
                    Some(iter) => bind_items(element, iter, bound),
                    None => unbind(element, bound),
                }
            }
            // `for name, block in self.blocks.items()`
            if let ([_, Expr::Name(name)], Some(attr)) = (tuple.elts.as_slice(), dict_items(iter)) {
                bound.insert(name.id.to_string(), attr);
            }
        }
        _ => {}
    }
}

/// For a tuple target, the iterable each element walks: `enumerate(xs)` -> (none, xs),
/// `zip(xs, ys)` -> (xs, ys).
fn items_of(iter: &Expr) -> Vec<Option<&Expr>> {
    let Expr::Call(call) = iter else { return Vec::new() };
    let args = &call.arguments.args;
    match call.func.as_ref() {
        Expr::Name(name) if name.id.as_str() == "enumerate" => vec![None, args.first()],
        Expr::Name(name) if name.id.as_str() == "zip" => args.iter().map(Some).collect(),
        _ => Vec::new(),
    }
}

/// `self.blocks.items()` (an `nn.ModuleDict`): the attribute.
fn dict_items(iter: &Expr) -> Option<String> {
    let Expr::Call(call) = iter else { return None };
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    (method.attr.id.as_str() == "items" && call.arguments.is_empty()).then(|| self_attribute(&method.value)).flatten()
}

fn unbind(target: &Expr, bound: &mut HashMap<String, String>) {
    match target {
        Expr::Name(name) => {
            bound.remove(name.id.as_str());
        }
        Expr::Tuple(tuple) => tuple.elts.iter().for_each(|element| unbind(element, bound)),
        _ => {}
    }
}

/// `self.blocks`, `self.blocks[:n]`, `self.blocks.values()`, `reversed(self.blocks)`: the
/// attribute a loop walks.
fn self_container(iter: &Expr) -> Option<String> {
    match iter {
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Name(name) if name.id.as_str() == "reversed" => self_container(call.arguments.args.first()?),
            Expr::Attribute(method) if method.attr.id.as_str() == "values" && call.arguments.is_empty() => {
                self_attribute(&method.value)
            }
            _ => None,
        },
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
