//! The names a comprehension binds, as the tensors model would see them: `for t, m in zip(x,
//! mask)` makes `t` a tensor and `m` a mask; `for t in [a, b]` makes `t` a tensor when every
//! element is one. The function's tensors model does not know these names (they live in the
//! comprehension's own scope), so a bool-mask read inside one (`[t[m] for t, m in zip(x,
//! mask)]`, lightglue's pruning) would go unseen. Measured under torch 2.15 (CPython 3.11): a
//! break inside a list comprehension breaks the graph at its statement, and Dynamo resumes
//! after it; inside a generator expression Dynamo cannot resume and skips the whole function.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, CmpOp, Expr, ExprContext, Operator, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::tensors::tensor::Tensors;
/// What the comprehension's own names are.
#[derive(Default)]
pub struct ComprehensionNames<'a> {
    tensors: HashSet<&'a str>,
    masks: HashSet<&'a str>,
    /// Every name the comprehension binds, tensor or not: it hides the function's.
    bound: HashSet<&'a str>,
}

impl<'a> ComprehensionNames<'a> {
    /// The names bound by a comprehension's `for` clauses, in order (a later clause sees the
    /// earlier ones), inside those of the comprehensions around it.
    fn within(outer: &Self, generators: &'a [ast::Comprehension], tensors: &Tensors) -> Self {
        let mut names = ComprehensionNames {
            tensors: outer.tensors.clone(),
            masks: outer.masks.clone(),
            bound: outer.bound.clone(),
        };
        for generator in generators {
            names.bind(&generator.target, &generator.iter, tensors);
        }
        names
    }

    fn bind(&mut self, target: &'a Expr, iter: &'a Expr, tensors: &Tensors) {
        match (target, iter) {
            // `zip(a, b)`: each target takes a row (or an element) of its argument.
            (Expr::Tuple(targets), Expr::Call(call))
                if matches!(call.func.as_ref(), Expr::Name(name) if name.id == "zip")
                    && call.arguments.keywords.is_empty()
                    && targets.elts.len() == call.arguments.args.len() =>
            {
                for (target, argument) in targets.elts.iter().zip(&call.arguments.args) {
                    self.bind_element(target, argument, tensors);
                }
            }
            _ => self.bind_element(target, iter, tensors),
        }
    }

    /// `target` takes the elements of `iterable`: rows of a tensor, or items of a list or tuple.
    fn bind_element(&mut self, target: &'a Expr, iterable: &'a Expr, tensors: &Tensors) {
        let Expr::Name(name) = target else {
            self.bound.extend(bound_names(target));
            return;
        };
        let name = name.id.as_str();
        self.bound.insert(name);
        let items: &[Expr] = match iterable {
            Expr::List(list) => &list.elts,
            Expr::Tuple(tuple) => &tuple.elts,
            _ => std::slice::from_ref(iterable),
        };
        if items.is_empty() {
            return;
        }
        if items.iter().all(|item| self.is_mask(item, tensors)) {
            self.masks.insert(name);
            self.tensors.insert(name);
        } else if items.iter().all(|item| self.is_tensor(item, tensors)) {
            self.tensors.insert(name);
        }
    }

    /// Whether the comprehension binds `name` (hiding the function's).
    pub fn binds(&self, name: &str) -> bool {
        self.bound.contains(name)
    }

    /// Whether `expr` is a tensor, with the comprehension's names in scope. An expression that
    /// reads one of them in a way not modelled here is not known to be one.
    pub fn is_tensor(&self, expr: &Expr, tensors: &Tensors) -> bool {
        match expr {
            Expr::Name(name) if self.bound.contains(name.id.as_str()) => self.tensors.contains(name.id.as_str()),
            Expr::Subscript(subscript) => self.is_tensor(&subscript.value, tensors),
            _ if self.reads_own_name(expr) => self.is_mask(expr, tensors),
            _ => tensors.is_tensor(expr),
        }
    }

    /// Whether `expr` is a boolean tensor, with the comprehension's names in scope.
    pub fn is_mask(&self, expr: &Expr, tensors: &Tensors) -> bool {
        match expr {
            Expr::Name(name) if self.bound.contains(name.id.as_str()) => self.masks.contains(name.id.as_str()),
            _ if !self.reads_own_name(expr) => tensors.is_mask(expr),
            Expr::UnaryOp(op) => op.op == UnaryOp::Invert && self.is_mask(&op.operand, tensors),
            Expr::BinOp(op) => {
                matches!(op.op, Operator::BitAnd | Operator::BitOr | Operator::BitXor)
                    && self.is_mask(&op.left, tensors)
                    && self.is_mask(&op.right, tensors)
            }
            // `t > 0`, `ids[:, 0] == u`: an ordering or equality with a tensor on one side.
            Expr::Compare(compare) => {
                let operands = || std::iter::once(compare.left.as_ref()).chain(&compare.comparators);
                compare.ops.iter().all(|op| !matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn))
                    && operands().any(|operand| self.is_tensor(operand, tensors))
            }
            _ => false,
        }
    }

    /// Whether `expr` reads a name the comprehension binds.
    fn reads_own_name(&self, expr: &Expr) -> bool {
        struct Reads<'n, 'a> {
            bound: &'n HashSet<&'a str>,
            found: bool,
        }
        impl<'e> Visitor<'e> for Reads<'_, '_> {
            fn visit_expr(&mut self, expr: &'e Expr) {
                match expr {
                    Expr::Name(name) if self.bound.contains(name.id.as_str()) => self.found = true,
                    _ if !self.found => walk_expr(self, expr),
                    _ => {}
                }
            }
        }
        let mut reads = Reads { bound: &self.bound, found: false };
        reads.visit_expr(expr);
        reads.found
    }
}

/// The names of the comprehensions around `at` in a function's body (innermost last), as
/// `ComprehensionNames` sees them: `int(sizes)` in `[int(sizes) for sizes in widths]` reads the
/// comprehension's `sizes`, not the function's.
pub fn around<'a>(body: &'a [Stmt], at: TextRange, tensors: &Tensors) -> ComprehensionNames<'a> {
    struct Enclosing<'a> {
        at: TextRange,
        generators: Vec<&'a [ast::Comprehension]>,
    }
    impl<'a> Visitor<'a> for Enclosing<'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if stmt.range().contains_range(self.at) {
                walk_stmt(self, stmt);
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            if !expr.range().contains_range(self.at) {
                return;
            }
            match expr {
                Expr::ListComp(ast::ExprListComp { generators, .. })
                | Expr::SetComp(ast::ExprSetComp { generators, .. })
                | Expr::DictComp(ast::ExprDictComp { generators, .. })
                | Expr::Generator(ast::ExprGenerator { generators, .. }) => self.generators.push(generators),
                _ => {}
            }
            walk_expr(self, expr);
        }
    }
    let mut enclosing = Enclosing { at, generators: Vec::new() };
    body.iter().for_each(|stmt| enclosing.visit_stmt(stmt));
    enclosing.generators.into_iter().fold(ComprehensionNames::default(), |outer, generators| {
        ComprehensionNames::within(&outer, generators, tensors)
    })
}

fn bound_names(target: &Expr) -> Vec<&str> {
    match target {
        Expr::Name(name) => vec![name.id.as_str()],
        Expr::Tuple(tuple) => tuple.elts.iter().flat_map(bound_names).collect(),
        Expr::List(list) => list.elts.iter().flat_map(bound_names).collect(),
        Expr::Starred(starred) => bound_names(&starred.value),
        _ => Vec::new(),
    }
}

/// A bool-mask read inside a comprehension.
pub struct MaskRead<'a> {
    pub read: &'a Expr,
    /// Inside a generator expression: a break there skips the whole function.
    pub in_generator: bool,
}

/// The bool-mask reads (`t[m]`) inside a comprehension, nested ones included.
pub fn mask_reads<'a>(comprehension: &'a Expr, tensors: &Tensors) -> Vec<MaskRead<'a>> {
    let mut finder =
        MaskReads { tensors, scopes: vec![ComprehensionNames::default()], generators: 0, found: Vec::new() };
    finder.visit_expr(comprehension);
    finder.found
}

struct MaskReads<'t, 'a> {
    tensors: &'t Tensors<'t, 't>,
    scopes: Vec<ComprehensionNames<'a>>,
    /// How many generator expressions the walk is in.
    generators: usize,
    found: Vec<MaskRead<'a>>,
}

impl<'a> MaskReads<'_, 'a> {
    fn names(&self) -> &ComprehensionNames<'a> {
        self.scopes.last().expect("the outermost scope is never popped")
    }

    fn is_mask_read(&self, subscript: &ast::ExprSubscript) -> bool {
        let names = self.names();
        subscript.ctx == ExprContext::Load
            && names.is_tensor(&subscript.value, self.tensors)
            && match subscript.slice.as_ref() {
                Expr::Tuple(tuple) => tuple.elts.iter().any(|index| names.is_mask(index, self.tensors)),
                index => names.is_mask(index, self.tensors),
            }
    }
}

impl<'a> MaskReads<'_, 'a> {
    /// What a comprehension evaluates with its own names bound: its elements, its conditions and
    /// every iterable but the first.
    fn visit_comprehension_body(&mut self, comprehension: &'a Expr, generators: &'a [ast::Comprehension]) {
        for (index, generator) in generators.iter().enumerate() {
            if index > 0 {
                self.visit_expr(&generator.iter);
            }
            for condition in &generator.ifs {
                self.visit_expr(condition);
            }
        }
        match comprehension {
            Expr::ListComp(comp) => self.visit_expr(&comp.elt),
            Expr::SetComp(comp) => self.visit_expr(&comp.elt),
            Expr::Generator(comp) => self.visit_expr(&comp.elt),
            Expr::DictComp(comp) => {
                if let Some(key) = &comp.key {
                    self.visit_expr(key);
                }
                self.visit_expr(&comp.value);
            }
            _ => {}
        }
    }
}

impl<'a> Visitor<'a> for MaskReads<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        let generators = match expr {
            Expr::ListComp(comp) => Some(&comp.generators),
            Expr::SetComp(comp) => Some(&comp.generators),
            Expr::DictComp(comp) => Some(&comp.generators),
            Expr::Generator(comp) => Some(&comp.generators),
            // Its parameters are names the comprehension does not bind: not followed.
            Expr::Lambda(_) => return,
            _ => None,
        };
        if let Some(generators) = generators {
            // The first iterable is evaluated in the enclosing scope, before any name is bound.
            if let Some(first) = generators.first() {
                self.visit_expr(&first.iter);
            }
            let is_generator = usize::from(expr.is_generator_expr());
            let names = ComprehensionNames::within(self.names(), generators, self.tensors);
            self.scopes.push(names);
            self.generators += is_generator;
            self.visit_comprehension_body(expr, generators);
            self.generators -= is_generator;
            self.scopes.pop();
            return;
        }
        if let Expr::Subscript(subscript) = expr
            && self.is_mask_read(subscript)
        {
            self.found.push(MaskRead { read: expr, in_generator: self.generators > 0 });
        }
        walk_expr(self, expr);
    }
}
