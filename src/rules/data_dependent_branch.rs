//! TCF104 data-dependent-branch: an `if`, `elif`, `while`, ternary, or `and`/`or` operand whose
//! truth is tensor data (`if mask.any():`, `if x.max() > k:`). Dynamo cannot know which way the
//! branch goes without running the tensors, so the graph breaks (GB0170). For an `if`/`else`
//! that only picks between elementwise results of one tensor, the fix computes both sides and
//! selects with `torch.where`.

use std::collections::HashSet;

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, CmpOp, Expr, Operator, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::text::{indentation, line_ending, stands_alone, torch_name};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::imports::last_segment;
use crate::model::tensor::{ELEMENTWISE, Tensors};
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF104",
    name: "data-dependent-branch",
    summary: "replace branches on tensor values with torch.where or torch.cond",
    explanation: include_str!("../../codemods/data-dependent-branch/README.md"),
    hazard: "An `if`, `while`, ternary or `and`/`or` that tests tensor data in compiled code breaks the graph.",
    why: "Dynamo cannot tell which way the branch goes without running the tensors, so it ends the graph, \
              syncs with the device to read the value, and inside a loop runs the whole frame eagerly.",
    category: Category::GraphBreak,
    fixes: &[Safety::Unsafe],
    mentions: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The `if`, `elif`, `while`, ternary and `and`/`or` tests on tensor data in the function's compiled code.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    Some(Box::new(BranchFinder { function, tensors: function.tensors(), found: Vec::new(), tests: Vec::new() }))
}

/// The first line of an expression, shortened for a message.
pub(super) fn snippet(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim_end();
    if line.len() < text.len() || line.chars().count() > 60 {
        let short: String = line.chars().take(57).collect();
        format!("{}…", short.trim_end())
    } else {
        line.to_string()
    }
}

#[derive(Clone, Copy)]
enum Keyword {
    If,
    Elif,
    While,
    Ternary,
    And,
    Or,
}

struct Branch<'a> {
    keyword: Keyword,
    test: &'a Expr,
    site: Site,
    /// The `if` statement whose test this is (not for `elif`, `while`, ternaries, `and`/`or`).
    statement: Option<&'a ast::StmtIf>,
}

struct BranchFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    found: Vec<Branch<'a>>,
    /// Tests already looked at (and `assert` tests, never flagged): an `and`/`or` inside them is
    /// part of the test.
    tests: Vec<TextRange>,
}

impl<'a> BranchFinder<'_, 'a> {
    fn test(&mut self, keyword: Keyword, test: &'a Expr, site: Site, statement: Option<&'a ast::StmtIf>) {
        self.tests.push(test.range());
        if self.tensors.is_data_dependent(test) {
            self.found.push(Branch { keyword, test, site, statement });
        }
    }
}

impl<'a> FunctionHooks<'a> for BranchFinder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        match stmt {
            Stmt::If(if_stmt) => {
                self.test(Keyword::If, &if_stmt.test, site, Some(if_stmt));
                let site = Site { in_branch: true, ..site };
                for clause in &if_stmt.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.test(Keyword::Elif, test, site, None);
                    }
                }
            }
            // The test runs in the loop: it sits inside the loop for the amplifier.
            Stmt::While(while_stmt) => {
                self.test(Keyword::While, &while_stmt.test, Site { in_loop: true, ..site }, None)
            }
            // `assert` on a tensor is traced (`_assert_async`): never a finding.
            Stmt::Assert(assert) => self.tests.push(assert.test.range()),
            _ => {}
        }
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        match expr {
            Expr::If(if_expr) => self.test(Keyword::Ternary, &if_expr.test, site, None),
            Expr::BoolOp(op) => {
                let inside_test = self.tests.iter().any(|test| test.contains_range(op.range()));
                if !inside_test {
                    // Every operand but the last is tested for truth to decide whether to go on.
                    let keyword = if op.op == ast::BoolOp::And { Keyword::And } else { Keyword::Or };
                    for value in &op.values[..op.values.len() - 1] {
                        self.test(keyword, value, site, None);
                    }
                }
            }
            // Their own scopes: the tensors model does not know their names.
            Expr::Lambda(_) | Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                return false;
            }
            _ => {}
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        let model = function.model();
        for branch in self.found {
            let test = snippet(&model.source.text[branch.test.range()]);
            let construct = match branch.keyword {
                Keyword::If => format!("`if {test}:`"),
                Keyword::Elif => format!("`elif {test}:`"),
                Keyword::While => format!("`while {test}:`"),
                Keyword::Ternary => format!("the ternary test `{test}`"),
                Keyword::And => format!("`{test} and ...`"),
                Keyword::Or => format!("`{test} or ...`"),
            };
            let message = format!("{construct} in {} branches on tensor data: the graph breaks", function.describe());
            let diagnostic = Diagnostic::new(&RULE, branch.test.range(), message);
            let diagnostic = function.graph_break(diagnostic, branch.site);
            let fix = branch.statement.map(|statement| where_fix(model, self.tensors, statement));
            diagnostics.push(match fix {
                Some(Ok(fix)) => diagnostic.with_fix(fix),
                Some(Err(reason)) => diagnostic.without_fix(reason),
                None => diagnostic.without_fix(
                    "make the code branchless (`torch.where`, `torch.clamp`), or express the branch with `torch.cond`",
                ),
            });
        }
    }
}

/// `if c: x = a else: x = b` -> `x = torch.where(c, a, b)`, for an `if` (with or without `else`)
/// whose branches only assign names, each from elementwise results of one tensor, and whose test
/// is a 0-d boolean tensor. Then the result has the shape of that tensor whichever way `c` goes.
fn where_fix(model: &FileModel, tensors: &Tensors, if_stmt: &ast::StmtIf) -> Result<Fix, &'static str> {
    const NOT_A_SELECTION: &str = "the branches do more than pick a value for the same names: express the branch \
                                   with `torch.cond`, or make it branchless";
    let (condition, negated) =
        zero_dim_condition(tensors, &if_stmt.test).ok_or("tcfix cannot tell that the test is a 0-d boolean tensor (`.any()`, `.all()`, `x.max() > 0`): use `torch.cond`, or make the code branchless")?;
    let else_body: &[Stmt] = match if_stmt.elif_else_clauses.as_slice() {
        [] => &[],
        [clause] if clause.test.is_none() => &clause.body,
        _ => return Err("the `if` has `elif` branches: express it with `torch.cond`, or make it branchless"),
    };
    let taken = assignments(&if_stmt.body).ok_or(NOT_A_SELECTION)?;
    let other = assignments(else_body).ok_or(NOT_A_SELECTION)?;
    let assigned: HashSet<&str> = taken.iter().chain(&other).map(|(name, _)| *name).collect();
    let mut selections = Vec::new();
    for (name, value) in &taken {
        let else_value = other.iter().find(|(other_name, _)| other_name == name).map(|(_, value)| *value);
        if else_value.is_none() && !other.is_empty() {
            return Err(NOT_A_SELECTION);
        }
        // Without an `else` the name keeps its value: `x = x.clamp(...)` selects between `x` and that.
        let base = elementwise_base(tensors, value).ok_or(NOT_A_SELECTION)?;
        let kept = match else_value {
            Some(else_value) => elementwise_base(tensors, else_value).filter(|b| *b == base).ok_or(NOT_A_SELECTION)?,
            None if base == *name => base,
            None => return Err(NOT_A_SELECTION),
        };
        // Reading a name the branches assign would see its new value after the rewrite.
        let reads_assigned = [Some(*value), else_value]
            .into_iter()
            .flatten()
            .any(|v| names_read(v).iter().any(|read| assigned.contains(read.as_str()) && read != name));
        if reads_assigned {
            return Err(NOT_A_SELECTION);
        }
        let text = |expr: &Expr| model.source.text[expr.range()].to_string();
        let (when_true, when_false) = (text(value), else_value.map_or_else(|| kept.to_string(), text));
        let (when_true, when_false) = if negated { (when_false, when_true) } else { (when_true, when_false) };
        selections.push((name.to_string(), when_true, when_false));
    }
    if taken.len() != other.len() && !other.is_empty() {
        return Err(NOT_A_SELECTION);
    }
    // One `torch.where` per name re-evaluates the test each time: it must not read a name that an
    // earlier line has just reassigned.
    if selections.len() > 1 && names_read(condition).iter().any(|read| assigned.contains(read.as_str())) {
        return Err("the test reads a name the branches assign: rewrite by hand, computing the test once");
    }
    let source = &model.source;
    if !stands_alone(&source.text, if_stmt.range()) {
        return Err("the `if` shares its line with other code");
    }
    let has_comments = source.parsed.tokens().in_range(if_stmt.range()).iter().any(|t| t.kind() == TokenKind::Comment);
    if has_comments {
        return Err("the `if` holds comments the rewrite would drop: rewrite it by hand with `torch.where`");
    }
    let (torch, import) = torch_name(model);
    let indent = indentation(&source.text, if_stmt.start());
    let newline = line_ending(&source.text, if_stmt.start());
    let lines: Vec<String> = selections
        .iter()
        .map(|(name, a, b)| format!("{name} = {torch}.where({}, {a}, {b})", &source.text[condition.range()]))
        .collect();
    let mut edits = vec![Edit::replace(if_stmt.range(), lines.join(&format!("{newline}{indent}")))];
    edits.extend(import);
    let title = "Compute both branches and pick with `torch.where` (unsafe: both sides now always run, and NaN or \
                 inf in the side not taken can poison the gradients)";
    Ok(Fix::new(title, Safety::Unsafe, edits))
}

/// The test as a condition for `torch.where`, and whether it was negated (`not c`).
fn zero_dim_condition<'e>(tensors: &Tensors, test: &'e Expr) -> Option<(&'e Expr, bool)> {
    if let Expr::UnaryOp(op) = test {
        if op.op == UnaryOp::Not {
            let (condition, negated) = zero_dim_condition(tensors, &op.operand)?;
            return Some((condition, !negated));
        }
    }
    match test {
        Expr::Call(call) if is_any_or_all(tensors, call) => Some((test, false)),
        // `x.max() > k`, `m > self.limit` with `m = x.max() + 1`: the model knows the rank.
        Expr::Compare(compare) if compare.ops.len() == 1 && is_ordering(compare.ops[0]) => {
            tensors.is_zero_dim(test).then_some((test, false))
        }
        // `found = m > k` then `if found:`
        Expr::Name(_) => (tensors.is_mask(test) && tensors.is_zero_dim(test)).then_some((test, false)),
        _ => None,
    }
}

fn is_ordering(op: CmpOp) -> bool {
    matches!(op, CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE | CmpOp::Eq | CmpOp::NotEq)
}

/// `mask.any()`, `torch.isinf(x).all()`, `torch.any(mask)`: a 0-d boolean tensor.
fn is_any_or_all(tensors: &Tensors, call: &ast::ExprCall) -> bool {
    let name = last_segment(&call.func);
    let is_any_or_all = matches!(name, Some("any" | "all"));
    match call.func.as_ref() {
        Expr::Attribute(method) if call.arguments.is_empty() && tensors.is_tensor(&method.value) => is_any_or_all,
        _ => {
            let one_argument = call.arguments.keywords.is_empty() && call.arguments.args.len() == 1;
            is_any_or_all && one_argument && tensors.is_tensor_call(call)
        }
    }
}

fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_) => true,
        Expr::UnaryOp(op) => op.op == UnaryOp::USub && matches!(op.operand.as_ref(), Expr::NumberLiteral(_)),
        _ => false,
    }
}

/// `name = value` statements, one per name: what a branch that only selects values looks like.
fn assignments(body: &[Stmt]) -> Option<Vec<(&str, &Expr)>> {
    let mut found: Vec<(&str, &Expr)> = Vec::new();
    for stmt in body {
        let Stmt::Assign(assign) = stmt else { return None };
        let [Expr::Name(name)] = assign.targets.as_slice() else { return None };
        if found.iter().any(|(seen, _)| *seen == name.id.as_str()) {
            return None;
        }
        found.push((name.id.as_str(), &assign.value));
    }
    Some(found)
}

/// The tensor name an elementwise expression is computed from (`x`, `x.clamp(-m, m)`,
/// `torch.nan_to_num(x)`, `x * 0.5`), when its other operands are not tensors: its result then has
/// the shape of that tensor.
fn elementwise_base<'e>(tensors: &Tensors, expr: &'e Expr) -> Option<&'e str> {
    let no_tensor = |args: &[Expr], keywords: &[ast::Keyword]| {
        args.iter().chain(keywords.iter().map(|k| &k.value)).all(|arg| !tensors.is_tensor(arg))
    };
    match expr {
        Expr::Name(name) => tensors.is_tensor(expr).then_some(name.id.as_str()),
        Expr::UnaryOp(op) if op.op == UnaryOp::USub => elementwise_base(tensors, &op.operand),
        // With a number literal: an attribute could be a tensor parameter whose shape broadcasts.
        Expr::BinOp(op) if matches!(op.op, Operator::Add | Operator::Sub | Operator::Mult | Operator::Div) => {
            match (is_number(&op.left), is_number(&op.right)) {
                (false, true) => elementwise_base(tensors, &op.left),
                (true, false) => elementwise_base(tensors, &op.right),
                _ => None,
            }
        }
        Expr::Call(call) => {
            let name = last_segment(&call.func)?;
            if !ELEMENTWISE.contains(&name) {
                return None;
            }
            let args = &call.arguments;
            match call.func.as_ref() {
                Expr::Attribute(method) if tensors.is_tensor(&method.value) => {
                    no_tensor(&args.args, &args.keywords).then(|| elementwise_base(tensors, &method.value)).flatten()
                }
                _ if tensors.is_tensor(expr) => {
                    let (first, rest) = args.args.split_first()?;
                    no_tensor(rest, &args.keywords).then(|| elementwise_base(tensors, first)).flatten()
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The names an expression reads.
fn names_read(expr: &Expr) -> Vec<String> {
    struct Reads(Vec<String>);
    impl<'a> Visitor<'a> for Reads {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr {
                self.0.push(name.id.to_string());
            }
            walk_expr(self, expr);
        }
    }
    let mut reads = Reads(Vec::new());
    reads.visit_expr(expr);
    reads.0
}
