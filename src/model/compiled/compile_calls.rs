//! `compiled = torch.compile(model, ...)` in a training script or setup function, and what the
//! same block of code does with `compiled` and `model` afterwards, in source order. Setup rules
//! (TCF301, TCF302) read this: they look at scripts, not at the compiled region.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::model::file::imports::{Imports, dotted_name, is_dotted_name};
use crate::model::file::{FileModel, FunctionNode};
/// `target = torch.compile(module, ...)`.
pub struct CompileBinding<'a> {
    /// The name the compiled module is bound to (`compiled`, `self.model`).
    pub target: String,
    /// What was compiled, when it is a name or attribute chain (`model`, `self.model`).
    pub module: Option<String>,
    pub call: &'a ast::ExprCall,
}

/// One scope's code in source order: module level, or one function's own body (nested defs and
/// classes are scopes of their own).
pub fn scopes<'a>(model: &FileModel<'a>) -> Vec<&'a [Stmt]> {
    let mut bodies: Vec<&'a [Stmt]> = vec![model.source.parsed.suite()];
    for function in &model.functions {
        if let FunctionNode::Def(def) = function.node {
            bodies.push(&def.body);
        }
    }
    bodies
}

/// The scope whose own code (as [`scopes`] lists it) holds `range`: `Some(None)` for module
/// level, `Some(Some(f))` for the body of function `f`; `None` inside a class body or in the
/// header of a def or class (decorators, parameters, bases), which no scope's code holds.
pub fn scope_holding(model: &FileModel, range: TextRange) -> Option<Option<usize>> {
    let defs = model.functions.iter().enumerate().filter_map(|(index, function)| match function.node {
        FunctionNode::Def(def) => Some((def.range(), Some((index, def)))),
        FunctionNode::Lambda(_) => None,
    });
    let classes = model.classes.iter().map(|class| (class.node.range(), None));
    let innermost =
        defs.chain(classes).filter(|(node, _)| node.contains_range(range)).min_by_key(|(node, _)| node.len());
    match innermost {
        None => Some(None),
        Some((_, None)) => None,
        Some((_, Some((index, def)))) => {
            let (first, last) = (def.body.first()?, def.body.last()?);
            TextRange::new(first.start(), last.end()).contains_range(range).then_some(Some(index))
        }
    }
}

/// Every `x = torch.compile(y, ...)` in the scope, nested blocks included.
pub fn compile_bindings<'a>(imports: &Imports, body: &'a [Stmt]) -> Vec<CompileBinding<'a>> {
    let mut finder = BindingFinder { imports, found: Vec::new() };
    finder.visit_body(body);
    finder.found
}

/// Every call in the scope (not in nested defs, classes or lambdas), in source order.
pub fn calls(body: &[Stmt]) -> Vec<&ast::ExprCall> {
    let mut finder = CallFinder::default();
    finder.visit_body(body);
    finder.found.sort_by_key(|call| call.start());
    finder.found
}

/// The scope's calls (from [`calls`]) made while `binding` still names the compiled module: after
/// the compile, before `binding.target` is rebound.
pub fn calls_while_bound<'a>(
    body: &[Stmt],
    binding: &CompileBinding,
    calls: &[&'a ast::ExprCall],
) -> Vec<&'a ast::ExprCall> {
    let end = rebound_at(body, &binding.target, binding.call.end());
    calls
        .iter()
        .copied()
        .filter(|call| call.start() > binding.call.end() && end.is_none_or(|end| call.start() < end))
        .collect()
}

/// Assignments in the scope that rebind `target` after `after` (so later uses are another object).
fn rebound_at(body: &[Stmt], target: &str, after: TextSize) -> Option<TextSize> {
    let mut finder = AssignFinder { target, after, found: None };
    finder.visit_body(body);
    finder.found
}

/// Whether the text may hold what the setup rules look for outside the compiled region (a cheap
/// superset: a file without these words has nothing for them).
pub fn mentions_setup_code(text: &str) -> bool {
    ["compile", "backward_hook", "custom_op", "sdp_kernel"].iter().any(|word| text.contains(word))
}

pub fn is_torch_compile(imports: &Imports, call: &ast::ExprCall) -> bool {
    imports.refers_to(&call.func, "torch.compile")
}

struct BindingFinder<'i, 'a> {
    imports: &'i Imports,
    found: Vec<CompileBinding<'a>>,
}

impl<'a> Visitor<'a> for BindingFinder<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Assign(assign) => {
                if let ([target], Expr::Call(call)) = (assign.targets.as_slice(), assign.value.as_ref())
                    && is_torch_compile(self.imports, call)
                    && let Some(target) = dotted_name(target)
                {
                    let module = call
                        .arguments
                        .args
                        .first()
                        .or_else(|| call.arguments.find_keyword("model").map(|k| &k.value))
                        .and_then(dotted_name);
                    self.found.push(CompileBinding { target, module, call });
                }
            }
            _ => walk_stmt(self, stmt),
        }
    }
}

#[derive(Default)]
struct CallFinder<'a> {
    found: Vec<&'a ast::ExprCall>,
}

impl<'a> Visitor<'a> for CallFinder<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
            walk_stmt(self, stmt);
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(_) => {}
            Expr::Call(call) => {
                self.found.push(call);
                walk_expr(self, expr);
            }
            _ => walk_expr(self, expr),
        }
    }
}

struct AssignFinder<'t> {
    target: &'t str,
    after: TextSize,
    found: Option<TextSize>,
}

impl<'a> Visitor<'a> for AssignFinder<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Assign(assign) if assign.start() > self.after => {
                let rebinds = assign.targets.iter().any(|t| is_dotted_name(t, self.target));
                if rebinds && self.found.is_none_or(|found| assign.start() < found) {
                    self.found = Some(assign.start());
                }
            }
            _ => walk_stmt(self, stmt),
        }
    }
}

/// Whether the file compiles anything: `torch.compile` called, used as a decorator or passed on,
/// `torch._dynamo.optimize`, or a `.compile()` method (`model.compile()`, not `re.compile`).
pub fn compiles_anything(model: &FileModel) -> bool {
    if !model.source.text.contains("compile") && !model.source.text.contains("optimize") {
        return false;
    }
    let mut finder = CompileFinder { model, found: false };
    finder.visit_body(model.source.parsed.suite());
    finder.found
}

/// The statement holding the file's first compile (in source order), outside test functions: a
/// simple statement, or the `def`/`class` it decorates, or the compound statement whose header
/// holds it. A setting written just before it runs before the compile does.
pub fn first_compile_statement<'a>(model: &FileModel<'a>) -> Option<&'a Stmt> {
    if !compiles_anything(model) {
        return None;
    }
    first_in(model, model.source.parsed.suite())
}

fn first_in<'a>(model: &FileModel<'a>, body: &'a [Stmt]) -> Option<&'a Stmt> {
    body.iter().find_map(|stmt| {
        let holds = |expr: &'a Expr| {
            let mut finder = CompileFinder { model, found: false };
            finder.visit_expr(expr);
            finder.found
        };
        match stmt {
            Stmt::FunctionDef(def) => {
                if def.decorator_list.iter().any(|decorator| holds(&decorator.expression)) {
                    return Some(stmt);
                }
                if is_test(def.name.as_str()) { None } else { first_in(model, &def.body) }
            }
            Stmt::ClassDef(class) => {
                if class.decorator_list.iter().any(|decorator| holds(&decorator.expression)) {
                    return Some(stmt);
                }
                first_in(model, &class.body)
            }
            Stmt::If(if_stmt) => {
                if holds(&if_stmt.test) {
                    return Some(stmt);
                }
                first_in(model, &if_stmt.body).or_else(|| {
                    if_stmt.elif_else_clauses.iter().find_map(|clause| {
                        if clause.test.as_ref().is_some_and(holds) { Some(stmt) } else { first_in(model, &clause.body) }
                    })
                })
            }
            Stmt::For(for_stmt) => {
                if holds(&for_stmt.iter) {
                    Some(stmt)
                } else {
                    first_in(model, &for_stmt.body)
                }
            }
            Stmt::While(while_stmt) => {
                if holds(&while_stmt.test) {
                    Some(stmt)
                } else {
                    first_in(model, &while_stmt.body)
                }
            }
            Stmt::With(with) => {
                if with.items.iter().any(|item| holds(&item.context_expr)) {
                    Some(stmt)
                } else {
                    first_in(model, &with.body)
                }
            }
            Stmt::Try(try_stmt) => first_in(model, &try_stmt.body),
            _ => {
                let mut finder = CompileFinder { model, found: false };
                finder.visit_stmt(stmt);
                finder.found.then_some(stmt)
            }
        }
    })
}

struct CompileFinder<'m, 'a> {
    model: &'m FileModel<'a>,
    found: bool,
}

impl<'a> Visitor<'a> for CompileFinder<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        let imports = &self.model.imports;
        let compiler = imports.refers_to(expr, "torch.compile") || imports.refers_to(expr, "torch._dynamo.optimize");
        let compile_method = matches!(expr, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Attribute(method)
            if method.attr.id.as_str() == "compile"
                && !matches!(imports.qualified_name(&method.value).as_deref(), Some("re" | "regex"))));
        if compiler || compile_method {
            self.found = true;
        } else if !self.found {
            walk_expr(self, expr);
        }
    }
}

/// `test_x`, `setUp`, `setup_method`: a test's own code (pytest, unittest).
pub fn is_test(name: &str) -> bool {
    name == "test"
        || name.starts_with("test_")
        || matches!(name, "setUp" | "setUpClass" | "setup_method" | "setup_class" | "setup_module" | "setup_function")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ruff_text_size::Ranged;

    use super::*;
    use crate::source::SourceFile;

    const CODE: &str = "\
a()
@deco(b())
class C(base(c())):
    d()
    def method(self, x=e()) -> f():
        g(h())
        lam = lambda: i()
        def inner():
            j()
k()
";

    /// Each call of `CODE` by its callee's name, with the scope holding it (`scope_holding`).
    fn scopes_of_calls() -> Vec<(String, Option<Option<String>>)> {
        let source = SourceFile::parse(Path::new("m.py"), CODE.to_string()).unwrap();
        let model = FileModel::build(&source, "m");
        let name = |function: usize| model.function(function).name.clone();
        model
            .calls
            .iter()
            .map(|call| {
                let scope = scope_holding(&model, call.range()).map(|scope| scope.map(name));
                (CODE[call.func.range()].to_string(), scope)
            })
            .collect()
    }

    #[test]
    fn every_call_is_recorded_in_source_order_with_the_scope_whose_code_holds_it() {
        let module = Some(None);
        let method = Some(Some("method".to_string()));
        let inner = Some(Some("inner".to_string()));
        let expected = vec![
            ("a", module.clone()),
            // A class's decorators, bases and body, a def's signature: no scope's own code.
            ("deco", None),
            ("b", None),
            ("base", None),
            ("c", None),
            ("d", None),
            ("e", None),
            ("f", None),
            ("g", method.clone()),
            ("h", method.clone()),
            // A lambda's body is the code of the def around it.
            ("i", method),
            ("j", inner),
            ("k", module),
        ];
        let expected: Vec<(String, Option<Option<String>>)> =
            expected.into_iter().map(|(name, scope)| (name.to_string(), scope)).collect();
        assert_eq!(scopes_of_calls(), expected);
    }
}
