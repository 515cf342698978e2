//! An attribute that `__init__` leaves off (`self.context_stack = None`) and that only methods
//! nothing calls turn on (sew_d's `StableDropout.init_context`, called nowhere in transformers):
//! the branches that need it on (`if self.context_stack is not None:`) never run. The file tells
//! which of its methods it never names; the index tells whether another file names them, or the
//! attribute (`reach::mark_region` marks the branches dead only when none does).

use ruff_python_ast::visitor::{Visitor, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::model::file::dead_code::UncalledSetter;
use crate::model::file::module::is_entry_point;
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::file::{init_method, self_assignments};
use crate::source::identifier_occurrences;

/// What `__init__` leaves an attribute as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Off {
    None,
    False,
}

fn off_value(expr: Option<&Expr>) -> Option<Off> {
    match expr? {
        Expr::NoneLiteral(_) => Some(Off::None),
        Expr::BooleanLiteral(literal) if !literal.value => Some(Off::False),
        _ => None,
    }
}

/// The attributes of the file's classes that only uncalled methods turn on, with the branches
/// that need them on.
pub fn find(model: &FileModel) -> Vec<UncalledSetter> {
    (0..model.classes.len()).flat_map(|class| in_class(model, class)).collect()
}

fn in_class(model: &FileModel, class: usize) -> Vec<UncalledSetter> {
    let Some(init) = init_method(model, class) else { return Vec::new() };
    let mut attributes: Vec<&str> = self_assignments(model, class).iter().map(|a| a.attr.as_str()).collect();
    attributes.sort_unstable();
    attributes.dedup();
    attributes.into_iter().filter_map(|attribute| in_attribute(model, class, init, attribute)).collect()
}

fn in_attribute(model: &FileModel, class: usize, init: usize, attribute: &str) -> Option<UncalledSetter> {
    let assignments: Vec<_> = self_assignments(model, class).iter().filter(|a| a.attr == attribute).collect();
    // Cheap tests first: most attributes are not left off by `__init__`.
    let offs: Vec<Off> = assignments.iter().filter_map(|a| off_value(a.value())).collect();
    if !assignments.iter().any(|a| a.method == init && off_value(a.value()).is_some()) {
        return None;
    }
    let mut turned_on: Vec<usize> =
        assignments.iter().filter(|a| off_value(a.value()).is_none()).map(|a| a.method).collect();
    turned_on.sort_unstable();
    turned_on.dedup();
    if turned_on.is_empty() || turned_on.iter().any(|&method| method == init || !is_uncalled(model, method)) {
        return None;
    }
    if !only_self_in_class(model, class, attribute) {
        return None;
    }
    let none_only = offs.iter().all(|&off| off == Off::None);
    let branches = branches_needing(model, class, attribute, none_only);
    let methods = turned_on.iter().map(|&method| model.function(method).name.clone()).collect();
    (!branches.is_empty()).then(|| UncalledSetter { attribute: attribute.to_string(), methods, branches })
}

/// A plain method (no decorator: a property setter runs on assignment) that the file names only
/// where it defines it, and that is no entry point, dunder or hook that Python, torch or a
/// training framework calls by name.
fn is_uncalled(model: &FileModel, method: usize) -> bool {
    let function = model.function(method);
    let FunctionNode::Def(def) = function.node else { return false };
    def.decorator_list.is_empty()
        && !is_entry_point(&function.name)
        && !called_by_name(&function.name)
        && identifier_occurrences(&model.source.text, &function.name).count() == 1
}

/// Methods that torch (`load_state_dict` calls `set_extra_state`, `model.train()`), transformers
/// (`_init_weights`) or a training framework (Lightning's `on_fit_start`, `training_step`,
/// `configure_optimizers`) calls by name: no call in the project names them.
fn called_by_name(name: &str) -> bool {
    const METHODS: &[&str] = &[
        "set_extra_state",
        "get_extra_state",
        "_load_from_state_dict",
        "_save_to_state_dict",
        "load_state_dict",
        "state_dict",
        "train",
        "eval",
        "reset_parameters",
        "_reset_parameters",
        "extra_repr",
        "apply",
        "_apply",
        "to",
        "_init_weights",
        "init_weights",
        "post_init",
        "tie_weights",
        "setup",
        "teardown",
    ];
    name.starts_with("__")
        || METHODS.contains(&name)
        || name.starts_with("on_")
        || name.starts_with("configure_")
        || name.ends_with("_step")
        || name.ends_with("_hook")
}

/// Every mention of the attribute in the file is `self.<attribute>` in the class's own code (not
/// in a class nested in it, whose `self` is another object): no other object's code sets it, and
/// no string names it.
fn only_self_in_class(model: &FileModel, class: usize, attribute: &str) -> bool {
    let text = &model.source.text;
    let range = model.classes[class].node.range();
    let nested = nested_classes(model.classes[class].node);
    identifier_occurrences(text, attribute).all(|at| {
        let at_size = TextSize::new(at as u32);
        range.contains(at_size) && !nested.iter().any(|inner| inner.contains(at_size)) && after_self(&text[..at])
    })
}

/// Whether `before` ends with `self.` (not `new_self.`).
fn after_self(before: &str) -> bool {
    before.strip_suffix("self.").is_some_and(|rest| !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// The ranges of the classes defined anywhere inside a class's body.
fn nested_classes(class: &ast::StmtClassDef) -> Vec<TextRange> {
    struct Classes(Vec<TextRange>);
    impl<'a> Visitor<'a> for Classes {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::ClassDef(class) = stmt {
                self.0.push(class.range());
            }
            walk_stmt(self, stmt);
        }
    }
    let mut classes = Classes(Vec::new());
    classes.visit_body(&class.body);
    classes.0
}

/// The bodies of the `if`s in the class's methods whose test needs the attribute on:
/// `self.x` (or `self.x and ...`), and `self.x is not None` when it is only ever set to None.
fn branches_needing(model: &FileModel, class: usize, attribute: &str, none_only: bool) -> Vec<TextRange> {
    let mut finder = BranchFinder { attribute, none_only, bodies: Vec::new() };
    for &method in model.methods_of(class) {
        if let FunctionNode::Def(def) = model.function(method).node {
            finder.visit_body(&def.body);
        }
    }
    finder.bodies
}

struct BranchFinder<'n> {
    attribute: &'n str,
    none_only: bool,
    bodies: Vec<TextRange>,
}

impl BranchFinder<'_> {
    fn needs_on(&self, test: &Expr) -> bool {
        match test {
            Expr::BoolOp(op) if op.op == ast::BoolOp::And => op.values.iter().any(|value| self.needs_on(value)),
            Expr::Attribute(_) => self.is_attribute(test),
            Expr::Compare(compare) => {
                self.none_only
                    && matches!((&*compare.ops, &*compare.comparators), ([ast::CmpOp::IsNot], [Expr::NoneLiteral(_)]))
                    && self.is_attribute(&compare.left)
            }
            _ => false,
        }
    }

    fn is_attribute(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Attribute(attr) if attr.attr.id == self.attribute && is_self(&attr.value))
    }
}

impl<'a> Visitor<'a> for BranchFinder<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // A class nested in a method has its own `self`.
        if stmt.is_class_def_stmt() {
            return;
        }
        if let Stmt::If(if_stmt) = stmt
            && self.needs_on(&if_stmt.test)
            && let (Some(first), Some(last)) = (if_stmt.body.first(), if_stmt.body.last())
        {
            self.bodies.push(TextRange::new(first.start(), last.end()));
        }
        walk_stmt(self, stmt);
    }
}
