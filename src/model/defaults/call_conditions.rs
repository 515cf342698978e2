//! A function that only its own file's calls reach, every one of them under a condition the
//! defaults leave off (`if self.pool: x = pooled(x, keep)`, `if steps > 1: return
//! self.rollout(x, steps)`): its findings run only under that condition too. The conditions of the
//! calls are asked of the same analyses as the findings' own (`conditions_at`).

use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::reach::root_reason;
use crate::model::file::FileModel;
use crate::model::flow::calls::Mentions;

/// `conditions` (one per range in `ranges`, as the analyses found them) with the findings that
/// have none given the condition of the calls that reach their function, when every call has one.
pub fn through_calls(
    model: &FileModel,
    ranges: &[TextRange],
    mut conditions: Vec<Option<String>>,
    conditions_at: impl Fn(&[TextRange]) -> Vec<Option<String>>,
) -> Vec<Option<String>> {
    let unconditioned: Vec<(usize, usize)> = ranges
        .iter()
        .enumerate()
        .filter(|&(at, _)| conditions[at].is_none())
        .filter_map(|(at, &range)| Some((at, model.region_function_at(range)?)))
        .filter(|&(_, function)| only_called(model, function))
        .collect();
    if unconditioned.is_empty() {
        return conditions;
    }
    let functions: Vec<usize> = unconditioned.iter().map(|&(_, function)| function).collect();
    let mentions = Mentions::of(model, &functions);
    let pending: Vec<(usize, usize)> =
        unconditioned.into_iter().filter(|&(_, function)| mentions.only_in_calls(model, function)).collect();
    if pending.is_empty() {
        return conditions;
    }
    let mut functions: Vec<usize> = pending.iter().map(|&(_, function)| function).collect();
    functions.sort_unstable();
    functions.dedup();
    let sites: Vec<(usize, usize, TextRange)> = functions
        .iter()
        .flat_map(|&function| {
            model.calls().call_sites(function).map(move |(_, site)| (function, site.caller, site.call.range()))
        })
        .collect();
    let site_ranges: Vec<TextRange> = sites.iter().map(|&(_, _, range)| range).collect();
    let site_conditions = conditions_at(&site_ranges);
    for (at, function) in pending {
        conditions[at] = needed_by_every_call(model, function, &sites, &site_conditions);
    }
    conditions
}

/// The conditions of the calls of `function` when every call has one: "only when `Pooler` is
/// built with `pool=True` (False by default), where `Pooler.forward` calls `pooled`"; calls under
/// different conditions give each ("only when A, where `f` calls `g`, or when B, where ...").
fn needed_by_every_call(
    model: &FileModel,
    function: usize,
    sites: &[(usize, usize, TextRange)],
    site_conditions: &[Option<String>],
) -> Option<String> {
    let callee = &model.function(function).name;
    let mut each: Vec<String> = Vec::new();
    for (&(called, caller, _), condition) in sites.iter().zip(site_conditions) {
        if called != function {
            continue;
        }
        let condition = condition.as_deref()?;
        let one = format!("{condition}, where `{}` calls `{callee}`", model.function(caller).qualname);
        if !each.contains(&one) {
            each.push(one);
        }
    }
    let (first, rest) = each.split_first()?;
    let rest = rest.iter().map(|other| format!(", or {}", other.strip_prefix("only ").unwrap_or(other)));
    Some(std::iter::once(first.clone()).chain(rest).collect())
}

/// Compiled only because functions of this file call it: no root of its own (not a `forward`, a
/// hook or compiled itself), not called from another file, and called here at least once.
fn only_called(model: &FileModel, function: usize) -> bool {
    root_reason(model, function).is_none()
        && !model.called_from_other_files.contains(&model.function(function).qualname)
        && model.calls().call_sites(function).next().is_some()
}
