//! Who calls whom among one file's functions (`CallGraph`), and what those calls tell each function
//! about its tensors (`CallFacts`): held by the file's model, found by `flow::calls` and the
//! tensors model once the region is known.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::OnceCell;
use std::sync::Arc;

use ruff_python_ast as ast;
use ruff_text_size::TextRange;

/// A call of one function of the file from the compiled code of another.
pub struct CallSite<'a> {
    pub caller: usize,
    pub callee: usize,
    pub call: &'a ast::ExprCall,
}

/// Who calls whom in the file, found in one walk of each function's compiled code: asked for every
/// function by the tensors model and by TCF204, so each question must not rescan the file.
#[derive(Default)]
pub struct CallGraph<'a> {
    pub(in crate::model) sites: Vec<CallSite<'a>>,
    /// Per function, the sites in its own compiled code, in source order.
    pub(in crate::model) out: Vec<Vec<usize>>,
    /// Per function, the sites calling it from the compiled code of the region's functions.
    pub(in crate::model) into: Vec<Vec<usize>>,
    /// Per function, the bodies of its `if`s that run only for the one-token decode step
    /// (`shapes::single_step_bodies`), found on the first question.
    pub(in crate::model) single_step: Vec<OnceCell<Vec<TextRange>>>,
}

impl<'a> CallGraph<'a> {
    /// The calls in the function's compiled code of other functions of the file, with their ids.
    pub fn calls_out(&self, function: usize) -> impl Iterator<Item = (usize, &CallSite<'a>)> {
        self.out.get(function).into_iter().flatten().map(|&id| (id, &self.sites[id]))
    }

    /// The calls of `function` in the compiled code of the file's other region functions.
    pub fn call_sites(&self, function: usize) -> impl Iterator<Item = (usize, &CallSite<'a>)> {
        // Empty before the region is known (a model built without it, as in unit tests).
        self.into.get(function).into_iter().flatten().map(|&id| (id, &self.sites[id]))
    }

    /// The code traced with `function` were a graph break in it gone: the function, the functions
    /// that call it (transitively), and what any of them calls.
    pub fn traced_with(&self, function: usize) -> HashSet<usize> {
        let mut callers = vec![function];
        let mut seen: HashSet<usize> = HashSet::from_iter([function]);
        while let Some(callee) = callers.pop() {
            for (_, site) in self.call_sites(callee) {
                if seen.insert(site.caller) {
                    callers.push(site.caller);
                }
            }
        }
        let mut traced: Vec<usize> = seen.iter().copied().collect();
        while let Some(caller) = traced.pop() {
            for (_, site) in self.calls_out(caller) {
                if seen.insert(site.callee) {
                    traced.push(site.callee);
                }
            }
        }
        seen
    }

    /// Every function that calls or is called by another one of the file.
    pub fn linked(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.out.len()).filter(|&f| !self.out[f].is_empty() || !self.into[f].is_empty())
    }
}

/// What the file's calls tell one function about its tensors.
#[derive(Default, PartialEq)]
pub struct CallFacts {
    /// Its calls of functions of the file that return tensors (`image_embd = self._project(x)`).
    pub(in crate::model) returning_tensors: HashSet<TextRange>,
    /// Of those, the ones that return masks (`self._image_positions(ids)`).
    pub(in crate::model) returning_masks: HashSet<TextRange>,
    /// Its parameters that its compiled callers in the file pass tensors: at least one call passes
    /// a tensor, and none a Python value or `None` (`self._merge(ids, embeds, image_embd)` with
    /// `image_embd` a submodule's output).
    pub(in crate::model) passed_tensors: HashSet<String>,
    /// Its parameters that every compiled caller in the file passes a Python value (a size such
    /// as `attention_mask.shape[-1]`, a tuple of them), when no other file calls it: not tensors,
    /// whatever their annotation says (`thw: torch.LongTensor` given `(t, h, w)`).
    pub(in crate::model) passed_python: HashSet<String>,
}

/// Which values of one function are tensors (`tensor::Tensors` without the model it reads), as
/// `tensor::across_calls` found them with what calls finally tell the function: the rules' first
/// question about a region function takes them instead of working them out once more.
#[derive(Default)]
pub struct FoundTensors {
    pub(in crate::model) names: HashSet<String>,
    pub(in crate::model) masks: HashSet<String>,
    pub(in crate::model) zero_dim: HashSet<String>,
    pub(in crate::model) flags: HashSet<String>,
    pub(in crate::model) numpy_names: HashSet<String>,
    pub(in crate::model) locals: HashSet<String>,
    pub(in crate::model) class: Arc<ClassTensors>,
    pub(in crate::model) returning_tensors: HashSet<TextRange>,
    pub(in crate::model) returning_masks: HashSet<TextRange>,
}

/// What a class tells the tensors of each of its functions, whatever the calls tell them: the
/// Which of the file's module classes each `self.<attr>` of a class holds (`flow::submodules`).
pub type HeldClasses = HashMap<String, HashSet<usize>>;

/// `self.<attr>` that are submodules, those that are parameters or buffers, and the `a.b` of
/// `self.a.b` that are submodules of submodules (`tensor::class_tensors`).
#[derive(Default)]
pub struct ClassTensors {
    pub(in crate::model) submodules: HashSet<String>,
    pub(in crate::model) attributes: HashSet<String>,
    pub(in crate::model) nested_submodules: HashSet<String>,
}
