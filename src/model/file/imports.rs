//! Which names a file imports, so `nn.Module`, `Module` and `torch.nn.Module` all read as
//! `torch.nn.Module`, and `from .utils import helper` points at the project's own module.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::{self as ast, Expr, Stmt, visitor::Visitor};

#[derive(Default, Debug, Clone)]
pub struct Imports {
    /// Local name -> fully qualified name it is bound to ("nn" -> "torch.nn").
    bound: HashMap<String, String>,
    /// Local names bound by imports that run whenever the module is imported: at module level,
    /// not inside a function or under `if TYPE_CHECKING:`. Only these can be used in new code.
    module_level: HashSet<String>,
    /// The top-level packages those imports load (`from torch import nn` loads `torch`).
    module_level_packages: HashSet<String>,
}

impl Imports {
    /// Collect the imports anywhere in the file (function-local imports included: the
    /// approximation errs towards knowing more names).
    pub fn collect(suite: &[Stmt], module_name: &str, is_package: bool) -> Self {
        let mut collector =
            ImportCollector { imports: Imports::default(), module_name, is_package, depth: 0, type_checking: false };
        collector.visit_body(suite);
        collector.imports
    }

    pub fn get(&self, local: &str) -> Option<&str> {
        self.bound.get(local).map(String::as_str)
    }

    /// The dotted name an expression refers to, with its head resolved through the imports:
    /// `nn.Module` -> `torch.nn.Module`. `None` for anything but names and attribute chains.
    /// Hot (called for most calls in a file): one allocation, none when it is `None`.
    pub fn qualified_name(&self, expr: &Expr) -> Option<String> {
        let head = chain_head(expr)?;
        let resolved = self.get(head).unwrap_or(head);
        let mut qualified = String::with_capacity(resolved.len() + attributes_len(expr));
        qualified.push_str(resolved);
        push_attributes(expr, &mut qualified);
        Some(qualified)
    }

    /// Whether `qualified_name(expr)` is `qualified`, without building it.
    pub fn refers_to(&self, expr: &Expr, qualified: &str) -> bool {
        let mut rest = qualified;
        let mut expr = expr;
        loop {
            match expr {
                Expr::Attribute(attr) => {
                    let parent = rest.strip_suffix(attr.attr.id.as_str()).and_then(|p| p.strip_suffix('.'));
                    let Some(parent) = parent else { return false };
                    rest = parent;
                    expr = &attr.value;
                }
                Expr::Name(name) => return self.get(name.id.as_str()).unwrap_or(name.id.as_str()) == rest,
                _ => return false,
            }
        }
    }

    /// Local names bound to imported names, with what they are bound to.
    pub fn bindings(&self) -> impl Iterator<Item = (&str, &str)> {
        self.bound.iter().map(|(local, full)| (local.as_str(), full.as_str()))
    }

    /// Whether importing the module imports `package` (a top-level package: `torch`), under any
    /// name: `import torch.nn as nn` and `from torch import nn` do, an import inside a function or
    /// under `if TYPE_CHECKING:` does not.
    pub fn imports_package(&self, package: &str) -> bool {
        self.module_level_packages.contains(package)
    }

    /// The module-level name under which the `torch` package itself is bound, if any.
    pub fn torch_alias(&self) -> Option<&str> {
        let mut names: Vec<&String> = self
            .bound
            .iter()
            .filter(|(local, target)| *target == "torch" && self.module_level.contains(*local))
            .map(|(local, _)| local)
            .collect();
        names.sort();
        names.first().map(|name| name.as_str())
    }
}

/// `a.b.c` for a chain of attribute accesses on a name.
pub fn dotted_name(expr: &Expr) -> Option<String> {
    let head = chain_head(expr)?;
    let mut dotted = String::with_capacity(head.len() + attributes_len(expr));
    dotted.push_str(head);
    push_attributes(expr, &mut dotted);
    Some(dotted)
}

/// Whether `dotted_name(expr)` is `dotted`, without building it.
pub fn is_dotted_name(expr: &Expr, dotted: &str) -> bool {
    match expr {
        Expr::Name(name) => name.id.as_str() == dotted,
        Expr::Attribute(attr) => dotted
            .strip_suffix(attr.attr.id.as_str())
            .and_then(|parent| parent.strip_suffix('.'))
            .is_some_and(|parent| is_dotted_name(&attr.value, parent)),
        _ => false,
    }
}

/// The name an attribute chain starts from (`torch` in `torch.nn.Module`); `None` when the
/// chain starts from anything else (a call, a subscript).
fn chain_head(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attr) => chain_head(&attr.value),
        _ => None,
    }
}

/// The length of `.nn.Module` in `torch.nn.Module`.
fn attributes_len(expr: &Expr) -> usize {
    match expr {
        Expr::Attribute(attr) => attributes_len(&attr.value) + 1 + attr.attr.id.as_str().len(),
        _ => 0,
    }
}

/// Append `.nn.Module` for `torch.nn.Module`.
fn push_attributes(expr: &Expr, out: &mut String) {
    if let Expr::Attribute(attr) = expr {
        push_attributes(&attr.value, out);
        out.push('.');
        out.push_str(attr.attr.id.as_str());
    }
}

/// A dotted name's last segment: `models.base.Block` -> `Block`.
pub fn unqualified(dotted: &str) -> &str {
    dotted.rsplit('.').next().unwrap_or(dotted)
}

/// The last segment of a name or attribute chain (`torch.compiler.disable` -> `disable`).
pub fn last_segment(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attr) => Some(attr.attr.id.as_str()),
        _ => None,
    }
}

struct ImportCollector<'m> {
    imports: Imports,
    module_name: &'m str,
    is_package: bool,
    /// How many functions deep the walk is.
    depth: usize,
    type_checking: bool,
}

impl<'a> Visitor<'a> for ImportCollector<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let full = alias.name.id.to_string();
                    match &alias.asname {
                        Some(asname) => self.bind(asname.id.as_str(), full),
                        // `import torch.nn` binds `torch`.
                        None => {
                            let head = full.split('.').next().unwrap_or(&full).to_string();
                            self.bind(&head.clone(), head);
                        }
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let module = self.absolute_module(import);
                for alias in &import.names {
                    let local = alias.asname.as_ref().unwrap_or(&alias.name).id.to_string();
                    let full = if module.is_empty() {
                        alias.name.id.to_string()
                    } else {
                        format!("{module}.{}", alias.name.id)
                    };
                    self.bind(&local, full);
                }
            }
            Stmt::FunctionDef(_) => {
                self.depth += 1;
                ruff_python_ast::visitor::walk_stmt(self, stmt);
                self.depth -= 1;
            }
            Stmt::If(if_stmt) if is_type_checking(&if_stmt.test) => {
                let outer = std::mem::replace(&mut self.type_checking, true);
                self.visit_body(&if_stmt.body);
                self.type_checking = outer;
                for clause in &if_stmt.elif_else_clauses {
                    self.visit_body(&clause.body);
                }
            }
            _ => ruff_python_ast::visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, _expr: &'a Expr) {}
}

impl ImportCollector<'_> {
    fn bind(&mut self, local: &str, full: String) {
        if self.depth == 0 && !self.type_checking {
            self.imports.module_level.insert(local.to_string());
            let package = full.split('.').next().unwrap_or_default();
            self.imports.module_level_packages.insert(package.to_string());
        }
        self.imports.bound.insert(local.to_string(), full);
    }

    /// `from ..utils import f` in `pkg.models.vlm` -> `pkg.utils`.
    fn absolute_module(&self, import: &ast::StmtImportFrom) -> String {
        let named = import.module.as_ref().map(|m| m.id.to_string()).unwrap_or_default();
        if import.level == 0 {
            return named;
        }
        let mut package: Vec<&str> = self.module_name.split('.').filter(|s| !s.is_empty()).collect();
        if !self.is_package {
            package.pop();
        }
        for _ in 1..import.level {
            package.pop();
        }
        if !named.is_empty() {
            package.push(&named);
        }
        package.join(".")
    }
}

/// `if TYPE_CHECKING:` / `if typing.TYPE_CHECKING:`: imports for type checkers only.
fn is_type_checking(test: &Expr) -> bool {
    last_segment(test) == Some("TYPE_CHECKING")
}
