//! Which module-level functions may build a project module (`self.mlp = make_mlp(dim)`): the
//! compile map cannot see into what they return. A function that calls nothing of the project's
//! (`_replace_submodules(self.backbone, predicate, func)` only calls its parameters, builtins and
//! torch; `as_dtype(name)` only looks a name up) returns what its caller gave it, or no module.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::{FileModel, FunctionNode};

/// What a module-level function may return of the project's modules.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Builds {
    /// No project module: it calls nothing of the project's, or its annotation says so.
    Nothing,
    /// An instance of one of these classes or of a subclass (`-> BaseActionSpace` over a
    /// registry's entries, `return DDIMScheduler(**kwargs)`), or what these functions return
    /// (`return rope_table(end, dim)`: one of the file's or an imported one), by their
    /// qualified names.
    Returns { classes: Vec<String>, functions: Vec<String> },
    /// Anything.
    Unknown,
}

/// What the file's function may return of the project's modules. Methods and nested functions
/// are no builders a class calls by name.
pub fn builds(model: &FileModel, function: usize) -> Builds {
    let f = model.function(function);
    let FunctionNode::Def(def) = f.node else { return Builds::Nothing };
    if f.parent.is_some() || f.class.is_some() {
        return Builds::Nothing;
    }
    if let Some(returns) = def.returns.as_deref() {
        if returns_no_module(model, returns) {
            return Builds::Nothing;
        }
        if let Some(class) = annotated_class(model, returns) {
            return Builds::Returns { classes: vec![class], functions: Vec::new() };
        }
    }
    if let Some((classes, functions)) = returned_calls(model, def) {
        if classes.is_empty() && functions.is_empty() {
            return Builds::Nothing;
        }
        return Builds::Returns { classes, functions };
    }
    let parameters = def.parameters.iter().map(|p| p.name().as_str()).collect();
    let mut calls = ProjectCalls { model, own: &f.name, parameters, found: false };
    calls.visit_body(&def.body);
    if calls.found { Builds::Unknown } else { Builds::Nothing }
}

/// The classes and functions the function calls in its `return`s, when each returns such a
/// call, `None`, or what the caller gave it (a parameter, or a parameter's call: `func(module)`).
fn returned_calls(model: &FileModel, def: &ast::StmtFunctionDef) -> Option<(Vec<String>, Vec<String>)> {
    let parameters: Vec<&str> = def.parameters.iter().map(|p| p.name().as_str()).collect();
    let from_caller = |expr: &Expr| matches!(expr, Expr::Name(name) if parameters.contains(&name.id.as_str()));
    let mut returns = Returns { values: Vec::new() };
    returns.visit_body(&def.body);
    let (mut classes, mut functions) = (Vec::new(), Vec::new());
    for value in returns.values {
        match value {
            None | Some(Expr::NoneLiteral(_)) => {}
            Some(value) if from_caller(value) => {}
            Some(Expr::Call(call)) if from_caller(&call.func) => {}
            Some(Expr::Call(call)) => {
                let qualified = model.imports.qualified_name(&call.func)?;
                let last = qualified.rsplit('.').next()?;
                if last.starts_with(char::is_uppercase) {
                    // `nn.Sequential(nn.Linear(d, d), Gate())`: what the container holds too.
                    classes.extend(classes_called(model, &call.arguments));
                    classes.push(qualified);
                } else if qualified.starts_with("torch.") || returns_scalar(&qualified) {
                    // `torch.polar(...)`, `len(...)`: a tensor or a number.
                } else if model.imports.get(chain_head(&call.func)?).is_some()
                    || model.resolve_name(&qualified, None).is_some()
                {
                    functions.push(qualified);
                } else {
                    // `cls(**kwargs)` of a local name, `list(layers)`, `self.build()`: a value
                    // tcfix cannot name.
                    // `self.build()`, `x.to(...)`: a method of something tcfix cannot name.
                    return None;
                }
            }
            Some(_) => return None,
        }
    }
    Some((classes, functions))
}

/// The classes called in a call's arguments (`Gate()` in `nn.Sequential(..., Gate())`).
fn classes_called(model: &FileModel, arguments: &ast::Arguments) -> Vec<String> {
    let mut calls = ClassCalls { model, found: Vec::new() };
    calls.visit_arguments(arguments);
    calls.found
}

struct ClassCalls<'m, 'a> {
    model: &'m FileModel<'a>,
    found: Vec<String>,
}

impl<'a> Visitor<'a> for ClassCalls<'_, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Some(qualified) = self.model.imports.qualified_name(&call.func)
            && qualified.rsplit('.').next().is_some_and(|last| last.starts_with(char::is_uppercase))
        {
            self.found.push(qualified);
        }
        walk_expr(self, expr);
    }
}

/// The values of a function's `return`s, outside nested functions.
struct Returns<'a> {
    values: Vec<Option<&'a Expr>>,
}

impl<'a> Visitor<'a> for Returns<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Return(ret) => self.values.push(ret.value.as_deref()),
            _ => walk_stmt(self, stmt),
        }
    }
}

/// `-> BaseActionSpace`, `-> "layers.Block"`: one class, not torch's (`nn.Module` says nothing).
fn annotated_class(model: &FileModel, returns: &Expr) -> Option<String> {
    let qualified = match returns {
        Expr::Name(_) | Expr::Attribute(_) => model.imports.qualified_name(returns)?,
        _ => return None,
    };
    let last = qualified.rsplit('.').next()?;
    (last.starts_with(char::is_uppercase) && !qualified.starts_with("torch.") && !qualified.starts_with("typing."))
        .then_some(qualified)
}

/// Finds a call that may build a project module: of anything but torch, a parameter (what the
/// caller gave) or a builtin that returns a number (`len`): the file's functions and classes,
/// imports, a registry's entry (`MODELS[name](...)`), a parameter's attribute (`cfg.gate_cls()`).
struct ProjectCalls<'m, 'a> {
    model: &'m FileModel<'a>,
    own: &'m str,
    parameters: Vec<&'a str>,
    found: bool,
}

impl ProjectCalls<'_, '_> {
    fn may_build(&self, func: &Expr) -> bool {
        let head = match func {
            // `REGISTRY[name](...)`, `getattr(gates, kind)()`: a callee looked up at run time.
            Expr::Subscript(_) | Expr::Call(_) => return true,
            Expr::Name(name) => name.id.as_str(),
            Expr::Attribute(attribute) => match chain_head(&attribute.value) {
                // `cfg.gate_cls()`: a class the caller's value names.
                Some(head) if self.parameters.contains(&head) => return true,
                Some(head) => head,
                None => return false,
            },
            _ => return false,
        };
        if let Some(imported) = self.model.imports.get(head) {
            return !imported.starts_with("torch");
        }
        if head == self.own || returns_scalar(head) {
            return false;
        }
        // A parameter's call is what the caller gave; any other name (the file's function or
        // class, a local `cls = REGISTRY[name]`, a builtin like `list`) may build a module.
        !(matches!(func, Expr::Name(_)) && self.parameters.contains(&head))
    }
}

impl<'a> Visitor<'a> for ProjectCalls<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // What a `raise` builds is an exception, not what the function returns.
        if !self.found && !matches!(stmt, Stmt::Raise(_)) {
            walk_stmt(self, stmt);
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && self.may_build(&call.func)
        {
            self.found = true;
        }
        walk_expr(self, expr);
    }
}

/// `-> str | None`, `-> tuple[int, int]`, `-> torch.dtype`: an annotation whose every type is a
/// builtin scalar or one of torch's value types, maybe in containers or typing wrappers.
fn returns_no_module(model: &FileModel, returns: &Expr) -> bool {
    match returns {
        Expr::NoneLiteral(_) => true,
        Expr::BinOp(union) => returns_no_module(model, &union.left) && returns_no_module(model, &union.right),
        // `tuple[int, int]`, `Optional[str]`: a container or wrapper of such types (a bare
        // `list` may hold modules).
        Expr::Subscript(generic) => {
            model.imports.qualified_name(&generic.value).is_some_and(|name| is_container(&name))
                && returns_no_module(model, &generic.slice)
        }
        Expr::Tuple(tuple) => tuple.elts.iter().all(|element| returns_no_module(model, element)),
        Expr::Name(_) | Expr::Attribute(_) => model.imports.qualified_name(returns).is_some_and(|name| {
            matches!(
                name.as_str(),
                "str"
                    | "int"
                    | "float"
                    | "bool"
                    | "bytes"
                    | "torch.dtype"
                    | "torch.device"
                    | "torch.Tensor"
                    | "torch.Size"
                    | "numpy.ndarray"
            )
        }),
        _ => false,
    }
}

/// Builtins that return a number, a string or a truth value, never a module.
fn returns_scalar(name: &str) -> bool {
    matches!(
        name,
        "len"
            | "int"
            | "float"
            | "str"
            | "bool"
            | "abs"
            | "round"
            | "isinstance"
            | "issubclass"
            | "hasattr"
            | "repr"
            | "format"
            | "hash"
            | "id"
            | "print"
    )
}

fn is_container(name: &str) -> bool {
    matches!(
        name,
        "list"
            | "tuple"
            | "dict"
            | "set"
            | "frozenset"
            | "typing.Optional"
            | "typing.Union"
            | "typing.List"
            | "typing.Tuple"
            | "typing.Dict"
    )
}

fn chain_head(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attribute) => chain_head(&attribute.value),
        _ => None,
    }
}
