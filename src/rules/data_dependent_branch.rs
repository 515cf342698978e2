//! TCF104 data-dependent-branch: an `if`, `elif`, `while`, ternary, or `and`/`or` operand whose
//! truth is tensor data (`if mask.any():`, `if x.max() > k:`). Dynamo cannot know which way the
//! branch goes without running the tensors, so the graph breaks (GB0170). The fixes, each for
//! one shape of `if`:
//! - `if t: raise E("message")` -> `torch._assert_async(torch.logical_not(t), "message")` (assertion);
//! - `if m.any(): x[m] = <number>` -> the write alone, a no-op on an all-False mask (masked_write);
//! - an `if`/`else` that only picks between elementwise results of one tensor: compute both sides
//!   and select with `torch.where` (selection);
//! - `if dropout_probability < self.layerdrop:`: no fix, what keeps LayerDrop under compile instead
//!   (layerdrop).
//!
//! A Python part of the test (`labels is not None and <tensor test>`) stays an `if` around them.

mod assertion;
mod layerdrop;
mod masked_write;
mod rewrite;
mod selection;
mod ternary;

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, snippet};
use crate::fix::{Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::file::imports::last_segment;
use crate::model::file::module::is_self;
use crate::model::tensors::tensor::Tensors;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF104",
    name: "data-dependent-branch",
    summary: "replace branches on tensor values with torch.where or torch._assert_async",
    explanation: include_str!("../../codemods/data-dependent-branch/README.md"),
    hazard: "An `if`, `while`, ternary or `and`/`or` that tests tensor data in compiled code breaks the graph.",
    why: "Dynamo cannot tell which way the branch goes without running the tensors, so it ends the graph \
              and syncs with the device to read the value.",
    category: Category::GraphBreak,
    fixes: &[Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The `if`, `elif`, `while`, ternary and `and`/`or` tests on tensor data in the function's compiled code.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    Some(Box::new(BranchFinder {
        function,
        tensors: function.tensors(),
        found: Vec::new(),
        tests: Vec::new(),
        statement: None,
    }))
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
    /// The ternary whose test this is, and the name it is assigned to (`mscale = a if t else b`).
    ternary: Option<(&'a ast::ExprIf, Option<&'a str>)>,
}

struct BranchFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    found: Vec<Branch<'a>>,
    /// Tests already looked at (and `assert` tests, never flagged): an `and`/`or` inside them is
    /// part of the test.
    tests: Vec<TextRange>,
    /// The statement being walked: the one a ternary is assigned by, if any.
    statement: Option<&'a Stmt>,
}

impl<'a> BranchFinder<'_, 'a> {
    /// The name `ternary` is assigned to when it is the whole value of `name = ...`: the walk
    /// hands a statement to the hooks just before its expressions, so the statement being walked
    /// is the one that holds it.
    fn assigned_name(&self, ternary: &ast::ExprIf) -> Option<&'a str> {
        let Some(Stmt::Assign(assign)) = self.statement else { return None };
        let [Expr::Name(name)] = assign.targets.as_slice() else { return None };
        (assign.value.range() == ternary.range()).then_some(name.id.as_str())
    }

    fn test(&mut self, keyword: Keyword, test: &'a Expr, site: Site, statement: Option<&'a ast::StmtIf>) {
        self.tests.push(test.range());
        if self.tensors.is_data_dependent(test) {
            self.found.push(Branch { keyword, test, site, statement, ternary: None });
        }
    }
}

impl<'a> FunctionHooks<'a> for BranchFinder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        self.statement = Some(stmt);
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
            Expr::If(if_expr) => {
                self.test(Keyword::Ternary, &if_expr.test, site, None);
                let assigned = self.assigned_name(if_expr);
                if let Some(branch) = self.found.last_mut().filter(|branch| branch.test.range() == if_expr.test.range()) {
                    branch.ternary = Some((if_expr, assigned));
                }
            }
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
            let fix = match (branch.statement, branch.ternary) {
                _ if let Some(flag) = self.tensors.reads_flag(branch.test) => Some(Err(flag_reason(flag))),
                _ if self.tensors.reads_numpy(branch.test) => Some(Err(NUMPY_REASON.into())),
                (Some(statement), _) => Some(if_fix(function, self.tensors, statement)),
                (None, Some((ternary, assigned))) => Some(ternary_fix(function, self.tensors, ternary, assigned)),
                (None, None) => None,
            };
            diagnostics.push(match fix {
                Some(Ok(fix)) => diagnostic.with_fix(fix),
                Some(Err(reason)) => diagnostic.without_fix(reason),
                None => diagnostic.without_fix(NO_FIX),
            });
        }
    }
}

/// The fix for an `if` on tensor data, or why there is none: the first shape that fits, then what
/// in the body keeps it a branch.
fn if_fix(function: &Function, tensors: &Tensors, if_stmt: &ast::StmtIf) -> Result<Fix, String> {
    let model = function.model();
    if let Some(advice) = layerdrop::layerdrop_advice(if_stmt) {
        return Err(advice);
    }
    if let [Stmt::Raise(raise)] = if_stmt.body.as_slice() {
        return assertion::assert_fix(model, tensors, function.checker.settings.target_torch, if_stmt, raise);
    }
    if let Some(fix) = masked_write::unguarded_write_fix(model, tensors, if_stmt) {
        return fix;
    }
    if if_stmt.elif_else_clauses.iter().any(|clause| clause.test.is_some()) {
        return Err("the `if` has `elif` branches: express it with `torch.cond`, or make it branchless".into());
    }
    let bodies = std::iter::once(&if_stmt.body).chain(if_stmt.elif_else_clauses.iter().map(|clause| &clause.body));
    if let Some(reason) = bodies.flat_map(|body| body.iter()).find_map(|stmt| keeps_a_branch(model, stmt)) {
        return Err(reason);
    }
    // An `if` statement is in a def, never in a lambda.
    let FunctionNode::Def(def) = model.function(function.id).node else { return Err(NO_FIX.into()) };
    selection::where_fix(model, tensors, &def.body, if_stmt)
}

fn ternary_fix(
    function: &Function,
    tensors: &Tensors,
    ternary: &ast::ExprIf,
    assigned: Option<&str>,
) -> Result<Fix, String> {
    let model = function.model();
    let FunctionNode::Def(def) = model.function(function.id).node else { return Err(NO_FIX.into()) };
    ternary::where_fix(model, tensors, &def.body, ternary, assigned)
}

/// A flag that is a Python bool on one path and a mask on another: `torch.where` needs a tensor
/// on every path, and which one the test sees depends on the path taken.
fn flag_reason(flag: &str) -> String {
    format!(
        "`{flag}` is a tensor on one path and a Python bool on another: make it a tensor on every path and the \
         code branchless (`torch.where`), or express the branch with `torch.cond`"
    )
}

/// A numpy test: Dynamo traces it as a tensor, but eagerly it stays numpy, which `torch.where`
/// does not take.
const NUMPY_REASON: &str = "the test reads a numpy array (a tensor only to Dynamo): compute it with torch, or move \
                            the check out of the compiled code";

const NO_FIX: &str =
    "make the code branchless (`torch.where`, `torch.clamp`), or express the branch with `torch.cond`";

/// What in a branch's statement `torch.where` cannot express: leaving early, raising, writing in
/// place, calling for an effect, running a submodule.
fn keeps_a_branch(model: &FileModel, stmt: &Stmt) -> Option<String> {
    let quote = |range: TextRange| snippet(&model.source.text[range]);
    let reason = match stmt {
        Stmt::Continue(_) | Stmt::Break(_) => {
            let keyword = if matches!(stmt, Stmt::Continue(_)) { "continue" } else { "break" };
            format!(
                "compute every iteration and mask its result, or move the loop out of the compiled region: the \
                 branch cuts the loop short (`{keyword}`) on a tensor value"
            )
        }
        Stmt::Return(_) => "return one value for both outcomes (`torch.where` on the results, or `torch.cond`), by \
                            hand: the branch returns early"
            .into(),
        Stmt::Raise(_) => "the branch raises after other work: keep only the raise in the `if` (tcfix then turns it \
                           into `torch._assert_async`), or rewrite by hand"
            .into(),
        Stmt::AugAssign(aug) => format!(
            "write the new value of `{}` unconditionally with `torch.where`, by hand: the branch updates it in \
             place (`{}=`)",
            quote(aug.target.range()),
            aug.op.as_str()
        ),
        Stmt::Assign(assign) if assign.targets.iter().any(|t| matches!(t, Expr::Subscript(_) | Expr::Attribute(_))) => {
            "compute the new value with `torch.where(cond, new, old)` and write it unconditionally, by hand: the \
             branch writes into a tensor or an attribute"
                .into()
        }
        Stmt::Expr(expr) => match expr.value.as_ref() {
            Expr::Call(call) if last_segment(&call.func).is_some_and(|name| name.ends_with('_') && !name.ends_with("__")) => {
                format!(
                    "use the out-of-place form under `torch.where`, by hand: the branch changes a tensor in place \
                     (`{}`)",
                    quote(call.func.range())
                )
            }
            _ => format!(
                "move `{}` out of the compiled region or drop it: a call made for its effect cannot depend on a \
                 tensor value inside one graph",
                quote(expr.range())
            ),
        },
        Stmt::Assign(assign) if calls_self(&assign.value) => format!(
            "use `torch.cond`, or call `{}` unconditionally by hand: `torch.where` would call it every time, \
             not only when the test holds",
            quote(assign.value.range())
        ),
        _ => return None,
    };
    Some(reason)
}

/// `self.image_embed(...)`, `self._merge(...)`: a submodule or a method, which may do anything.
fn calls_self(expr: &Expr) -> bool {
    matches!(expr, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Attribute(attr) if is_self(&attr.value)))
}
