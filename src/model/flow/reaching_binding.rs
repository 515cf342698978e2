//! The binding that reaches a use: in the block holding the statement that uses a name, the
//! statement that last binds it before (`m = torch.tensor(m, dtype=torch.bool)` after
//! `m = helper(...)`, `sizes = sizes.tolist()` after `sizes = gates.sum(0)`). The function's other
//! bindings of the name do not reach that use; the tensor sets of `model::tensors` cannot say so,
//! as they judge a name by all its bindings at once.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

/// How the statements between a binding and a use touch the name.
pub enum Uses {
    Untouched,
    Read,
    Bound,
}

/// The value of the statement that last binds `name` as a whole (`name = value`) before the
/// statement holding `at`, in the same block, and how the statements in between use `name`.
/// `None` if some statement in between may rebind it, or no such binding is in the block.
pub fn last_binding<'a>(def: &'a ast::StmtFunctionDef, name: &str, at: TextRange) -> Option<(&'a Expr, Uses)> {
    let (block, index) = statement_holding(&def.body, at)?;
    if binds_within(&block[index], name, at) {
        return None;
    }
    let mut between = Uses::Untouched;
    for stmt in block[..index].iter().rev() {
        if let Some(value) = binds(stmt, name) {
            return Some((value, between));
        }
        let mut uses = NameUses { name, uses: Uses::Untouched };
        uses.visit_stmt(stmt);
        match uses.uses {
            Uses::Bound => return None,
            Uses::Read => between = Uses::Read,
            Uses::Untouched => {}
        }
    }
    None
}

/// What a search for the binding that reaches a use found in one block.
enum Reached<'a> {
    /// `name = value` reaches the use.
    Value(&'a Expr),
    /// Something may bind the name in another way, or more than one binding may reach: unknown.
    Unknown,
    /// Nothing in the block binds the name before the use: the block around it decides.
    Outside,
}

/// The value of the binding that reaches `at`, looking past the block of the statement that holds
/// it into the blocks around (`x = f(...)` then `if c: ... else: y = list(x)`): the branches of an
/// `if`, a `with` or a `try` that do not hold the use do not reach it. A loop whose body binds the
/// name, a `while`, a `match`, or a statement that binds it in another way, say nothing.
pub fn reaching_value<'a>(def: &'a ast::StmtFunctionDef, name: &str, at: TextRange) -> Option<&'a Expr> {
    match reaching_in(&def.body, name, at) {
        Reached::Value(value) => Some(value),
        Reached::Unknown | Reached::Outside => None,
    }
}

fn reaching_in<'a>(body: &'a [Stmt], name: &str, at: TextRange) -> Reached<'a> {
    let Some(index) = body.iter().position(|stmt| stmt.range().contains_range(at)) else { return Reached::Unknown };
    let stmt = &body[index];
    let inner = blocks(stmt).into_iter().find(|block| block.iter().any(|s| s.range().contains_range(at)));
    match (stmt, inner) {
        (Stmt::While(_) | Stmt::Match(_) | Stmt::FunctionDef(_) | Stmt::ClassDef(_), _) => return Reached::Unknown,
        (_, Some(block)) => {
            match reaching_in(block, name, at) {
                Reached::Outside => {}
                reached => return reached,
            }
            // A loop's later passes reach its body's first statements; its target binds the name.
            if let Stmt::For(for_stmt) = stmt {
                let mut uses = NameUses { name, uses: Uses::Untouched };
                uses.visit_expr(&for_stmt.target);
                uses.visit_body(&for_stmt.body);
                if matches!(uses.uses, Uses::Bound) {
                    return Reached::Unknown;
                }
            }
            if header_binds(stmt, name) {
                return Reached::Unknown;
            }
        }
        (_, None) => {
            if binds_within(stmt, name, at) {
                return Reached::Unknown;
            }
        }
    }
    for stmt in body[..index].iter().rev() {
        if let Some(value) = binds(stmt, name) {
            return Reached::Value(value);
        }
        let mut uses = NameUses { name, uses: Uses::Untouched };
        uses.visit_stmt(stmt);
        if matches!(uses.uses, Uses::Bound) {
            return Reached::Unknown;
        }
    }
    Reached::Outside
}

/// Whether the parts of a compound statement outside its blocks bind `name`: an `if`'s tests
/// (`:=`), a `with`'s `as` targets, an `except ... as name`.
fn header_binds(stmt: &Stmt, name: &str) -> bool {
    let mut uses = NameUses { name, uses: Uses::Untouched };
    match stmt {
        Stmt::If(s) => {
            uses.visit_expr(&s.test);
            s.elif_else_clauses.iter().filter_map(|c| c.test.as_ref()).for_each(|test| uses.visit_expr(test));
        }
        Stmt::With(s) => s.items.iter().for_each(|item| {
            uses.visit_expr(&item.context_expr);
            if let Some(target) = &item.optional_vars {
                uses.visit_expr(target);
            }
        }),
        Stmt::Try(s) => {
            return s.handlers.iter().any(|handler| {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                handler.name.as_ref().is_some_and(|bound| bound.id.as_str() == name)
            });
        }
        _ => {}
    }
    matches!(uses.uses, Uses::Bound)
}

/// Whether, in the statement holding `at`, something binds `name` that the statement before
/// cannot see: a comprehension or lambda around `at` with `name` as its own variable
/// (`[int(n) for n in sizes]`), or `name := ...` anywhere in the statement.
fn binds_within(stmt: &Stmt, name: &str, at: TextRange) -> bool {
    let mut finder = InnerBinding { name, at, found: false };
    finder.visit_stmt(stmt);
    finder.found
}

struct InnerBinding<'n> {
    name: &'n str,
    at: TextRange,
    found: bool,
}

impl<'a> Visitor<'a> for InnerBinding<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        let binds = |target: &Expr| {
            let mut uses = NameUses { name: self.name, uses: Uses::Untouched };
            uses.visit_expr(target);
            matches!(uses.uses, Uses::Bound)
        };
        let around = expr.range().contains_range(self.at);
        self.found |= match expr {
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                around && generators.iter().any(|generator| binds(&generator.target))
            }
            Expr::Lambda(lambda) => {
                around
                    && lambda.parameters.as_ref().is_some_and(|parameters| {
                        parameters.iter().any(|parameter| parameter.name().as_str() == self.name)
                    })
            }
            Expr::Named(named) => binds(&named.target),
            _ => false,
        };
        walk_expr(self, expr);
    }
}

/// `name = value` as a whole statement: the value. In an unpacking of a tuple written out
/// (`b, n, cap = *x.shape, x.device, self.cap`), the element that lands in `name`: counted from
/// the front up to the value's first `*`, from the back after its last one.
fn binds<'a>(stmt: &'a Stmt, name: &str) -> Option<&'a Expr> {
    let Stmt::Assign(assign) = stmt else { return None };
    match assign.targets.as_slice() {
        [Expr::Name(target)] => (target.id.as_str() == name).then_some(&*assign.value),
        [Expr::Tuple(targets)] => unpacked(&targets.elts, &assign.value, name),
        _ => None,
    }
}

/// The element of `value` (a tuple or list display) that unpacking it into `targets` gives `name`.
fn unpacked<'a>(targets: &[Expr], value: &'a Expr, name: &str) -> Option<&'a Expr> {
    let values = match value {
        Expr::Tuple(tuple) => &tuple.elts,
        Expr::List(list) => &list.elts,
        _ => return None,
    };
    if targets.iter().any(|target| !matches!(target, Expr::Name(_))) {
        return None;
    }
    let at = targets.iter().position(|target| matches!(target, Expr::Name(n) if n.id.as_str() == name))?;
    let first_star = values.iter().position(Expr::is_starred_expr).unwrap_or(values.len());
    let last_star = values.iter().rposition(Expr::is_starred_expr);
    let element = match last_star {
        None if values.len() == targets.len() => &values[at],
        None => return None,
        Some(_) if at < first_star => &values[at],
        Some(last) => {
            let from_end = targets.len() - at;
            let index = values.len().checked_sub(from_end).filter(|&index| index > last)?;
            &values[index]
        }
    };
    Some(element)
}

/// The innermost statement holding `range` that runs once per pass of its block: the block and
/// its index. `None` inside a `while` test (it runs again after its body, whose bindings then
/// reach it), a `match` (its cases are not followed) or a nested `def`/`class` (another scope).
fn statement_holding(body: &[Stmt], range: TextRange) -> Option<(&[Stmt], usize)> {
    let index = body.iter().position(|stmt| stmt.range().contains_range(range))?;
    let stmt = &body[index];
    if let Some(inner) = blocks(stmt).into_iter().find_map(|block| statement_holding(block, range)) {
        return Some(inner);
    }
    match stmt {
        Stmt::While(_) | Stmt::Match(_) | Stmt::FunctionDef(_) | Stmt::ClassDef(_) => None,
        _ => Some((body, index)),
    }
}

/// The statement lists a compound statement holds (a `def` or `class` body is another scope).
fn blocks(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::If(s) => {
            std::iter::once(s.body.as_slice()).chain(s.elif_else_clauses.iter().map(|c| c.body.as_slice())).collect()
        }
        Stmt::With(s) => vec![&s.body],
        Stmt::For(s) => vec![&s.body, &s.orelse],
        Stmt::While(s) => vec![&s.body, &s.orelse],
        Stmt::Try(s) => {
            let mut blocks = vec![s.body.as_slice(), &s.orelse, &s.finalbody];
            blocks.extend(s.handlers.iter().map(|h| {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                h.body.as_slice()
            }));
            blocks
        }
        _ => Vec::new(),
    }
}

/// Whether a statement reads or binds `name` anywhere (binding wins).
struct NameUses<'n> {
    name: &'n str,
    uses: Uses,
}

impl NameUses<'_> {
    /// `import spans`, `import a.spans as spans`, `from m import spans`: binds its last name or alias.
    fn alias_binds(&self, alias: &ast::Alias) -> bool {
        let bound = alias.asname.as_ref().unwrap_or(&alias.name).id.as_str();
        bound.split('.').next() == Some(self.name)
    }
}

impl<'a> Visitor<'a> for NameUses<'_> {
    /// Bindings that are no name expression: imports, `def`/`class`, `except ... as`.
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let binds = match stmt {
            Stmt::Import(import) => import.names.iter().any(|alias| self.alias_binds(alias)),
            Stmt::ImportFrom(import) => import.names.iter().any(|alias| self.alias_binds(alias)),
            Stmt::FunctionDef(def) => def.name.id.as_str() == self.name,
            Stmt::ClassDef(class) => class.name.id.as_str() == self.name,
            Stmt::Try(try_stmt) => try_stmt.handlers.iter().any(|handler| {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                handler.name.as_ref().is_some_and(|name| name.id.as_str() == self.name)
            }),
            Stmt::Match(_) => true, // captures bind names in patterns: not followed
            _ => false,
        };
        if binds {
            self.uses = Uses::Bound;
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(n) = expr
            && n.id.as_str() == self.name
        {
            self.uses = match (n.ctx, &self.uses) {
                (ast::ExprContext::Load, Uses::Untouched) => Uses::Read,
                (ast::ExprContext::Load, _) => return,
                _ => Uses::Bound,
            };
        }
        walk_expr(self, expr);
    }
}

/// The names `body` binds anywhere (assignments, `for` and `with` targets, walrus), nested
/// functions and classes included.
pub fn names_bound(body: &[Stmt]) -> rustc_hash::FxHashSet<&str> {
    struct Stores<'a> {
        names: rustc_hash::FxHashSet<&'a str>,
    }
    impl<'a> Visitor<'a> for Stores<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(name) = expr
                && name.ctx == ast::ExprContext::Store
            {
                self.names.insert(name.id.as_str());
            }
            walk_expr(self, expr);
        }
    }
    let mut stores = Stores { names: rustc_hash::FxHashSet::default() };
    stores.visit_body(body);
    stores.names
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_parser::parse_module;

    /// The value bound last before the first use of `name` on the line holding `marker`, as text.
    fn reaching(source: &str, name: &str, marker: &str) -> Option<String> {
        let parsed = parse_module(source).unwrap();
        let Stmt::FunctionDef(def) = &parsed.syntax().body[0] else { panic!("a def first") };
        let at = source.find(marker).unwrap();
        let at = TextRange::at((at as u32).into(), (marker.len() as u32).into());
        last_binding(def, name, at).map(|(value, _)| source[value.range()].to_string())
    }

    /// `reaching_value` at the first use of `name` on the line holding `marker`, as text.
    fn reaching_through(source: &str, name: &str, marker: &str) -> Option<String> {
        let parsed = parse_module(source).unwrap();
        let Stmt::FunctionDef(def) = &parsed.syntax().body[0] else { panic!("a def first") };
        let at = source.find(marker).unwrap();
        let at = TextRange::at((at as u32).into(), (marker.len() as u32).into());
        reaching_value(def, name, at).map(|value| source[value.range()].to_string())
    }

    #[test]
    fn a_use_in_a_branch_is_reached_by_the_binding_before_the_if() {
        let source = "def f(g, c):\n    s = g.sum(0)\n    if c:\n        s = s[0]\n    else:\n        n = list(s)\n";
        assert_eq!(reaching_through(source, "s", "list(s)").as_deref(), Some("g.sum(0)"));
        // The `if` body's binding does not reach the `else`, but one inside the same block does.
        let source = "def f(g, c):\n    s = g.sum(0)\n    if c:\n        s = g\n        n = list(s)\n";
        assert_eq!(reaching_through(source, "s", "list(s)").as_deref(), Some("g"));
        // A loop body that binds the name again: a later pass sees that binding.
        let source = "def f(g, c):\n    s = g.sum(0)\n    for x in c:\n        n = list(s)\n        s = x\n";
        assert_eq!(reaching_through(source, "s", "list(s)"), None);
        // A walrus in the test, or a `while`: unknown.
        let source = "def f(g, c):\n    s = g.sum(0)\n    if (s := c):\n        n = list(s)\n";
        assert_eq!(reaching_through(source, "s", "list(s)"), None);
        let source = "def f(g, c):\n    s = g.sum(0)\n    while c:\n        n = list(s)\n";
        assert_eq!(reaching_through(source, "s", "list(s)"), None);
    }

    #[test]
    fn a_name_rebound_from_itself_is_reached_by_the_binding_before() {
        let source = "def f(g):\n    s = g.sum(0)\n    s = s.tolist()\n    return s\n";
        assert_eq!(reaching(source, "s", "s.tolist()").as_deref(), Some("g.sum(0)"));
    }

    #[test]
    fn a_use_in_a_nested_block_sees_only_its_own_block() {
        let source = "def f(g):\n    s = g.sum(0)\n    if g:\n        n = s.tolist()\n";
        assert_eq!(reaching(source, "s", "s.tolist()"), None);
        let source = "def f(g):\n    if g:\n        s = g.sum(0)\n        n = s.tolist()\n";
        assert_eq!(reaching(source, "s", "s.tolist()").as_deref(), Some("g.sum(0)"));
    }

    #[test]
    fn a_comprehension_or_walrus_of_the_same_name_reaches_nothing() {
        let source = "def f(g, w):\n    s = g.sum(0)\n    c = [int(s) for s in w]\n";
        assert_eq!(reaching(source, "s", "int(s)"), None);
        let source = "def f(g, w):\n    s = g.sum(0)\n    c = (s := w) and s.tolist()\n";
        assert_eq!(reaching(source, "s", "s.tolist()"), None);
        let source = "def f(g, w):\n    s = g.sum(0)\n    c = [int(s) for n in w]\n";
        assert_eq!(reaching(source, "s", "int(s)").as_deref(), Some("g.sum(0)"));
    }

    #[test]
    fn a_rebinding_in_between_or_a_while_test_reaches_nothing() {
        let source = "def f(g):\n    s = g.sum(0)\n    for s in g:\n        pass\n    n = s.tolist()\n";
        assert_eq!(reaching(source, "s", "s.tolist()"), None);
        let source = "def f(g):\n    s = g.sum(0)\n    while s.tolist():\n        s = [1]\n";
        assert_eq!(reaching(source, "s", "s.tolist()"), None);
    }

    #[test]
    fn an_unpacked_tuple_gives_each_name_its_element() {
        let source = "def f(x):\n    b, n, dev, cap = *x.shape, x.device, x.cap\n    y = cap\n";
        assert_eq!(reaching(source, "cap", "y = cap").as_deref(), Some("x.cap"));
        assert_eq!(reaching(source, "dev", "y = cap").as_deref(), Some("x.device"));
        // `b` and `n` come out of the starred shape: no one element.
        assert_eq!(reaching(source, "n", "y = cap"), None);
        let source = "def f(x):\n    a, c = x.cap, x.pad\n    y = c\n";
        assert_eq!(reaching(source, "c", "y = c").as_deref(), Some("x.pad"));
        let source = "def f(x):\n    a, c = x.pair\n    y = c\n";
        assert_eq!(reaching(source, "c", "y = c"), None);
        let source = "def f(x):\n    a, *c = x.cap, x.pad, x.d\n    y = a\n";
        assert_eq!(reaching(source, "a", "y = a"), None);
    }
}
