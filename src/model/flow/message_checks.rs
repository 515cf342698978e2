//! Checks that do nothing when their condition holds and raise with their message when it fails:
//! `torch._assert(condition, message)`, and functions of the project that assert or raise with
//! their message parameter (`def _assert(condition, message): assert condition, message`, timm's
//! fallback). Calling such a check only when the condition fails changes nothing, which makes
//! TCF209's fix (`if not (cond): check(False, f"...")`) Safe. Other files' checks are known
//! through the project index, re-exports included.
//!
//! The same set holds a second kind of fact about the project's functions: which of their
//! parameters accept a message as a callable (`msg: str | Callable[[], str]`, transformers'
//! `torch_compilable_check`), keyed `callee(callable #1)` and `callee(callable msg)` (a name holds
//! no parenthesis). The callee's own annotation is the evidence: TCF209 then passes the message
//! as `lambda: f"..."`, built only when the callee calls it.

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::module::is_docstring;
use crate::model::file::{FileModel, FunctionNode};

/// torch's own check: `assert condition, message`.
pub const TORCH_ASSERT: &str = "torch._assert";

/// The file's module-level names that are such checks: names bound to
/// `torch._assert` (`from torch import _assert`) and the file's own such functions; and the keys
/// of its module-level functions' parameters that accept a callable message
/// (`callable_message_key`).
pub fn own_message_checks(model: &FileModel) -> Vec<String> {
    let imported =
        model.imports.bindings().filter(|(_, full)| *full == TORCH_ASSERT).map(|(local, _)| local.to_string());
    let defined =
        model.functions.iter().filter(|function| function.class.is_none() && function.parent.is_none()).filter_map(
            |function| match function.node {
                FunctionNode::Def(def) if builds_message(def) => Some(def.name.id.to_string()),
                _ => None,
            },
        );
    let module_level = model.functions.iter().filter(|function| function.class.is_none() && function.parent.is_none());
    let callable_messages = module_level.flat_map(|function| match function.node {
        FunctionNode::Def(def) => callable_message_keys(model, def),
        FunctionNode::Lambda(_) => Vec::new(),
    });
    let mut names: Vec<String> = imported.chain(defined).chain(callable_messages).collect();
    names.sort();
    names.dedup();
    names
}

/// Whether `func`, called, is such a check: `torch._assert`, or one of the project's.
pub fn is_message_check(model: &FileModel, func: &Expr) -> bool {
    let Some(qualified) = qualified_callee(model, func) else { return false };
    qualified == TORCH_ASSERT || knows(model, qualified)
}

/// Where a call passes an argument: its position among the positional arguments, or its keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot<'a> {
    At(usize),
    Named(&'a str),
}

/// Whether `func`, called with a message in `slot`, is a project function whose parameter there
/// is annotated to accept a callable (`msg: str | Callable[[], str]`): passing `lambda: message`
/// is what its signature offers. torch's own `torch._check*` take a callable too, but Dynamo
/// breaks the graph on a message lambda that closes over a traced value (torch 2.15: "Can't
/// convert torch._check*() message closure"), so they are not among them.
pub fn takes_callable_message(model: &FileModel, func: &Expr, slot: Slot) -> bool {
    let Some(qualified) = qualified_callee(model, func) else { return false };
    knows(model, callable_message_key(&qualified, slot))
}

/// The fact "`callee` takes a callable message in `slot`", as a key of the project's set.
fn callable_message_key(callee: &str, slot: Slot) -> String {
    match slot {
        Slot::At(position) => format!("{callee}(callable #{position})"),
        Slot::Named(name) => format!("{callee}(callable {name})"),
    }
}

/// The callee a call of `func` reaches, qualified: a name the file does not import is its own (or
/// a builtin, which is none of the project's).
fn qualified_callee(model: &FileModel, func: &Expr) -> Option<String> {
    match func {
        Expr::Name(name) if model.imports.get(name.id.as_str()).is_none() => {
            Some(format!("{}.{}", model.module_name, name.id))
        }
        _ => model.imports.qualified_name(func),
    }
}

/// Whether the project's set holds `fact`. The question is recorded on the model (once per
/// fact): the answer depends on other files.
fn knows(model: &FileModel, fact: String) -> bool {
    let answer = model.message_checks.contains(&fact);
    let mut asked = model.message_checks_asked.borrow_mut();
    if !asked.contains(&fact) {
        asked.push(fact);
    }
    answer
}

/// The keys of `def`'s parameters annotated to accept a callable that takes no argument: by
/// position (`#1`, unless keyword-only) and by name (unless positional-only).
fn callable_message_keys(model: &FileModel, def: &ast::StmtFunctionDef) -> Vec<String> {
    let name = def.name.id.as_str();
    let parameters = &def.parameters;
    let positional = parameters.posonlyargs.iter().chain(&parameters.args).enumerate().map(|(at, p)| (Some(at), p));
    let by_position_only = parameters.posonlyargs.len();
    let mut keys = Vec::new();
    for (at, parameter) in positional.chain(parameters.kwonlyargs.iter().map(|p| (None, p))) {
        let Some(annotation) = parameter.parameter.annotation.as_deref() else { continue };
        if !accepts_callable(model, annotation) {
            continue;
        }
        if let Some(at) = at {
            keys.push(callable_message_key(name, Slot::At(at)));
        }
        if at.is_none_or(|at| at >= by_position_only) {
            keys.push(callable_message_key(name, Slot::Named(parameter.parameter.name.id.as_str())));
        }
    }
    keys
}

/// Whether an annotation admits a callable that takes no argument: `Callable`, `Callable[[], T]`
/// or `Callable[..., T]` (from `typing` or `collections.abc`), alone, in a `|` union, in `Union[...]`
/// or in `Optional[...]`.
fn accepts_callable(model: &FileModel, annotation: &Expr) -> bool {
    let is_callable = |expr: &Expr| {
        (model.imports.qualified_name(expr).as_deref()).is_some_and(|name| {
            matches!(name, "typing.Callable" | "collections.abc.Callable" | "typing_extensions.Callable")
        })
    };
    let is_any_of = |expr: &Expr| {
        (model.imports.qualified_name(expr).as_deref()).is_some_and(|name| {
            matches!(
                name,
                "typing.Union" | "typing.Optional" | "typing_extensions.Union" | "typing_extensions.Optional"
            )
        })
    };
    match annotation {
        Expr::BinOp(union) if union.op == ast::Operator::BitOr => {
            accepts_callable(model, &union.left) || accepts_callable(model, &union.right)
        }
        Expr::Subscript(subscript) if is_callable(&subscript.value) => match subscript.slice.as_ref() {
            Expr::Tuple(arguments) => match arguments.elts.first() {
                Some(Expr::List(parameters)) => parameters.elts.is_empty(),
                Some(Expr::EllipsisLiteral(_)) => true,
                _ => false,
            },
            _ => false,
        },
        Expr::Subscript(subscript) if is_any_of(&subscript.value) => match subscript.slice.as_ref() {
            Expr::Tuple(members) => members.elts.iter().any(|member| accepts_callable(model, member)),
            member => accepts_callable(model, member),
        },
        other => is_callable(other),
    }
}

/// Whether `def` checks its first parameter and uses its second as the message, and does nothing
/// else: `assert condition, message`, or `if not condition: raise Error(message)` (a docstring
/// aside).
pub fn builds_message(def: &ast::StmtFunctionDef) -> bool {
    let parameters: Vec<&str> =
        def.parameters.iter_non_variadic_params().map(|p| p.parameter.name.id.as_str()).collect();
    let [condition, message, ..] = parameters.as_slice() else { return false };
    let is = |expr: &Expr, name: &str| matches!(expr, Expr::Name(n) if n.id.as_str() == name);
    let body: Vec<&Stmt> = def.body.iter().filter(|stmt| !is_docstring(stmt)).collect();
    match body.as_slice() {
        [Stmt::Assert(assert)] => {
            is(&assert.test, condition) && assert.msg.as_deref().is_some_and(|msg| is(msg, message))
        }
        [Stmt::If(check)] if check.elif_else_clauses.is_empty() => {
            let negated = matches!(check.test.as_ref(), Expr::UnaryOp(op) if op.op == ast::UnaryOp::Not && is(&op.operand, condition));
            let raises_message = matches!(check.body.as_slice(), [Stmt::Raise(ast::StmtRaise { exc: Some(exc), .. })]
                if matches!(exc.as_ref(), Expr::Call(call) if call.arguments.args.first().is_some_and(|arg| is(arg, message))));
            negated && raises_message
        }
        _ => false,
    }
}
