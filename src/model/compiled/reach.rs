//! Which functions run under torch.compile. Dynamo traces `forward` of every `nn.Module`,
//! registered forward hooks and `torch.compile`d functions, and inlines every project function
//! they reach: `self.method()`, functions of the same module, functions imported from the
//! project's own modules. Disabled functions are not traced, and nothing is reached through them.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use ruff_text_size::Ranged;

use ruff_python_ast::{Expr, ExprContext, Stmt};

use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_function};
use crate::model::file::call_graph::CallGraph;
use crate::model::file::dead_code::{DeadCode, DeadReason, off_unless_passed_elsewhere};
use crate::model::file::facts::Facts;
use crate::model::file::module::{is_entry_point, is_self};
use crate::model::file::{Accessor, FileModel, FunctionNode, Reason};
/// What a function refers to in its compiled code, resolved as far as one file allows.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Target {
    /// A function of the same file, by qualified name.
    Local(String),
    /// `self.name` not defined in the class itself: look in its bases (`class` is a qualname).
    InheritedMethod { class: String, name: String },
    /// A name imported from elsewhere (`models.utils.helper`).
    Imported(String),
}

/// The functions `function` may call from its compiled code.
pub fn targets(model: &FileModel, function: usize) -> Vec<Target> {
    let mut collector = ReferenceCollector { dead_code: Some(&model.dead_code), ..ReferenceCollector::default() };
    visit_function(model, function, &mut collector);
    let mut targets = Vec::new();
    for reference in collector.self_attributes {
        let Some(class) = model.self_class(function) else {
            continue;
        };
        match model.method(class, reference) {
            Some(method) => targets.push(Target::Local(model.function(method).qualname.clone())),
            None => targets.push(Target::InheritedMethod {
                class: model.classes[class].qualname.clone(),
                name: reference.to_string(),
            }),
        }
    }
    // `self(x)` runs the module's own `forward` (a compiled `generate` calling `self(idx)`).
    if let Some(class) = model.self_class(function)
        && calls_self(model, function)
    {
        match model.method(class, "forward") {
            Some(method) => targets.push(Target::Local(model.function(method).qualname.clone())),
            None => targets
                .push(Target::InheritedMethod { class: model.classes[class].qualname.clone(), name: "forward".into() }),
        }
    }
    // `self.x = v` runs a property setter `x.setter` (of the class or a base) where there is
    // one; `del self.x` its deleter.
    let accessor_targets = collector.self_stores.iter().map(|&attr| (attr, Accessor::Setter));
    let accessor_targets = accessor_targets.chain(collector.self_deletes.iter().map(|&attr| (attr, Accessor::Deleter)));
    for (attr, accessor) in accessor_targets {
        let Some(class) = model.self_class(function) else {
            continue;
        };
        let member = format!("{attr}.{}", accessor.as_str());
        match model.method(class, &member) {
            Some(method) => targets.push(Target::Local(model.function(method).qualname.clone())),
            // A class that defines `x` itself without this accessor does not use a base's.
            None if model.method(class, attr).is_some() => {}
            None => {
                targets.push(Target::InheritedMethod { class: model.classes[class].qualname.clone(), name: member })
            }
        }
    }
    for name in collector.names {
        if let Some(local) = model.resolve_name(name, Some(function)) {
            targets.push(Target::Local(model.function(local).qualname.clone()));
        } else if let Some(imported) = model.imports.get(name) {
            targets.push(Target::Imported(imported.to_string()));
        }
    }
    targets.sort();
    targets.dedup();
    targets
}

/// Whether the function's text calls `self(...)`: a word `self` right before `(`.
fn calls_self(model: &FileModel, function: usize) -> bool {
    let text = &model.source.text[model.function(function).node.range()];
    text.match_indices("self(").any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(|before| before.is_alphanumeric() || before == '_' || before == '.')
    })
}

/// Why each of the file's functions starts a compiled region on its own (before reachability).
pub fn root_reason(model: &FileModel, function: usize) -> Option<Reason> {
    let f = model.function(function);
    if f.compiled {
        return Some(Reason::Compiled);
    }
    if let Some(hook) = model.hooks_of(function).next() {
        return Some(Reason::Hook { pre: hook.pre });
    }
    let is_module_method = f.class.is_some_and(|class| {
        let class = &model.classes[class];
        class.is_module && !class.forward_replaced && !class.never_built && !class.outside_compile_scope
    });
    (is_module_method && is_entry_point(&f.name)).then_some(Reason::Forward)
}

/// Fill `model.region` from what the project index found reachable, minus the functions the
/// user disabled (their decorators are re-read from the current text).
pub fn mark_region(model: &mut FileModel, facts: &Facts) {
    for class in &mut model.classes {
        class.is_module = facts.module_classes.contains(&class.qualname);
        class.forward_replaced = facts.forward_replaced.contains(&class.qualname);
        class.never_built = facts.never_built.contains(&class.qualname);
        class.outside_compile_scope = facts.outside_compile_scope.contains(&class.qualname);
        class.imported_elsewhere = facts.imported_elsewhere.contains(&class.qualname);
        if class.never_built {
            model.dead_code.add(class.node.range(), DeadReason::NeverBuilt(class.qualname.clone()));
        }
    }
    let setters = std::mem::take(&mut model.uncalled_setters);
    for setter in &setters {
        if setter.names().any(|name| facts.named_elsewhere.contains(name)) {
            continue;
        }
        for &branch in &setter.branches {
            let reason = DeadReason::SetOnlyByUncalled(setter.attribute.clone(), setter.methods[0].clone());
            model.dead_code.add(branch, reason);
        }
    }
    model.uncalled_setters = setters;
    for (qualname, passed) in &facts.passed_from_elsewhere {
        let Some(function) = model.functions.iter().position(|f| &f.qualname == qualname) else { continue };
        let FunctionNode::Def(def) = model.function(function).node else { continue };
        for (range, reason) in off_unless_passed_elsewhere(def, passed) {
            model.dead_code.add(range, reason);
        }
    }
    model.imported_module_classes = facts.imported_module_classes.clone();
    model.imported_submodules = facts.imported_submodules.clone();
    model.called_from_other_files = facts.called_from_other_files.clone();
    model.named_elsewhere = facts.named_elsewhere.clone();
    model.state_attributes = Arc::clone(&facts.state_attributes);
    model.config_defaults = Arc::clone(&facts.config_defaults);
    model.captures = facts.captures.clone();
    model.project_lengths = Arc::clone(&facts.project_lengths);
    model.message_checks = Arc::clone(&facts.message_checks);
    // A decorator imported from another file (`@no_compile` re-exported by a package) disables
    // a function as `@torch.compiler.disable` would: it is no root either.
    for function in &mut model.functions {
        function.disabled |= facts.disabled.contains(&function.qualname);
    }
    for index in 0..model.functions.len() {
        let function = model.function(index);
        if function.disabled {
            continue;
        }
        let reason = facts.reached.get(&function.qualname).cloned().or_else(|| root_reason(model, index));
        if let Some(reason) = reason {
            model.region.insert(index, reason);
        }
    }
    // A fix disabled a function the index saw as compiled (`@torch.compiler.disable` on a hook):
    // what was reached only through it is no longer compiled.
    let newly_disabled = model.functions.iter().any(|f| f.disabled && facts.reached.contains_key(&f.qualname));
    if newly_disabled {
        keep_only_reachable(model);
    }
    model.index_region();
    let calls = CallGraph::build(model);
    model.set_calls(calls);
}

/// Drop from the region the functions no longer reached from a root or from another file.
fn keep_only_reachable(model: &mut FileModel) {
    // The first enabled function of each qualname: what a call by that name reaches.
    let mut enabled: HashMap<&str, usize> = HashMap::default();
    for (index, f) in model.functions.iter().enumerate().filter(|(_, f)| !f.disabled) {
        enabled.entry(f.qualname.as_str()).or_insert(index);
    }
    let local: HashSet<&str> = model.functions.iter().map(|f| f.qualname.as_str()).collect();
    let mut reachable: Vec<usize> = model
        .region
        .iter()
        .filter(|(_, reason)| !matches!(reason, Reason::CalledFrom(caller) if local.contains(caller.as_str())))
        .map(|(&function, _)| function)
        .collect();
    let mut seen: HashSet<usize> = reachable.iter().copied().collect();
    let mut next = 0;
    while next < reachable.len() {
        for target in targets(model, reachable[next]) {
            let Target::Local(qualname) = target else { continue };
            if let Some(&callee) = enabled.get(qualname.as_str())
                && seen.insert(callee)
            {
                reachable.push(callee);
            }
        }
        next += 1;
    }
    model.region.retain(|function, _| seen.contains(function));
}

/// The names a function's compiled code reads, each once (a body reads `self` and `x` hundreds
/// of times; only which names it reads matters).
#[derive(Default)]
struct ReferenceCollector<'a> {
    /// `self.x` read: a method or a property's getter.
    self_attributes: HashSet<&'a str>,
    /// `self.x = ...`, `self.x += ...`: a property's setter, if `x` is one (`+=` reads `x` through
    /// the getter first: it is in `self_attributes` too).
    self_stores: HashSet<&'a str>,
    /// `del self.x`: a property's deleter, if `x` is one.
    self_deletes: HashSet<&'a str>,
    names: HashSet<&'a str>,
    /// Calls in code that does not run on a normal compiled call reach nothing.
    dead_code: Option<&'a DeadCode>,
}

impl<'a> CompiledCodeVisitor<'a> for ReferenceCollector<'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        let Stmt::AugAssign(assign) = stmt else { return };
        if self.dead_code.is_some_and(|dead| dead.covering(stmt.range()).is_some()) {
            return;
        }
        if let Expr::Attribute(attr) = assign.target.as_ref()
            && is_self(&attr.value)
        {
            self.self_attributes.insert(attr.attr.id.as_str());
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if self.dead_code.is_some_and(|dead| dead.covering(expr.range()).is_some()) {
            return false;
        }
        match expr {
            Expr::Attribute(attr) if is_self(&attr.value) => {
                let name = attr.attr.id.as_str();
                match attr.ctx {
                    ExprContext::Load => self.self_attributes.insert(name),
                    ExprContext::Store => self.self_stores.insert(name),
                    ExprContext::Del => self.self_deletes.insert(name),
                    ExprContext::Invalid => false,
                };
            }
            Expr::Name(name) if name.ctx == ExprContext::Load => {
                self.names.insert(name.id.as_str());
            }
            _ => {}
        }
        true
    }
}

/// How a message names where a hazard sits: "`VLM.forward`", "`VLM._merge` (called from
/// `VLM.forward`)", "hook `setup.<locals>.hook`".
pub fn describe(model: &FileModel, function: usize) -> String {
    let f = model.function(function);
    let qualname = match f.node {
        FunctionNode::Lambda(lambda) => format!("lambda on line {}", model.source.line_column(lambda.start()).0),
        FunctionNode::Def(_) => format!("`{}`", f.qualname),
    };
    match model.region.get(&function) {
        Some(Reason::Hook { pre: false }) => format!("forward hook {qualname}"),
        Some(Reason::Hook { pre: true }) => format!("forward pre-hook {qualname}"),
        Some(Reason::CalledFrom(caller)) => format!("{qualname} (called from `{caller}`)"),
        _ => qualname,
    }
}
