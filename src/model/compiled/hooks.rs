//! Forward hooks and compiled functions: which of the file's functions Dynamo traces because
//! they were registered with `register_forward_hook` / `register_forward_pre_hook` or passed to
//! `torch.compile(fn)`.

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::imports::{Imports, last_segment};
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, Function, FunctionNode, Hook};
/// A call seen while collecting scopes, resolved once every function is known.
pub struct PendingCall<'a> {
    call: &'a ast::ExprCall,
    kind: PendingKind,
    /// The function the call sits in (`None` at module level).
    scope: Option<usize>,
    in_loop: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PendingKind {
    HookRegistration,
    Compile,
}

const HOOK_METHODS: [&str; 4] = [
    "register_forward_hook",
    "register_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
];

impl<'a> PendingCall<'a> {
    pub fn classify(call: &'a ast::ExprCall, scope: Option<usize>, in_loop: bool, imports: &Imports) -> Option<Self> {
        let kind = if last_segment(&call.func).is_some_and(|name| HOOK_METHODS.contains(&name)) {
            PendingKind::HookRegistration
        } else if imports.refers_to(&call.func, "torch.compile") {
            PendingKind::Compile
        } else {
            return None;
        };
        Some(Self { call, kind, scope, in_loop })
    }
}

/// The callable a registration or `torch.compile` call is given.
fn callable_argument(call: &ast::ExprCall, kind: PendingKind) -> Option<&Expr> {
    let keyword = match kind {
        PendingKind::HookRegistration => "hook",
        PendingKind::Compile => "model",
    };
    call.arguments.args.first().or_else(|| call.arguments.find_keyword(keyword).map(|k| &k.value))
}

pub fn resolve<'a>(model: &mut FileModel<'a>, pending: PendingCall<'a>) {
    let Some(argument) = callable_argument(pending.call, pending.kind) else {
        return;
    };
    let Some((function, bound_args)) = resolve_callable(model, argument, pending.scope) else {
        return;
    };
    match pending.kind {
        PendingKind::HookRegistration => {
            let pre = last_segment(&pending.call.func).is_some_and(|name| name.ends_with("pre_hook"));
            let in_loop = pending.in_loop;
            let registered_in = pending.scope;
            model.add_hook(Hook { registration: pending.call, function, bound_args, pre, in_loop, registered_in });
        }
        PendingKind::Compile => model.functions[function].compiled = true,
    }
}

/// Which of the file's functions `expr` evaluates to, and how many leading arguments
/// `functools.partial` binds.
fn resolve_callable<'a>(model: &mut FileModel<'a>, expr: &'a Expr, scope: Option<usize>) -> Option<(usize, usize)> {
    match expr {
        Expr::Name(name) => Some((model.resolve_name(name.id.as_str(), scope)?, 0)),
        Expr::Lambda(lambda) => Some((add_lambda(model, lambda, scope), 0)),
        Expr::Attribute(attr) if is_self(&attr.value) => {
            let class = model.self_class(scope?)?;
            Some((model.method(class, attr.attr.id.as_str())?, 0))
        }
        Expr::Call(call) if is_partial(model, &call.func) => {
            let (target, rest) = call.arguments.args.split_first()?;
            let (function, bound) = resolve_callable(model, target, scope)?;
            Some((function, bound + rest.len()))
        }
        // A hook factory: `register_forward_hook(make_hook(name))` where `make_hook` returns
        // a def nested in it.
        Expr::Call(call) => {
            let Expr::Name(name) = call.func.as_ref() else {
                return None;
            };
            let factory = model.resolve_name(name.id.as_str(), scope)?;
            Some((returned_inner_def(model, factory)?, 0))
        }
        _ => None,
    }
}

fn is_partial(model: &FileModel, func: &Expr) -> bool {
    model.imports.refers_to(func, "functools.partial")
}

fn add_lambda<'a>(model: &mut FileModel<'a>, lambda: &'a ast::ExprLambda, scope: Option<usize>) -> usize {
    let prefix = scope.map(|f| format!("{}.<locals>.", model.function(f).qualname)).unwrap_or_default();
    let ordinal = model.lambda_count();
    model.add_function(Function {
        qualname: format!("{prefix}<lambda#{ordinal}>"),
        name: "<lambda>".to_string(),
        node: FunctionNode::Lambda(lambda),
        class: None,
        parent: scope,
        disabled: false,
        accessor: None,
        imported_decorators: Vec::new(),
        compiled: false,
    })
}

/// The nested def that `factory` returns by name, if it returns one.
fn returned_inner_def(model: &FileModel, factory: usize) -> Option<usize> {
    let FunctionNode::Def(def) = model.function(factory).node else {
        return None;
    };
    def.body.iter().rev().find_map(|stmt| match stmt {
        Stmt::Return(ast::StmtReturn { value: Some(value), .. }) => match value.as_ref() {
            Expr::Name(name) => model.resolve_name(name.id.as_str(), Some(factory)),
            _ => None,
        },
        _ => None,
    })
}

/// How a hook comes to run on many modules, blocks that forward usually calls in a loop: a graph
/// break in such a hook is a graph break in that loop, which makes Dynamo run the whole forward
/// eagerly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnRepeatedModules {
    /// Registered in a loop or comprehension (`for blk in model.blocks: blk.register_...`).
    RegisteredInLoop,
    /// Registered on an element of a module container (`model.blocks[0]`, `model.layers[-1].mlp`,
    /// `model.get_submodule("layers.3")`): a `ModuleList` forward loops over (measured with torch
    /// 2.15, a disabled hook on `blocks[-1]` sends forward to eager), or an `nn.Sequential`, whose
    /// own forward is a loop (there the break splits the graph: 3 graphs instead of 1).
    ContainerElement,
    /// Registered by a function that `Module.apply(...)` runs on every submodule.
    EveryModuleByApply,
    /// Registered by a function of the file that the file calls in a loop (`for name, mod in
    /// model.named_modules(): self.add_hooks(mod)`), directly or through the functions calling it.
    ByCallInLoop,
    /// `register_module_forward_hook`: a global hook, run for every module of every model.
    Global,
}

impl OnRepeatedModules {
    /// Where the hook is registered, in the words of a fix title.
    pub fn describe(self) -> &'static str {
        match self {
            Self::RegisteredInLoop => {
                "registered in a loop, the hook likely sits on blocks that forward calls in a loop"
            }
            Self::ContainerElement => {
                "registered on an element of a module container, the hook sits on a block that forward likely calls in a loop"
            }
            Self::EveryModuleByApply => {
                "registered on every submodule through `Module.apply`, the hook sits on blocks that forward calls in a loop"
            }
            Self::ByCallInLoop => {
                "registered by a function called in a loop, the hook likely sits on blocks that forward calls in a loop"
            }
            Self::Global => "registered for every module, the hook runs on blocks that forward calls in a loop",
        }
    }
}

/// Whether `hook` runs on modules that forward likely calls in a loop, and how it comes to.
pub fn on_repeated_modules(model: &FileModel, hook: &Hook) -> Option<OnRepeatedModules> {
    let registration = hook.registration;
    if hook.in_loop {
        return Some(OnRepeatedModules::RegisteredInLoop);
    }
    if last_segment(&registration.func).is_some_and(|name| name.starts_with("register_module_")) {
        return Some(OnRepeatedModules::Global);
    }
    let Expr::Attribute(method) = registration.func.as_ref() else { return None };
    if let Some(container) = container_of(&method.value) {
        // A container this file builds and never loops over (forward calls `self.blocks[0]`,
        // `self.blocks[1]`... one by one) holds blocks that run once each.
        if container.is_none_or(|attribute| container_looped(model.source.parsed.suite(), attribute) != Some(false)) {
            return Some(OnRepeatedModules::ContainerElement);
        }
    }
    let registering = hook.registered_in?;
    let name = model.function(registering).name.as_str();
    let own_calls = model.own_calls();
    if own_calls.applied_to_every_module(name) {
        return Some(OnRepeatedModules::EveryModuleByApply);
    }
    // Measured under torch 2.15 (a helper registering the hook, called in a loop over
    // `named_modules()`): `torch.compiler.disable` on that hook left forward no graph holding
    // its layers, where without it forward was one graph of 52 ops.
    own_calls.called_in_loop(registering).then_some(OnRepeatedModules::ByCallInLoop)
}

/// For a module reached through an index of a container (`model.blocks[0]`,
/// `model.layers[-1].mlp`, `model.get_submodule("encoder.layer.3")`, `modules["layers.3"]`): the
/// container's attribute name where it is written (`blocks`, `layer`), `Some(None)` where it is
/// not. `None` for anything else: a name key (`model.heads["cls"]`, a `ModuleDict`) is one module.
fn container_of(receiver: &Expr) -> Option<Option<&str>> {
    /// `encoder.layer.3` -> `Some(Some("layer"))`; a path without an index -> `None`.
    fn indexed_path(path: &str) -> Option<Option<&str>> {
        let parts: Vec<&str> = path.split('.').collect();
        let index = parts.iter().position(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))?;
        Some(index.checked_sub(1).map(|container| parts[container]))
    }
    match receiver {
        Expr::Subscript(subscript) => {
            let indexed = match subscript.slice.as_ref() {
                Expr::StringLiteral(path) => indexed_path(path.value.to_str()),
                _ => Some(last_segment(&subscript.value).filter(|_| matches!(*subscript.value, Expr::Attribute(_)))),
            };
            indexed.or_else(|| container_of(&subscript.value))
        }
        Expr::Attribute(attr) => container_of(&attr.value),
        Expr::Call(call) if last_segment(&call.func) == Some("get_submodule") => match call.arguments.args.first() {
            Some(Expr::StringLiteral(path)) => indexed_path(path.value.to_str()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the file runs the blocks of the container `self.<attribute>` in a loop: a `for` loop or
/// comprehension over it (`for blk in self.blocks`, `enumerate(self.layers)`,
/// `range(len(self.layers))`), or an `nn.Sequential` (whose forward is a loop). `Some(false)`
/// when the file assigns the container but never loops over it, `None` when it does not assign it.
fn container_looped(suite: &[Stmt], attribute: &str) -> Option<bool> {
    use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
    struct Uses<'n> {
        attribute: &'n str,
        assigned: bool,
        looped: bool,
    }
    impl Uses<'_> {
        fn mentions(&self, expr: &Expr) -> bool {
            struct Mention<'n>(&'n str, bool);
            impl<'a> Visitor<'a> for Mention<'_> {
                fn visit_expr(&mut self, expr: &'a Expr) {
                    if matches!(expr, Expr::Attribute(attr) if attr.attr.id.as_str() == self.0) {
                        self.1 = true;
                    }
                    walk_expr(self, expr);
                }
            }
            let mut mention = Mention(self.attribute, false);
            mention.visit_expr(expr);
            mention.1
        }
    }
    impl<'a> Visitor<'a> for Uses<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::For(for_stmt) => self.looped |= self.mentions(&for_stmt.iter),
                Stmt::Assign(assign) => {
                    let this = |target: &Expr| matches!(target, Expr::Attribute(attr) if is_self(&attr.value) && attr.attr.id.as_str() == self.attribute);
                    if assign.targets.iter().any(this) {
                        self.assigned = true;
                        let sequential = matches!(assign.value.as_ref(), Expr::Call(call)
                            if last_segment(&call.func) == Some("Sequential"));
                        self.looped |= sequential;
                    }
                }
                _ => {}
            }
            walk_stmt(self, stmt);
        }
        fn visit_comprehension(&mut self, comprehension: &'a ast::Comprehension) {
            self.looped |= self.mentions(&comprehension.iter);
            ruff_python_ast::visitor::walk_comprehension(self, comprehension);
        }
    }
    let mut uses = Uses { attribute, assigned: false, looped: false };
    uses.visit_body(suite);
    if uses.looped { Some(true) } else { uses.assigned.then_some(false) }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{OnRepeatedModules, on_repeated_modules};
    use crate::model::file::FileModel;
    use crate::source::SourceFile;

    /// Where each hook of the text runs, by the hook function's name.
    fn repeated(text: &str) -> Vec<(String, Option<OnRepeatedModules>)> {
        let source = SourceFile::parse(Path::new("t.py"), text.to_string()).unwrap();
        let model = FileModel::build(&source, "t");
        let mut found: Vec<_> = model
            .hooks
            .iter()
            .map(|hook| (model.function(hook.function).name.clone(), on_repeated_modules(&model, hook)))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    #[test]
    fn hooks_on_blocks_that_forward_loops_over() {
        let text = "import torch
from torch import nn

def h_loop(m, i, o): return o
def h_last(m, i, o): return o
def h_path(m, i, o): return o
def h_head(m, i, o): return o
def h_named(m, i, o): return o
def h_global(m, i, o): return o

def attach(model):
    for block in model.blocks:
        block.register_forward_hook(h_loop)
    model.blocks[-1].register_forward_hook(h_last)
    model.get_submodule('encoder.layer.3').register_forward_hook(h_path)
    model.head.register_forward_hook(h_head)
    model.heads['cls'].register_forward_hook(h_named)
    nn.modules.module.register_module_forward_hook(h_global)
";
        use OnRepeatedModules::*;
        let want = [
            ("h_global", Some(Global)),
            ("h_head", None),
            ("h_last", Some(ContainerElement)),
            ("h_loop", Some(RegisteredInLoop)),
            ("h_named", None),
            ("h_path", Some(ContainerElement)),
        ];
        let got = repeated(text);
        assert_eq!(got, want.map(|(name, where_)| (name.to_string(), where_)));
    }

    #[test]
    fn a_container_the_file_builds_but_never_loops_over_holds_single_blocks() {
        let unrolled = "from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
        self.blocks[-1].register_forward_hook(self.hook)

    def hook(self, m, i, o):
        return o

    def forward(self, x):
        return self.blocks[1](self.blocks[0](x))
";
        assert_eq!(repeated(unrolled), [("hook".to_string(), None)]);
        let looped = unrolled.replace(
            "return self.blocks[1](self.blocks[0](x))",
            "for b in self.blocks:\n            x = b(x)\n        return x",
        );
        assert_eq!(repeated(&looped), [("hook".to_string(), Some(OnRepeatedModules::ContainerElement))]);
        let sequential =
            unrolled.replace("nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])", "nn.Sequential(nn.Linear(2, 2))");
        assert_eq!(repeated(&sequential), [("hook".to_string(), Some(OnRepeatedModules::ContainerElement))]);
    }

    #[test]
    fn a_hook_registered_by_a_function_module_apply_runs() {
        let text = "class Watch:
    def __init__(self, model):
        self.model = model
        self.model.apply(self._register)

    def _register(self, module):
        module.register_forward_hook(self.record)

    def record(self, m, i, o):
        return o
";
        assert_eq!(repeated(text), [("record".to_string(), Some(OnRepeatedModules::EveryModuleByApply))]);
    }

    #[test]
    fn a_hook_registered_by_a_function_called_in_a_loop() {
        let text = "class Watch:
    def __init__(self, model):
        for name, mod in model.named_modules():
            self.attach(mod)

    def attach(self, module):
        self.register(module)

    def register(self, module):
        module.register_forward_hook(self.record)

    def record(self, m, i, o):
        return o
";
        assert_eq!(repeated(text), [("record".to_string(), Some(OnRepeatedModules::ByCallInLoop))]);
        let comprehension = "def attach(module):
    return module.register_forward_hook(record)

def record(m, i, o):
    return o

def watch(model):
    return [attach(m) for m in model.modules()]
";
        assert_eq!(repeated(comprehension), [("record".to_string(), Some(OnRepeatedModules::ByCallInLoop))]);
        // Called once, outside any loop: one module.
        let once =
            text.replace("for name, mod in model.named_modules():\n            self.attach(mod)", "self.attach(model)");
        assert_eq!(repeated(&once), [("record".to_string(), None)]);
    }
}
