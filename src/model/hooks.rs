//! Forward hooks and compiled functions: which of the file's functions Dynamo traces because
//! they were registered with `register_forward_hook` / `register_forward_pre_hook` or passed to
//! `torch.compile(fn)`.

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::{FileModel, Function, FunctionNode, Hook};
use crate::model::imports::{Imports, last_segment};
use crate::model::module::is_self;

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
fn callable_argument<'a>(call: &'a ast::ExprCall, kind: PendingKind) -> Option<&'a Expr> {
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
            model.add_hook(Hook { registration: pending.call, function, bound_args, pre, in_loop });
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
