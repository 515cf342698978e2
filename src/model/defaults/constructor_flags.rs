//! Branches taken only when a module is built with a flag that is off by default.
//!
//! `def __init__(self, ..., expand=False): self.expand = expand`, then `if self.expand and
//! self.prefix_bucket:` in `forward` (transformers' UDOP relative bias): built as its defaults
//! say, the module never takes that branch, so Dynamo does not trace it. A config or a caller
//! elsewhere may pass `expand=True`: a finding there is real only for such a module, so it stays,
//! low, and says so.
//!
//! The same for a number the default makes fail a comparison with a literal: `frac=1.0`, then
//! `if self.frac < 1.0:` ("only when `Quantizer` is built with `frac < 1.0` (1.0 by default)").
//!
//! The same for an attribute `__init__` sets to a literal `False` (`self.gradient_checkpointing =
//! False`) that nothing in the file turns on, on any object, in any way (only another file may,
//! like a library's `gradient_checkpointing_enable()`): "only when `gradient_checkpointing` is
//! turned on".
//!
//! Only when that is certain in the file: the attribute is stored from the parameter (or the
//! literal) at the top of `__init__`, is otherwise only ever set off again (`self.expand = False`),
//! and no call in the file passes the parameter (by keyword, or by position to the class or a
//! `super().__init__`).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions};
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, FunctionNode, SelfAssignment};
/// For each of `ranges`, the condition its code needs when it sits in a branch on a flag the
/// module's constructor leaves off: "only when `RelativeBias` is built with `expand=True` (False
/// by default)".
pub fn off_unless_built_with(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    let turned_on = turned_on(model);
    let turned_on_anywhere = std::cell::OnceCell::new();
    for class in 0..model.classes.len() {
        if !conditions.touches(model.classes[class].node.range()) {
            continue;
        }
        let mut flags = flags_off(model, class, &turned_on);
        // A literal flag that code in the file turns on, on any object (`model.monitor.enabled =
        // on`, a closure's `self.x = True`), is part of the file's own use: no condition.
        if flags.values().any(|flag| flag.parameter.is_none()) {
            let turned_on_anywhere = turned_on_anywhere.get_or_init(|| TurnedOnAnywhere::of(model));
            flags.retain(|attr, flag| flag.parameter.is_some() || !turned_on_anywhere.contains(attr.as_str()));
        }
        if flags.is_empty() {
            continue;
        }
        let name = model.classes[class].node.name.id.as_str();
        let mut walk = BranchWalk { tests: FlagTests { class: name, flags: &flags }, conditions: &mut conditions };
        for &method in model.methods_of(class) {
            if let FunctionNode::Def(def) = model.function(method).node {
                walk.visit_body(&def.body);
            }
        }
    }
    conditions.into_vec()
}

/// A flag `__init__` stores off: from a parameter that defaults off, or as a literal `False`
/// (`self.gradient_checkpointing = False`, which nothing in the file turns on).
struct Flag {
    /// The parameter it is stored from; `None` for a literal.
    parameter: Option<String>,
    default: Default,
}

/// An `__init__` parameter's default that leaves a branch off: `False`, `None`, or a number that a
/// comparison with a literal tests (`self.frac < 1.0` with `frac=1.0`).
#[derive(Clone)]
struct Default {
    /// As written in the signature.
    text: String,
    number: Option<f64>,
}

/// Whether an assignment sets its attribute to off (`False`, `None`).
fn turns_off(assignment: &SelfAssignment) -> bool {
    matches!(assignment.value(), Some(Expr::BooleanLiteral(b)) if !b.value)
        || matches!(assignment.value(), Some(Expr::NoneLiteral(_)))
}

/// How many assignments in the classes of the file set each attribute of `self` to anything but
/// off (counted once per file, not once per class: a file can hold tens of thousands).
fn turned_on<'m>(model: &'m FileModel) -> HashMap<&'m str, usize> {
    let mut counts: HashMap<&str, usize> = HashMap::default();
    for owner in 0..model.classes.len() {
        for assignment in self_assignments(model, owner).iter().filter(|a| !turns_off(a)) {
            *counts.entry(assignment.attr.as_str()).or_default() += 1;
        }
    }
    counts
}

/// What the file turns on anywhere, on `self` or any other object, nested functions included:
/// `module.gradient_checkpointing = True`, `a, m.loud = 1, True`, `self.x |= on`, `setattr(m,
/// "loud", True)`. A `setattr` with a name it computes may turn on any name of that shape
/// (`f"{kind}_inv_freq"`: the names ending `_inv_freq`), or anything.
struct TurnedOnAnywhere<'a> {
    text: &'a str,
    names: HashSet<&'a str>,
    /// The literal start and end of computed names.
    shapes: Vec<(&'a str, &'a str)>,
}

impl<'a> TurnedOnAnywhere<'a> {
    fn of(model: &'a FileModel) -> Self {
        let text = model.source.text.as_str();
        let mut walk = TurnedOnAnywhere { text, names: HashSet::default(), shapes: Vec::new() };
        walk.visit_body(model.source.parsed.suite());
        walk
    }

    fn contains(&self, attr: &str) -> bool {
        self.names.contains(attr)
            || self.shapes.iter().any(|(start, end)| {
                attr.len() >= start.len() + end.len() && attr.starts_with(start) && attr.ends_with(end)
            })
    }

    /// `f"{kind}_inv_freq"` -> ("", "_inv_freq"): the text before its first and after its last
    /// replacement field. Anything else computed -> ("", ""), which every name has.
    fn shape(&self, name: &Expr) -> (&'a str, &'a str) {
        let written = &self.text[name.range()];
        let literal = written
            .strip_prefix("f\"")
            .and_then(|rest| rest.strip_suffix('"'))
            .or_else(|| written.strip_prefix("f'").and_then(|rest| rest.strip_suffix('\'')))
            .filter(|inner| !inner.contains("{{") && !inner.contains("}}") && !inner.contains('\\'));
        match literal.and_then(|inner| Some((inner.split_once('{')?.0, inner.rsplit_once('}')?.1))) {
            Some(shape) => shape,
            None => ("", ""),
        }
    }

    fn target(&mut self, target: &'a Expr) {
        match target {
            Expr::Attribute(attr) => {
                self.names.insert(attr.attr.id.as_str());
            }
            Expr::Tuple(tuple) => tuple.elts.iter().for_each(|element| self.target(element)),
            Expr::List(list) => list.elts.iter().for_each(|element| self.target(element)),
            Expr::Starred(starred) => self.target(&starred.value),
            _ => {}
        }
    }
}

/// `False` or `None`: a value that leaves a switch off.
fn is_off(value: &Expr) -> bool {
    matches!(value, Expr::BooleanLiteral(b) if !b.value) || value.is_none_literal_expr()
}

impl<'a> Visitor<'a> for TurnedOnAnywhere<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assign(assign) if !is_off(&assign.value) => assign.targets.iter().for_each(|t| self.target(t)),
            Stmt::AnnAssign(assign) if assign.value.as_deref().is_some_and(|value| !is_off(value)) => {
                self.target(&assign.target);
            }
            Stmt::AugAssign(assign) => self.target(&assign.target),
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "setattr")
        {
            match &*call.arguments.args {
                [_, Expr::StringLiteral(_), value] if is_off(value) => {}
                [_, Expr::StringLiteral(name), _] => {
                    self.names.insert(name.value.to_str());
                }
                [_, name, _] => {
                    let shape = self.shape(name);
                    self.shapes.push(shape);
                }
                _ => self.shapes.push(("", "")),
            }
        }
        walk_expr(self, expr);
    }
}

/// The attributes of `class` stored from an off-by-default `__init__` parameter, or as a literal
/// `False`, that no method of the file's classes turns on (`turned_on`: see there).
fn flags_off(model: &FileModel, class: usize, turned_on: &HashMap<&str, usize>) -> HashMap<String, Flag> {
    let Some(init) = model.method(class, "__init__") else { return HashMap::default() };
    let FunctionNode::Def(def) = model.function(init).node else { return HashMap::default() };
    let parameters = off_parameters(def);
    let mut flags = HashMap::default();
    for assignment in self_assignments(model, class) {
        if assignment.method != init || !assignment.top_level {
            continue;
        }
        let flag = match assignment.value() {
            Some(Expr::Name(name)) => parameters
                .get(name.id.as_str())
                .map(|(_, default)| Flag { parameter: Some(name.id.to_string()), default: default.clone() }),
            Some(Expr::BooleanLiteral(b)) if !b.value => {
                Some(Flag { parameter: None, default: Default { text: "False".into(), number: None } })
            }
            _ => None,
        };
        if let Some(flag) = flag {
            flags.insert(assignment.attr.clone(), flag);
        }
    }
    // Set to anything but off elsewhere (in any class of the file: a subclass may), it is no
    // flag: the file turns it on more often than this class's `__init__` stores it.
    let mut stores: HashMap<&str, usize> = HashMap::default();
    for assignment in self_assignments(model, class) {
        if !turns_off(assignment) && assignment.method == init && assignment.top_level {
            *stores.entry(assignment.attr.as_str()).or_default() += 1;
        }
    }
    // A literal `False` is a flag only while nothing in the file sets it to anything else.
    flags.retain(|attr, flag| match flag.parameter {
        Some(_) => turned_on.get(attr.as_str()) == stores.get(attr.as_str()),
        None => !turned_on.contains_key(attr.as_str()),
    });
    if flags.is_empty() {
        return flags;
    }
    let passed = Passed::of(model, class, &parameters);
    flags.retain(|_, flag| flag.parameter.as_ref().is_none_or(|parameter| !passed.contains(parameter)));
    flags
}

/// `__init__`'s parameters that default to `False` or `None`: name -> (position, default).
fn off_parameters(def: &ast::StmtFunctionDef) -> HashMap<&str, (usize, Default)> {
    let positional = def.parameters.posonlyargs.iter().chain(&def.parameters.args).enumerate();
    let keyword_only = def.parameters.kwonlyargs.iter().map(|p| (usize::MAX, p));
    positional
        .chain(keyword_only)
        .filter_map(|(position, parameter)| {
            let default = match parameter.default.as_deref()? {
                Expr::BooleanLiteral(b) if !b.value => Default { text: "False".into(), number: None },
                Expr::NoneLiteral(_) => Default { text: "None".into(), number: None },
                Expr::NumberLiteral(n) => {
                    Default { text: number_text(&n.value)?, number: Some(number_value(&n.value)?) }
                }
                _ => return None,
            };
            Some((parameter.parameter.name.id.as_str(), (position, default)))
        })
        .collect()
}

/// The parameters some call of the file passes: by keyword to any call (a wrapper may forward
/// it), or by position to the class itself or to a `super().__init__(...)`.
struct Passed<'p> {
    parameters: &'p HashMap<&'p str, (usize, Default)>,
    class: &'p str,
    found: Vec<String>,
}

impl<'p> Passed<'p> {
    fn of(model: &FileModel, class: usize, parameters: &'p HashMap<&'p str, (usize, Default)>) -> Vec<String> {
        let class = model.classes[class].node.name.id.as_str();
        let mut passed = Passed { parameters, class, found: Vec::new() };
        passed.visit_body(model.source.parsed.suite());
        passed.found
    }

    fn positional_reach(&self, call: &ast::ExprCall) -> Option<usize> {
        let to_class = matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == self.class);
        let to_super_init = matches!(call.func.as_ref(), Expr::Attribute(a) if a.attr.id.as_str() == "__init__");
        // `self` is the first parameter: the class call's first argument binds the second.
        (to_class || to_super_init).then_some(call.arguments.args.len() + 1)
    }
}

impl<'a> Visitor<'a> for Passed<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            for keyword in &call.arguments.keywords {
                let off = matches!(&keyword.value, Expr::BooleanLiteral(b) if !b.value)
                    || keyword.value.is_none_literal_expr();
                match &keyword.arg {
                    Some(arg) if self.parameters.contains_key(arg.id.as_str()) && !off => {
                        self.found.push(arg.id.to_string());
                    }
                    _ => {}
                }
            }
            let starred = call.arguments.args.iter().any(Expr::is_starred_expr);
            if let Some(reach) = self.positional_reach(call) {
                for (name, (position, _)) in self.parameters {
                    if *position != usize::MAX && (starred || *position < reach) {
                        self.found.push((*name).to_string());
                    }
                }
            }
        }
        walk_expr(self, expr);
    }
}

/// The tests of a class's off flags, for the walk of its methods that marks the branches on them.
struct FlagTests<'w> {
    class: &'w str,
    flags: &'w HashMap<String, Flag>,
}

impl FlagTests<'_> {
    /// The condition a test needs when it holds only with a flag on: `self.expand`, `self.x is
    /// not None` (a `None` default), alone or as a part of an `and`.
    fn needs_on(&self, test: &Expr) -> Option<String> {
        let (attr, on) = match test {
            Expr::BoolOp(op) if op.op == BoolOp::And => return op.values.iter().find_map(|v| self.needs_on(v)),
            Expr::Attribute(attr) if is_self(&attr.value) => (attr, None),
            Expr::Compare(compare) => match (&*compare.ops, &*compare.comparators, compare.left.as_ref()) {
                ([CmpOp::IsNot], [Expr::NoneLiteral(_)], Expr::Attribute(attr)) if is_self(&attr.value) => {
                    (attr, Some("set"))
                }
                ([op], [Expr::NumberLiteral(bound)], Expr::Attribute(attr)) if is_self(&attr.value) => {
                    return self.needs_comparison(attr, *op, bound);
                }
                _ => return None,
            },
            _ => return None,
        };
        let flag = self.flags.get(attr.attr.id.as_str())?;
        let Some(parameter) = &flag.parameter else {
            // A literal: only another file turns it on.
            return (on.is_none()).then(|| {
                format!("only when `{}` is turned on (`{}.__init__` sets it False)", attr.attr.id, self.class)
            });
        };
        let with = match (on, flag.default.text.as_str()) {
            (None, "False") => format!("`{parameter}=True`"),
            (Some(_), "None") | (None, "None") => format!("`{parameter}` set"),
            _ => return None,
        };
        Some(format!("only when `{}` is built with {with} ({} by default)", self.class, flag.default.text))
    }

    /// `self.frac < 1.0` where the constructor's default makes it false: "only when `Quantizer`
    /// is built with `frac < 1.0` (1.0 by default)".
    fn needs_comparison(
        &self,
        attr: &ast::ExprAttribute,
        op: CmpOp,
        literal: &ast::ExprNumberLiteral,
    ) -> Option<String> {
        let flag = self.flags.get(attr.attr.id.as_str())?;
        let (default, bound) = (flag.default.number?, number_value(&literal.value)?);
        let holds = match op {
            CmpOp::Lt => default < bound,
            CmpOp::LtE => default <= bound,
            CmpOp::Gt => default > bound,
            CmpOp::GtE => default >= bound,
            CmpOp::Eq => default == bound,
            CmpOp::NotEq => default != bound,
            _ => return None,
        };
        let written = format!("{} {} {}", flag.parameter.as_ref()?, op.as_str(), number_text(&literal.value)?);
        (!holds)
            .then(|| format!("only when `{}` is built with `{written}` ({} by default)", self.class, flag.default.text))
    }
}

impl BranchTests for FlagTests<'_> {
    fn needs(&self, test: &Expr) -> Option<String> {
        self.needs_on(test)
    }

    /// `not self.flag`: what follows runs only with the flag on.
    fn needs_false(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::UnaryOp(unary)
                if unary.op == UnaryOp::Not && matches!(unary.operand.as_ref(), Expr::Attribute(_)) =>
            {
                self.needs_on(&unary.operand)
            }
            _ => None,
        }
    }
}

/// A number literal's value, for comparing a default with a bound.
fn number_value(number: &ast::Number) -> Option<f64> {
    match number {
        ast::Number::Int(int) => int.as_u64().map(|n| n as f64),
        ast::Number::Float(float) => Some(*float),
        ast::Number::Complex { .. } => None,
    }
}

/// A number literal as the message writes it.
fn number_text(number: &ast::Number) -> Option<String> {
    match number {
        ast::Number::Int(int) => Some(int.to_string()),
        ast::Number::Float(float) => Some(format!("{float:?}")),
        ast::Number::Complex { .. } => None,
    }
}
