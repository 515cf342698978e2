//! Checks that do nothing when their condition holds and raise with their message when it fails:
//! `torch._assert(condition, message)`, and functions of the project that assert or raise with
//! their message parameter (`def _assert(condition, message): assert condition, message`, timm's
//! fallback). Calling such a check only when the condition fails changes nothing, which makes
//! TCF209's fix (`if not (cond): check(False, f"...")`) Safe. Other files' checks are known
//! through the project index, re-exports included.
//!
//! The project's set holds a second kind of fact about its functions (`MessageFact`): which of
//! their parameters accept a message as a callable (`msg: str | Callable[[], str]`,
//! transformers' `torch_compilable_check`). The callee's own annotation is the evidence: TCF209
//! then passes the message as `lambda: f"..."`, built only when the callee calls it.

use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::message_facts::{MessageFact, MessageParameter};
use crate::model::file::module::is_docstring;
use crate::model::file::{FileModel, FunctionNode};

/// torch's own check: `assert condition, message`.
pub const TORCH_ASSERT: &str = "torch._assert";

/// The facts of the file's module-level names: the names that are such checks (bound to
/// `torch._assert`, `from torch import _assert`, and the file's own such functions), and its
/// module-level functions' parameters that accept a callable message.
pub fn own_message_checks(model: &FileModel) -> Vec<MessageFact> {
    let imported = model
        .imports
        .bindings()
        .filter(|(_, full)| *full == TORCH_ASSERT)
        .map(|(local, _)| MessageFact::Check(local.to_string()));
    let defined =
        model.functions.iter().filter(|function| function.class.is_none() && function.parent.is_none()).filter_map(
            |function| match function.node {
                FunctionNode::Def(def) if builds_message(def) => Some(MessageFact::Check(def.name.id.to_string())),
                _ => None,
            },
        );
    let module_level = model.functions.iter().filter(|function| function.class.is_none() && function.parent.is_none());
    let callable_messages = module_level.flat_map(|function| match function.node {
        FunctionNode::Def(def) => callable_messages(model, def),
        FunctionNode::Lambda(_) => Vec::new(),
    });
    let mut facts: Vec<MessageFact> = imported.chain(defined).chain(callable_messages).collect();
    facts.sort();
    facts.dedup();
    facts
}

/// Whether `func`, called, is such a check: `torch._assert`, or one of the project's.
pub fn is_message_check(model: &FileModel, func: &Expr) -> bool {
    let Some(qualified) = qualified_callee(model, func) else { return false };
    qualified == TORCH_ASSERT || knows(model, MessageFact::Check(qualified))
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
    let parameter = match slot {
        Slot::At(position) => MessageParameter::At(position),
        Slot::Named(name) => MessageParameter::Named(name.to_string()),
    };
    knows(model, MessageFact::CallableMessage(qualified, parameter))
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
fn knows(model: &FileModel, fact: MessageFact) -> bool {
    let answer = model.message_checks.contains(&fact);
    let mut asked = model.message_checks_asked.borrow_mut();
    if !asked.contains(&fact) {
        asked.push(fact);
    }
    answer
}

/// The facts of `def`'s parameters annotated to accept a callable that takes no argument: by
/// position (unless keyword-only) and by name (unless positional-only).
fn callable_messages(model: &FileModel, def: &ast::StmtFunctionDef) -> Vec<MessageFact> {
    let name = def.name.id.as_str();
    let parameters = &def.parameters;
    let positional = parameters.posonlyargs.iter().chain(&parameters.args).enumerate().map(|(at, p)| (Some(at), p));
    let by_position_only = parameters.posonlyargs.len();
    let mut facts = Vec::new();
    for (at, parameter) in positional.chain(parameters.kwonlyargs.iter().map(|p| (None, p))) {
        let Some(annotation) = parameter.parameter.annotation.as_deref() else { continue };
        if !accepts_callable(model, annotation) {
            continue;
        }
        if let Some(at) = at {
            facts.push(MessageFact::CallableMessage(name.to_string(), MessageParameter::At(at)));
        }
        if at.is_none_or(|at| at >= by_position_only) {
            let keyword = MessageParameter::Named(parameter.parameter.name.id.to_string());
            facts.push(MessageFact::CallableMessage(name.to_string(), keyword));
        }
    }
    facts
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
