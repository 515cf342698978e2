//! Which attribute names hold state that changes between calls. A hook that reads such an
//! attribute reads state Dynamo must guard on; one that reads a frozen config's `cfg.scale`
//! does not.
//! - flags: assigned a bool anywhere (`self.enabled = False` in `__init__`, a class attribute
//!   `active = False`): flags exist to be flipped, often by a training loop tcfix never sees;
//! - changing: assigned anywhere but in an `__init__` (`collector.capture = capture`), or through
//!   `setattr(obj, "name", ...)`;
//! - counters: updated in place (`self.step += 1`): a new value on every call.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::{self as ast, Expr, Stmt};

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StateAttributes {
    pub flags: HashSet<String>,
    pub changing: HashSet<String>,
    pub counters: HashSet<String>,
}

impl StateAttributes {
    /// What one statement says, given where it sits: in an `__init__`, directly in a class body.
    /// The collect walk calls it for every statement of a file.
    pub fn record_statement(&mut self, stmt: &Stmt, in_init: bool, in_class_body: bool) {
        let mut place = Place { in_init, in_class_body, found: self };
        match stmt {
            Stmt::Assign(assign) => assign.targets.iter().for_each(|t| place.record_target(t, Some(&assign.value))),
            Stmt::AnnAssign(assign) => place.record_target(&assign.target, assign.value.as_deref()),
            Stmt::AugAssign(assign) => {
                if let Expr::Attribute(attr) = assign.target.as_ref() {
                    self.counters.insert(attr.attr.id.to_string());
                }
            }
            _ => {}
        }
    }

    /// `setattr(obj, "name", ...)` outside an `__init__`: the attribute changes.
    pub fn record_call(&mut self, call: &ast::ExprCall, in_init: bool) {
        let is_setattr = matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == "setattr");
        if let (true, Some(Expr::StringLiteral(name)), false) = (is_setattr, call.arguments.args.get(1), in_init) {
            self.changing.insert(name.value.to_str().to_string());
        }
    }

    pub fn extend(&mut self, other: &StateAttributes) {
        self.flags.extend(other.flags.iter().cloned());
        self.changing.extend(other.changing.iter().cloned());
        self.counters.extend(other.counters.iter().cloned());
    }

    pub fn holds_state(&self, attribute: &str) -> bool {
        self.flags.contains(attribute) || self.changing.contains(attribute) || self.counters.contains(attribute)
    }

    /// A flag takes few values: Dynamo compiles one version per value, then reuses them.
    pub fn is_flag(&self, attribute: &str) -> bool {
        self.flags.contains(attribute) && !self.counters.contains(attribute)
    }
}

/// Where an assignment sits.
struct Place<'s> {
    in_init: bool,
    /// Directly in a class body (not in one of its methods).
    in_class_body: bool,
    found: &'s mut StateAttributes,
}

impl Place<'_> {
    fn record_target(&mut self, target: &Expr, value: Option<&Expr>) {
        let is_flag = matches!(value, Some(Expr::BooleanLiteral(_)));
        match target {
            Expr::Attribute(attr) => {
                let name = attr.attr.id.to_string();
                if is_flag {
                    self.found.flags.insert(name);
                } else if !self.in_init {
                    self.found.changing.insert(name);
                }
            }
            Expr::Name(name) if self.in_class_body && is_flag => {
                self.found.flags.insert(name.id.to_string());
            }
            Expr::Tuple(tuple) => tuple.elts.iter().for_each(|e| self.record_target(e, None)),
            Expr::List(list) => list.elts.iter().for_each(|e| self.record_target(e, None)),
            _ => {}
        }
    }
}
