//! Branches taken only when someone replaced a submodule.
//!
//! `self.kernel = nn.Linear(...)` in `__init__`, then `if isinstance(self.kernel, LoraLayer):` in
//! `forward`: as the module builds it, `self.kernel` is an `nn.Linear`, which is no `LoraLayer`
//! (a class of another package: torch's classes derive from none). The branch runs only after
//! code outside the module swapped the submodule (peft wrapping it in LoRA), so Dynamo does not
//! trace it on a normal call. A finding there is real only for such a model: it stays, low, and
//! says so.
//!
//! Only when that is certain: the attribute is assigned once, in `__init__`'s own body, by a call
//! of a `torch.nn` class or of a file class whose bases are all the file's or torch's; no class of
//! the file assigns it again; and the tested class is not torch's and not one of the built
//! class's own (the built class, its bases).

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{BoolOp, Expr};
use ruff_text_size::{Ranged, TextRange};

use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions};
use crate::model::file::imports::unqualified;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, FunctionNode};
/// For each of `ranges`, the condition its code needs when it sits in a branch taken only for a
/// replaced submodule: "only when `self.kernel` is replaced by a `LoraLayer` (built as
/// `nn.Linear`)".
pub fn off_unless_replaced(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    let mut assigned = None;
    for class in 0..model.classes.len() {
        if !conditions.touches(model.classes[class].node.range()) {
            continue;
        }
        let assigned = assigned.get_or_insert_with(|| assignment_counts(model));
        let built = built_once(model, class, assigned);
        if built.is_empty() {
            continue;
        }
        let mut walk = BranchWalk { tests: ReplacedTests { model, built }, conditions: &mut conditions };
        for &method in model.methods_of(class) {
            if let FunctionNode::Def(def) = model.function(method).node {
                walk.visit_body(&def.body);
            }
        }
    }
    conditions.into_vec()
}

/// What a submodule is built as: the call's class as written (`nn.Linear`), and the names of
/// the classes it is an instance of (the class and its bases, unqualified).
struct Built {
    written: String,
    classes: Vec<String>,
}

/// How many times the classes of the file assign each attribute of `self` (counted once per
/// file, not once per class: a file can hold tens of thousands).
fn assignment_counts<'m>(model: &'m FileModel) -> HashMap<&'m str, usize> {
    let mut assigned: HashMap<&str, usize> = HashMap::default();
    for owner in 0..model.classes.len() {
        for assignment in self_assignments(model, owner) {
            *assigned.entry(assignment.attr.as_str()).or_default() += 1;
        }
    }
    assigned
}

/// The attributes of `class` that `__init__` builds once, by a call of a class whose every base
/// tcfix knows, and that no class of the file assigns again (`assigned`: see `assignment_counts`).
fn built_once(model: &FileModel, class: usize, assigned: &HashMap<&str, usize>) -> HashMap<String, Built> {
    let Some(init) = model.method(class, "__init__") else { return HashMap::default() };
    let mut built = HashMap::default();
    for assignment in self_assignments(model, class) {
        if assignment.method != init || !assignment.top_level || assigned[assignment.attr.as_str()] != 1 {
            continue;
        }
        let Some(Expr::Call(call)) = assignment.value() else { continue };
        if let Some(classes) = instance_of(model, &call.func) {
            let written = model.source.text[call.func.range()].to_string();
            built.insert(assignment.attr.clone(), Built { written, classes });
        }
    }
    built
}

/// The classes an instance of `class` is (itself and its bases, unqualified), when each is a
/// `torch.nn` class or a file class whose bases are known the same way.
fn instance_of(model: &FileModel, class: &Expr) -> Option<Vec<String>> {
    if let Some(qualified) = model.imports.qualified_name(class)
        && qualified.starts_with("torch.nn.")
    {
        return Some(vec![unqualified(&qualified).to_string()]);
    }
    let Expr::Name(name) = class else { return None };
    let mut classes = Vec::new();
    let mut queue = vec![name.id.to_string()];
    while let Some(next) = queue.pop() {
        if classes.len() > 32 {
            return None;
        }
        if next.starts_with("torch.nn.") {
            classes.push(unqualified(&next).to_string());
            continue;
        }
        let own = model.class_named(unqualified(&next))?;
        classes.push(unqualified(&next).to_string());
        queue.extend(model.classes[own].bases.iter().cloned());
    }
    Some(classes)
}

/// The walk of a class's methods that marks the findings in `isinstance` branches on a
/// submodule that is built as another class.
struct ReplacedTests<'m, 'a> {
    model: &'m FileModel<'a>,
    built: HashMap<String, Built>,
}

impl ReplacedTests<'_, '_> {
    /// The condition a test needs when it holds only for a replaced submodule:
    /// `isinstance(self.kernel, LoraLayer)`, alone or as a part of an `and`.
    fn replaced(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::BoolOp(bool_op) if bool_op.op == BoolOp::And => {
                bool_op.values.iter().find_map(|value| self.replaced(value))
            }
            Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "isinstance") => {
                let [Expr::Attribute(held), tested] = &*call.arguments.args else { return None };
                if !is_self(&held.value) || !call.arguments.keywords.is_empty() {
                    return None;
                }
                let built = self.built.get(held.attr.id.as_str())?;
                let tested_name = self.foreign_class(tested, built)?;
                let article = if tested_name.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
                Some(format!(
                    "only when `self.{}` is replaced by {article} `{tested_name}` (built as `{}`)",
                    held.attr.id, built.written
                ))
            }
            _ => None,
        }
    }

    /// The name of `tested` when it is a class an instance of `built` is not: imported from
    /// outside torch, or a file class that is not among `built`'s.
    fn foreign_class(&self, tested: &Expr, built: &Built) -> Option<String> {
        let written = self.model.source.text[tested.range()].to_string();
        let qualified = self.model.imports.qualified_name(tested)?;
        let name = unqualified(&qualified).to_string();
        if built.classes.contains(&name) {
            return None;
        }
        let imported = self.model.imports.get(&qualified_head(&written)).is_some();
        let own = matches!(tested, Expr::Name(n) if self.model.class_named(n.id.as_str()).is_some());
        let torch = qualified == "torch" || qualified.starts_with("torch.");
        ((imported || own) && !torch).then_some(written)
    }
}

impl BranchTests for ReplacedTests<'_, '_> {
    fn needs(&self, test: &Expr) -> Option<String> {
        self.replaced(test)
    }

    fn needs_false(&self, _test: &Expr) -> Option<String> {
        None
    }
}

/// `peft` of `peft.LoraLayer`, `LoraLayer` of `LoraLayer`.
fn qualified_head(written: &str) -> String {
    written.split('.').next().unwrap_or(written).to_string()
}

#[cfg(test)]
mod tests {
    use super::qualified_head;

    #[test]
    fn the_head_of_a_dotted_class_is_its_first_name() {
        assert_eq!(qualified_head("peft.tuners.LoraLayer"), "peft");
        assert_eq!(qualified_head("LoraLayer"), "LoraLayer");
    }
}
