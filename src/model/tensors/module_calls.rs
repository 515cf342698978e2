//! What the file's own calls of a module pass to its `forward`: `self.y_embedder(y,
//! self.training)` where `__init__` built `self.y_embedder = LabelEmbedder(...)`. A parameter that
//! every such call fills with a Python value (a literal, `self.training`) is no tensor input,
//! whatever its name. Only for a class the file builds nowhere else and no other file imports:
//! then these calls are all the calls there are. Found in one walk for the whole file (a file
//! can hold thousands of module classes: asking per class would be quadratic).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, UnaryOp};

use crate::model::file::module::is_self;
use crate::model::file::{FileModel, FunctionNode, self_assignments};

/// By class (its index in the file): the `forward` parameters every call of the file fills with
/// a Python value.
pub struct ModuleCalls {
    python: HashMap<usize, HashSet<String>>,
}

impl ModuleCalls {
    pub fn find(model: &FileModel) -> Self {
        let by_name: HashMap<&str, usize> = (model.classes.iter().enumerate())
            .filter(|(class, _)| model.method(*class, "forward").is_some())
            .map(|(class, info)| (info.node.name.id.as_str(), class))
            .collect();
        // (holder, attr) -> the class built into `self.<attr>`, and how many places build each.
        let mut held: HashMap<(usize, &str), usize> = HashMap::default();
        let mut built_at: HashMap<usize, usize> = HashMap::default();
        for holder in 0..model.classes.len() {
            for assignment in self_assignments(model, holder) {
                if let Some(Expr::Call(call)) = assignment.value()
                    && let Expr::Name(name) = call.func.as_ref()
                    && let Some(&class) = by_name.get(name.id.as_str())
                {
                    held.insert((holder, assignment.attr.as_str()), class);
                    *built_at.entry(class).or_default() += 1;
                }
            }
        }
        let mut calls = Calls { held: &held, holder: 0, found: HashMap::default() };
        for &(holder, _) in held.keys().collect::<HashSet<_>>() {
            calls.holder = holder;
            for &method in model.methods_of(holder) {
                if let FunctionNode::Def(def) = model.function(method).node {
                    calls.visit_body(&def.body);
                }
            }
        }
        let named = names_counted(model, &by_name);
        let mut python = HashMap::default();
        for (class, sites) in calls.found {
            // The code names the class only at its `class` line and where holders build it: the
            // calls through its holders' attributes are all the file's calls.
            if named.get(&class) != Some(&(built_at[&class] + 1)) {
                continue;
            }
            let Some(FunctionNode::Def(forward)) = model.method(class, "forward").map(|f| model.function(f).node)
            else {
                continue;
            };
            python.insert(class, filled_with_python(forward, &sites));
        }
        ModuleCalls { python }
    }

    /// The parameters of `class`'s `forward` that every call of the file fills with a Python
    /// value; none for a class another file imports (and may call otherwise).
    pub fn python_inputs(&self, model: &FileModel, class: usize) -> Option<&HashSet<String>> {
        if model.classes[class].imported_elsewhere {
            return None;
        }
        self.python.get(&class)
    }
}

/// How often the code names each class (`Expr::Name`, plus its own `class` statement), counted
/// in one walk: a docstring or comment that mentions it builds nothing.
fn names_counted(model: &FileModel, by_name: &HashMap<&str, usize>) -> HashMap<usize, usize> {
    struct Names<'n> {
        by_name: &'n HashMap<&'n str, usize>,
        counted: HashMap<usize, usize>,
    }
    impl<'a> Visitor<'a> for Names<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr
                && let Some(&class) = self.by_name.get(name.id.as_str())
            {
                *self.counted.entry(class).or_default() += 1;
            }
            walk_expr(self, expr);
        }
    }
    let mut names = Names { by_name, counted: by_name.values().map(|&class| (class, 1)).collect() };
    names.visit_body(model.source.parsed.suite());
    names.counted
}

/// The positional parameters (past `self`) that every call fills with a Python value.
fn filled_with_python(forward: &ast::StmtFunctionDef, sites: &[&ast::ExprCall]) -> HashSet<String> {
    let parameters = &forward.parameters;
    let positional: Vec<&str> =
        parameters.posonlyargs.iter().chain(&parameters.args).skip(1).map(|p| p.parameter.name.id.as_str()).collect();
    let mut python = HashSet::default();
    for (at, &name) in positional.iter().enumerate() {
        let passed = |call: &&ast::ExprCall| -> Option<bool> {
            if call.arguments.args.iter().any(Expr::is_starred_expr) {
                return None;
            }
            let keyword =
                call.arguments.keywords.iter().find(|k| k.arg.as_ref().is_some_and(|arg| arg.as_str() == name));
            let value = call.arguments.args.get(at).or(keyword.map(|k| &k.value))?;
            Some(is_python_value(value))
        };
        if !sites.is_empty() && sites.iter().all(|call| passed(call) == Some(true)) {
            python.insert(name.to_string());
        }
    }
    python
}

/// `True`, `0.5`, `"bilinear"`, `self.training`, `not self.training`: a Python value whatever the
/// callee's parameter is called.
fn is_python_value(value: &Expr) -> bool {
    match value {
        Expr::BooleanLiteral(_) | Expr::NumberLiteral(_) | Expr::StringLiteral(_) => true,
        Expr::Attribute(attr) => is_self(&attr.value) && attr.attr.id.as_str() == "training",
        Expr::UnaryOp(op) => op.op == UnaryOp::Not && is_python_value(&op.operand),
        _ => false,
    }
}

/// The calls `self.<attr>(...)` in one holder's methods, by the class held in `attr`.
struct Calls<'h, 'a> {
    held: &'h HashMap<(usize, &'h str), usize>,
    holder: usize,
    found: HashMap<usize, Vec<&'a ast::ExprCall>>,
}

impl<'a> Visitor<'a> for Calls<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(attr) = call.func.as_ref()
            && is_self(&attr.value)
            && let Some(&class) = self.held.get(&(self.holder, attr.attr.id.as_str()))
        {
            self.found.entry(class).or_default().push(call);
        }
        walk_expr(self, expr);
    }
}
