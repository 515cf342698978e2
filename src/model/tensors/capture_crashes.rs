//! What fails to compile, rather than break, once a capture option is on (torch 2.15), anywhere in
//! a file's compiled code: found so that the option is not offered there (see `unbacked`).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::{self as ast, CmpOp, Expr, Operator, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::FileModel;
use crate::model::file::configured::Capture;
use crate::model::file::imports::last_segment;
use crate::model::tensors::torch_calls::MASK_METHODS;
use crate::model::tensors::unbacked::mentions;

/// The first place in the file's code that `capture` would make fail to compile (torch 2.15): a
/// `.tolist()` of a selection for `capture_dynamic_output_shape_ops`, a tensor indexed with a 0-d
/// integer tensor for `capture_scalar_outputs`. Every function counts, not only those tcfix sees
/// in the compiled region: the option holds for the whole process, and an experts `forward` that a
/// decorator dispatches to is compiled all the same. tcfix reads these from the text alone (no
/// tensors model), so that the answer is the same for every finding of the file.
/// Read once per file and option: every finding of the file asks, and the answer walks every
/// function (a generated file can hold thousands of findings).
pub fn crash_with(model: &FileModel, capture: Capture) -> Option<TextRange> {
    *model.capture_crashes[capture as usize].get_or_init(|| first_crash_with(model, capture))
}

fn first_crash_with(model: &FileModel, capture: Capture) -> Option<TextRange> {
    (0..model.functions.len()).find_map(|function| {
        let mut scan = CrashScan::default();
        visit_compiled(model.function(function).node.body(), &mut scan);
        match capture {
            Capture::DynamicOutputShapeOps => scan.tolist_of_selection(),
            Capture::ScalarOutputs => scan.index_by_zero_dim(),
        }
    })
}

#[derive(Default)]
struct CrashScan<'a> {
    bindings: HashMap<&'a str, Vec<&'a Expr>>,
    /// `for` loops: their target, what they walk, and their range.
    loops: Vec<(&'a Expr, &'a Expr, TextRange)>,
    /// `if` statements: their test and where they start.
    ifs: Vec<(&'a Expr, TextRange)>,
    tolists: Vec<&'a ast::ExprCall>,
    /// Tensor indices: subscripts' slices, `select`/`narrow`'s index argument.
    indices: Vec<(&'a Expr, TextRange)>,
}

impl<'a> CompiledCodeVisitor<'a> for CrashScan<'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        match stmt {
            Stmt::Assign(assign) => {
                if let [Expr::Name(name)] = assign.targets.as_slice() {
                    self.bindings.entry(name.id.as_str()).or_default().push(&assign.value);
                }
            }
            Stmt::For(for_stmt) => self.loops.push((&for_stmt.target, &for_stmt.iter, stmt.range())),
            Stmt::If(if_stmt) => self.ifs.push((&if_stmt.test, stmt.range())),
            _ => {}
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        match expr {
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Attribute(method) if method.attr.id.as_str() == "tolist" && call.arguments.is_empty() => {
                    self.tolists.push(call);
                }
                Expr::Attribute(method) if matches!(method.attr.id.as_str(), "select" | "narrow") => {
                    if let Some(index) = call.arguments.args.get(1) {
                        self.indices.push((index, expr.range()));
                    }
                }
                _ => {}
            },
            Expr::Subscript(subscript) => match subscript.slice.as_ref() {
                Expr::Tuple(tuple) => self.indices.extend(tuple.elts.iter().map(|elt| (elt, expr.range()))),
                index => self.indices.push((index, expr.range())),
            },
            _ => {}
        }
        !matches!(expr, Expr::Lambda(_))
    }
}

/// Methods whose result's size depends on values.
const SELECTING: &[&str] = &["nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"];

/// Full reductions whose 0-d result is an integer index (or can be one): what indexes a tensor.
const ZERO_D_REDUCTIONS: &[&str] = &["argmax", "argmin", "max", "min", "sum", "prod", "amax", "amin"];

/// `x.argmax()`, `torch.argmax(x)`: a full reduction, 0-d.
fn is_zero_d_reduction(expr: &Expr) -> bool {
    let Expr::Call(call) = expr else { return false };
    let reduction = last_segment(&call.func).is_some_and(|name| ZERO_D_REDUCTIONS.contains(&name));
    let method = matches!(call.func.as_ref(), Expr::Attribute(_));
    reduction && (if method { call.arguments.is_empty() } else { call.arguments.len() == 1 })
}

impl<'a> CrashScan<'a> {
    fn tolist_of_selection(&self) -> Option<TextRange> {
        self.tolists.iter().find_map(|call| {
            let Expr::Attribute(method) = call.func.as_ref() else { return None };
            self.is_selection(&method.value, 0).then(|| call.range())
        })
    }

    fn index_by_zero_dim(&self) -> Option<TextRange> {
        let rows = self.selection_rows();
        self.indices.iter().find_map(|(index, at)| {
            let zero_dim = match index {
                Expr::Name(name) => {
                    let name = name.id.as_str();
                    let row = rows.contains(name) && !self.tested_before(name, *at);
                    // `i = x.argmax()` then `emb[i]`: every binding of the name (the text alone does not
                    // say which reaches the index).
                    let bound = self.bindings.get(name).filter(|values| !values.is_empty());
                    row || bound.is_some_and(|values| values.iter().all(|value| is_zero_d_reduction(value)))
                }
                index => is_zero_d_reduction(index),
            };
            zero_dim.then_some(*at)
        })
    }

    /// Whether an `if` on `row` comes before `at` in a loop around both (transformers' experts:
    /// `if expert_idx == self.num_experts: continue` before `expert_mask[expert_idx]`): that test
    /// breaks the graph inside the loop first, Dynamo runs the loop's frame eagerly, and the index
    /// is never traced (measured: no failure).
    fn tested_before(&self, row: &str, at: TextRange) -> bool {
        let names: HashSet<&str> = HashSet::from_iter([row]);
        self.ifs.iter().any(|(test, range)| {
            range.start() < at.start()
                && mentions(test, &names)
                && self.loops.iter().any(|(_, _, body)| body.contains_range(*range) && body.contains_range(at))
        })
    }

    /// The names that hold rows of a selection: targets of a `for` over one
    /// (`for expert_idx in expert_hit`), and names assigned an element of such a row
    /// (`expert_idx = expert_idx[0]`). A row of a 1-d selection is a 0-d tensor.
    fn selection_rows(&self) -> HashSet<&'a str> {
        let mut rows: HashSet<&'a str> = HashSet::default();
        for (target, iter, _) in &self.loops {
            if self.is_selection(iter, 0)
                && let Expr::Name(name) = target
            {
                rows.insert(name.id.as_str());
            }
        }
        for (name, values) in &self.bindings {
            let from_row = values.iter().any(|value| {
                matches!(value, Expr::Subscript(subscript)
                    if matches!(subscript.value.as_ref(), Expr::Name(row) if rows.contains(row.id.as_str())))
            });
            if from_row {
                rows.insert(name);
            }
        }
        rows
    }

    /// Whether `expr` is (read from) a selection: a `nonzero()`-like call, one-argument
    /// `torch.where`, a read through a mask, or a name bound to one.
    fn is_selection(&self, expr: &Expr, depth: usize) -> bool {
        if depth > 4 {
            return false;
        }
        match expr {
            Expr::Call(call) => {
                let name = last_segment(&call.func).unwrap_or_default();
                let one_argument = call.arguments.args.len() == 1 && call.arguments.keywords.is_empty();
                SELECTING.contains(&name)
                    || (name == "where" && one_argument)
                    || matches!(call.func.as_ref(), Expr::Attribute(method) if self.is_selection(&method.value, depth + 1))
            }
            Expr::Subscript(subscript) => {
                self.is_mask(&subscript.slice, depth + 1) || self.is_selection(&subscript.value, depth + 1)
            }
            Expr::Name(name) => self
                .bindings
                .get(name.id.as_str())
                .is_some_and(|values| values.iter().any(|value| self.is_selection(value, depth + 1))),
            _ => false,
        }
    }

    fn is_mask(&self, expr: &Expr, depth: usize) -> bool {
        if depth > 4 {
            return false;
        }
        match expr {
            Expr::Compare(compare) => {
                !compare.ops.iter().any(|op| matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn))
                    && !std::iter::once(compare.left.as_ref())
                        .chain(&compare.comparators)
                        .any(Expr::is_none_literal_expr)
            }
            Expr::UnaryOp(op) => op.op == UnaryOp::Invert && self.is_mask(&op.operand, depth + 1),
            Expr::BinOp(op) => {
                matches!(op.op, Operator::BitAnd | Operator::BitOr | Operator::BitXor)
                    && self.is_mask(&op.left, depth + 1)
                    && self.is_mask(&op.right, depth + 1)
            }
            Expr::Call(call) => last_segment(&call.func).is_some_and(|name| MASK_METHODS.contains(&name)),
            Expr::Name(name) => self
                .bindings
                .get(name.id.as_str())
                .is_some_and(|values| !values.is_empty() && values.iter().all(|value| self.is_mask(value, depth + 1))),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::source::SourceFile;

    const HEAD: &str = "import itertools\nimport math\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x: torch.Tensor, grid: torch.Tensor, m: torch.Tensor):\n";

    #[test]
    fn crashes_are_found_in_the_file_text() {
        let crash = |code: &str, capture| {
            let source = SourceFile::parse(Path::new("m.py"), format!("{HEAD}{code}")).unwrap();
            let model = FileModel::build(&source, "m");
            crash_with(&model, capture).map(|at| model.source.text[at].to_string())
        };
        let experts = "        hit = m.nonzero().view(-1)\n        for e in hit:\n            x = x + grid[e]\n        return x\n";
        assert_eq!(crash(experts, Capture::ScalarOutputs).as_deref(), Some("grid[e]"));
        let tested = "        hit = m.nonzero()\n        for e in hit:\n            e = e[0]\n            if e == 3:\n                continue\n            x = x + grid[e]\n        return x\n";
        assert_eq!(crash(tested, Capture::ScalarOutputs), None, "the `if` breaks the graph first");
        let named = "        i = m.argmax()\n        return x[i] * 2\n";
        assert_eq!(crash(named, Capture::ScalarOutputs).as_deref(), Some("x[i]"), "measured: fails to compile");
        let rebound = "        i = m.argmax()\n        x = x * i\n        i = 1\n        return x[i]\n";
        assert_eq!(crash(rebound, Capture::ScalarOutputs), None, "measured: compiles");
        let argmax = "        return x[m.argmax()]\n";
        assert_eq!(crash(argmax, Capture::ScalarOutputs).as_deref(), Some("x[m.argmax()]"));
        let listed = "        kept = grid[m.bool()]\n        return kept.tolist()\n";
        assert_eq!(crash(listed, Capture::DynamicOutputShapeOps).as_deref(), Some("kept.tolist()"));
        assert_eq!(crash("        return x.tolist()\n", Capture::DynamicOutputShapeOps), None);
    }
}
