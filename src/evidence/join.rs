//! Joining the run's events to the findings, by file and line.
//!
//! A graph break is placed by its user traceback, innermost frame first: the first frame in a
//! checked file whose line lies in a graph-break finding joins it (a break inside a helper joins
//! the finding at the call in `forward` when the helper's own line has none). A recompile is
//! placed by the source line of its failed guard: a recompile finding on that line joins it, or
//! one in that file whose code names the guarded attribute (`self.steps` for `self.steps == 1`).
//! An event nothing joins becomes a TCF100/TCF200 finding at its innermost checked line; an event
//! in no checked file is counted apart (`Joined::outside`).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

use super::entered::{self, guards_a_handed_over_value};
use super::frames::{FrameRef, FunctionSpan, function_at, functions, resumed_after, user_function};
use super::observed::{BreakLine, Observed, Runtime};
use super::paths::PathMap;
use super::runtime_rule::{GRAPH_BREAK_SEEN, RECOMPILE_SEEN};
use super::{Compile, Event, EventKind, Evidence};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::rule::{Category, Rule};

/// A checked file as the join sees it: its findings gain evidence, and runtime-only findings
/// are added. `text` may be empty for a file with no findings; it is read when needed.
pub struct CheckedFile<'a> {
    pub path: &'a Path,
    pub text: &'a mut String,
    pub diagnostics: &'a mut Vec<Diagnostic>,
}

/// Where each event went.
#[derive(Debug, Default)]
pub struct Joined {
    /// Per event of `Evidence::events`, in order.
    pub events: Vec<Placed>,
    /// Per compile of `Evidence::compiles`, the function it compiled, when in a checked file.
    pub compiles: Vec<Option<FrameRef>>,
}

#[derive(Clone, Debug, Default)]
pub struct Placed {
    /// The checked file (index into the files given to `join`) and line; `None` when no frame
    /// of the event lies in a checked file.
    pub at: Option<(usize, usize)>,
    /// The codes of the findings it joined (TCF100/TCF200 when none of a rule's).
    pub codes: Vec<&'static str>,
    /// A duplicate of an earlier event (the same break logged again for the same compile).
    pub duplicate: bool,
    /// The function whose compile logged it, when in a checked file.
    pub frame: Option<FrameRef>,
}

/// Which of a file's runtime-only findings to keep, as its rules' findings were kept: by
/// `--select`/`--ignore`, suppression comments, `--diff-base` and `--baseline`.
pub type Keep<'k> = &'k dyn Fn(&Path, &str, &mut Vec<Diagnostic>);

/// Join `evidence` to the files' findings.
pub fn join<'e>(evidence: &'e Evidence, files: &mut [CheckedFile], keep: Keep) -> Joined {
    let paths = PathMap::new(&files.iter().map(|file| file.path.to_path_buf()).collect::<Vec<PathBuf>>());
    let mut resolved: HashMap<&str, Option<usize>> = HashMap::default();
    let mut resolve = |logged: &'e str| *resolved.entry(logged).or_insert_with(|| paths.resolve(logged));
    // The compiles of each frame of each process, for the events to find theirs.
    let mut compiles_of: HashMap<(usize, Option<u32>, u64), Vec<usize>> = HashMap::default();
    for (index, compile) in evidence.compiles.iter().enumerate() {
        if let Some(frame_id) = compile.frame_id {
            compiles_of.entry((compile.log, compile.rank, frame_id)).or_default().push(index);
        }
    }
    let compiles_of_event = |event: &Event| -> &[usize] {
        event.frame_id.and_then(|id| compiles_of.get(&(event.log, event.rank, id))).map_or(&[], Vec::as_slice)
    };
    let mut texts_needed: HashSet<usize> = HashSet::default();
    let mut placements: Vec<Vec<(usize, usize)>> = Vec::new();
    for event in &evidence.events {
        let mut frames: Vec<(usize, usize)> =
            event.frames.iter().filter_map(|frame| resolve(&frame.file).map(|file| (file, frame.line))).collect();
        // A guard on an input (`tensor 'x' size mismatch`) names no source line: the compiled
        // frame's own first line stands for it.
        if frames.is_empty()
            && event.kind == EventKind::Recompile
            && let Some(compile) = compiles_of_event(event).first().map(|&at| &evidence.compiles[at])
            && let Some(file) = resolve(&compile.co_filename)
        {
            frames.push((file, compile.co_firstlineno));
        }
        texts_needed.extend(frames.iter().map(|(file, _)| *file));
        placements.push(frames);
    }
    let compiled = compiled_functions(evidence, &mut resolve);
    texts_needed.extend(compiled.keys());
    for &index in &texts_needed {
        let file = &mut files[index];
        if file.text.is_empty() {
            *file.text = std::fs::read_to_string(file.path).unwrap_or_default();
        }
    }
    let lines: HashMap<usize, LineIndex> =
        texts_needed.iter().map(|&index| (index, LineIndex::from_source_text(files[index].text))).collect();
    let spans: HashMap<usize, Vec<FunctionSpan>> =
        texts_needed.iter().map(|&index| (index, functions(files[index].text))).collect();
    let frame_ref = |file: usize, co_name: &str, line: usize| {
        let span = function_at(&spans[&file], user_function(co_name), line)?;
        Some(FrameRef { file, first_line: span.first_line, qualname: span.qualname.clone() })
    };

    // Recompiles that exist only because of a break: whose function a caller on their stack ran
    // is read from the files' own functions.
    let causes = entered::causes(evidence, |file, (a, line_a), (b, line_b)| {
        let Some(spans) = resolve(file).and_then(|index| spans.get(&index)) else { return false };
        match (function_at(spans, user_function(a), line_a), function_at(spans, user_function(b), line_b)) {
            (Some(a), Some(b)) => a.first_line == b.first_line && a.qualname == b.qualname,
            _ => false,
        }
    });

    // A finding's compile time counts each compile once, however many of its events it holds.
    let mut timed: HashSet<(Target, usize)> = HashSet::default();
    let compiles = evidence
        .compiles
        .iter()
        .map(|compile| frame_ref(resolve(&compile.co_filename)?, &compile.co_name, compile.co_firstlineno))
        .collect();
    let mut joined = Joined { events: Vec::new(), compiles };
    let mut seen: HashMap<usize, BTreeMap<usize, Observed>> = HashMap::default();
    let mut runtime_only: BTreeMap<(usize, usize, EventKind), Observed> = BTreeMap::new();
    type Key<'a> =
        (usize, Option<u32>, Option<&'a str>, Option<u64>, Option<u64>, EventKind, Vec<(usize, usize)>, String);
    let mut counted: HashSet<Key> = HashSet::default();
    for ((event, frames), cause) in evidence.events.iter().zip(&placements).zip(&causes) {
        let key = (
            event.log,
            event.rank,
            event.thread.as_deref(),
            event.frame_id,
            event.frame_compile_id,
            event.kind.clone(),
            frames.clone(),
            event.reason.clone(),
        );
        let duplicate = event.frame_id.is_some() && !counted.insert(key);
        let compiled = compiles_of_event(event).first().and_then(|&at| joined.compiles[at].clone());
        let innermost = || {
            let logged = event.frames.first()?;
            frame_ref(resolve(&logged.file)?, &logged.function, logged.line)
        };
        let mut placed = Placed { duplicate, frame: compiled.or_else(innermost), ..Default::default() };
        if duplicate || frames.is_empty() {
            joined.events.push(placed);
            continue;
        }
        // The compile the event happened in: the one that broke, or the recompile.
        let compiles: Vec<usize> = compiles_of_event(event)
            .iter()
            .copied()
            .filter(|&at| evidence.compiles[at].frame_compile_id == event.frame_compile_id)
            .collect();
        // The seconds of those compiles not yet counted for the target.
        let mut seconds_for = |target: Target| -> f64 {
            compiles
                .iter()
                .filter(|&&at| timed.insert((target.clone(), at)))
                .map(|&at| evidence.compiles[at].seconds)
                .sum()
        };
        // A backend failure names its operator: the finding making it explains the event better
        // than whatever else sits on the line it is logged at.
        let mut backend_failure = || {
            let compile = &evidence.compiles[*compiles.first()?];
            let file = resolve(&compile.co_filename)?;
            making_the_failed_op(event, compile, (file, &files[file], &lines[&file], &spans[&file]))
        };
        let found = backend_failure().or_else(|| {
            frames.iter().find_map(|&(file, line)| {
                let matches = matching(event, &files[file], &lines[&file], line);
                (!matches.is_empty()).then_some((file, line, matches))
            })
        });
        let entered = cause.and_then(|frame| {
            Some(BreakLine { filename: files[resolve(&frame.file)?].path.display().to_string(), line: frame.line })
        });
        match found {
            Some((file, line, matches)) => {
                placed.at = Some((file, line));
                for index in matches {
                    placed.codes.push(files[file].diagnostics[index].rule.code);
                    let seconds = seconds_for(Target::Finding(file, index));
                    let observed = seen.entry(file).or_default().entry(index).or_default();
                    record(observed, event, seconds, entered.as_ref());
                }
            }
            None => {
                let (file, line) = frames[0];
                placed.at = Some((file, line));
                placed.codes.push(runtime_rule(&event.kind).code);
                let seconds = seconds_for(Target::RuntimeOnly(file, line, event.kind.clone()));
                let observed = runtime_only.entry((file, line, event.kind.clone())).or_default();
                record(observed, event, seconds, entered.as_ref());
            }
        }
        joined.events.push(placed);
    }

    for (index, file) in files.iter_mut().enumerate() {
        let observed = seen.remove(&index).unwrap_or_default();
        let compiled_here = match (compiled.get(&index), spans.get(&index), lines.get(&index)) {
            (Some(functions), Some(spans), Some(lines)) => Some(Compiled { functions, spans, lines }),
            _ => None,
        };
        mark_findings(file, &observed, compiled_here);
    }
    let mut added: BTreeMap<usize, Vec<Diagnostic>> = BTreeMap::new();
    for ((index, line, kind), observed) in runtime_only {
        let range = line_range(files[index].text, &lines[&index], line);
        added.entry(index).or_default().push(runtime_only_finding(kind, range, observed));
    }
    for (index, mut found) in added {
        let file = &mut files[index];
        keep(file.path, file.text, &mut found);
        file.diagnostics.extend(found);
        crate::baseline::fingerprint(file.text, file.diagnostics);
    }
    joined
}

/// What the run compiled of one file: (function name, a line in it), with the file's function
/// spans and line index to place findings in them.
struct Compiled<'a> {
    functions: &'a [(String, usize)],
    spans: &'a [FunctionSpan],
    lines: &'a LineIndex,
}

/// Each of a file's findings gets what the run saw there: `observed` by finding index; for one
/// with no event, "not seen" when it lies in a function the run compiled.
fn mark_findings(file: &mut CheckedFile, observed: &BTreeMap<usize, Observed>, compiled: Option<Compiled>) {
    for (index, diagnostic) in file.diagnostics.iter_mut().enumerate() {
        diagnostic.runtime = match observed.get(&index) {
            Some(observed) => Some(Runtime::Seen(observed.clone())),
            None => compiled.as_ref().and_then(|compiled| {
                let line = compiled.lines.line_column(diagnostic.range.start(), file.text).line.get();
                runs_compiled(compiled.spans, compiled.functions, line).then_some(Runtime::NotSeen)
            }),
        };
    }
}

/// A TCF100/TCF200 finding for the events no rule explains at one line.
fn runtime_only_finding(kind: EventKind, range: TextRange, observed: Observed) -> Diagnostic {
    let message = runtime_message(&kind, &observed);
    let mut diagnostic = Diagnostic::new(runtime_rule(&kind), range, message).with_severity(Severity::High);
    diagnostic.runtime = Some(Runtime::Seen(observed));
    diagnostic
}

/// What an event is joined to: a finding of a rule's (file, index in its findings), or the
/// runtime-only finding made for its line.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Target {
    Finding(usize, usize),
    RuntimeOnly(usize, usize, EventKind),
}

fn runtime_rule(kind: &EventKind) -> &'static Rule {
    match kind {
        EventKind::GraphBreak => &GRAPH_BREAK_SEEN,
        EventKind::Recompile => &RECOMPILE_SEEN,
    }
}

/// The findings of `file` that explain `event` at `line`.
fn matching(event: &Event, file: &CheckedFile, lines: &LineIndex, line: usize) -> Vec<usize> {
    let category = match event.kind {
        EventKind::GraphBreak => Category::GraphBreak,
        EventKind::Recompile => Category::Recompile,
    };
    let lines_of = |diagnostic: &Diagnostic| {
        let first = lines.line_column(diagnostic.range.start(), file.text).line.get();
        let last = lines.line_column(diagnostic.range.end(), file.text).line.get();
        (first, last)
    };
    let candidates = || file.diagnostics.iter().enumerate().filter(|(_, d)| d.rule.category == category);
    let on_line: Vec<usize> = candidates()
        .filter(|(_, diagnostic)| {
            let (first, last) = lines_of(diagnostic);
            first <= line && line <= last
        })
        .map(|(index, _)| index)
        .collect();
    if !on_line.is_empty() || event.kind == EventKind::GraphBreak {
        return on_line;
    }
    // A recompile whose guard names an attribute joins the finding that writes or reads it, or
    // whose message names it (rules quote the attribute: "the int attribute `steps`").
    let Some(guarded) = event.guarded.as_deref() else { return on_line };
    let last = guarded.rsplit('.').next().unwrap_or(guarded);
    candidates()
        .filter(|(_, diagnostic)| {
            let code = file.text.get(usize::from(diagnostic.range.start())..usize::from(diagnostic.range.end()));
            let in_code = guarded.starts_with("self.") && code.is_some_and(|code| mentions(code, guarded));
            let message = &diagnostic.message;
            in_code || message.contains(&format!("`{last}`")) || message.contains(&format!(".{last}`"))
        })
        .map(|(index, _)| index)
        .collect()
}

/// A break where the backend failed on an operator (`Backend compiler `aot_eager` failed with
/// aten.nonzero.default`) is logged at a call or where the frame resumed, not at the operator's
/// line: the failing graph is the compiled frame's, from its start (or the break it resumed after).
/// The first finding after that start whose hazard hands the backend that operator is in that
/// graph and explains it; a later one may lie past the graph's end (a break in between, after
/// which Dynamo skips the rest of the frame), so it is not counted. Returns the file, that line,
/// and the findings on it. A write in a helper inlined into the frame is not searched.
fn making_the_failed_op(
    event: &Event,
    compile: &Compile,
    file: (usize, &CheckedFile, &LineIndex, &[FunctionSpan]),
) -> Option<(usize, usize, Vec<usize>)> {
    let (index, file, lines, spans) = file;
    let op = failed_op(&event.reason)?;
    let function = function_at(spans, user_function(&compile.co_name), compile.co_firstlineno)?;
    let after = resumed_after(&compile.co_name).unwrap_or(function.first_line);
    let line_of = |diagnostic: &Diagnostic| lines.line_column(diagnostic.range.start(), file.text).line.get();
    let making: Vec<(usize, usize)> = file
        .diagnostics
        .iter()
        .enumerate()
        .filter(|(_, diagnostic)| diagnostic.rule.backend_ops.contains(&op))
        .map(|(at, diagnostic)| (at, line_of(diagnostic)))
        .filter(|&(_, line)| after < line && line <= function.last_line)
        .collect();
    let first = making.iter().map(|&(_, line)| line).min()?;
    Some((index, first, making.iter().filter(|&&(_, line)| line == first).map(|&(at, _)| at).collect()))
}

/// `aten.nonzero` in "Backend compiler `counting` failed with aten.nonzero.default. Adding a graph break."
fn failed_op(reason: &str) -> Option<&str> {
    let (_, after) = reason.split_once("Backend compiler ")?;
    let (_, op) = after.split_once(" failed with ")?;
    let op = op.split_whitespace().next()?.trim_end_matches('.');
    Some(op.strip_suffix(".default").unwrap_or(op))
}

/// Whether `code` holds `name` as a whole name (`self.steps`, not `self.steps_total`).
fn mentions(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let after = code[at + name.len()..].chars().next();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn record(observed: &mut Observed, event: &Event, seconds: f64, caused_by_break: Option<&BreakLine>) {
    match event.kind {
        EventKind::GraphBreak => observed.breaks += 1,
        EventKind::Recompile => observed.recompiles += 1,
    }
    if let Some(rank) = event.rank {
        *observed.per_rank.entry(rank).or_default() += 1;
    }
    observed.compile_seconds += seconds;
    let reason = match (&event.kind, &event.gb_code) {
        (EventKind::GraphBreak, Some(code)) => format!("{} [{code}]", event.reason),
        (EventKind::GraphBreak, None) => event.reason.clone(),
        (EventKind::Recompile, _) => format!("guard `{}` failed", event.reason),
    };
    if !observed.reasons.contains(&reason) {
        observed.reasons.push(reason);
    }
    if let Some(name) = &event.guarded
        && !observed.guarded.contains(name)
    {
        observed.guarded.push(name.clone());
    }
    let resumed = event.frames.first().and_then(|frame| resumed_after(&frame.function));
    if event.kind == EventKind::Recompile
        && guards_a_handed_over_value(event)
        && let Some(line) = resumed
        && !observed.resumed_after.contains(&line)
    {
        observed.resumed_after.push(line);
    }
    if let Some(line) = caused_by_break
        && !observed.caused_by_break.contains(line)
    {
        observed.caused_by_break.push(line.clone());
    }
}

/// The functions the run compiled, per checked file: (name, a line inside it). From the
/// compiles in a trace, and from the events' own frames (all a text log has).
fn compiled_functions<'e>(
    evidence: &'e Evidence,
    resolve: &mut impl FnMut(&'e str) -> Option<usize>,
) -> HashMap<usize, Vec<(String, usize)>> {
    let mut compiled: HashMap<usize, Vec<(String, usize)>> = HashMap::default();
    for compile in &evidence.compiles {
        if let Some(file) = resolve(&compile.co_filename) {
            compiled
                .entry(file)
                .or_default()
                .push((user_function(&compile.co_name).to_string(), compile.co_firstlineno));
        }
    }
    for event in &evidence.events {
        if let Some(frame) = event.frames.first()
            && let Some(file) = resolve(&frame.file)
        {
            compiled.entry(file).or_default().push((user_function(&frame.function).to_string(), frame.line));
        }
    }
    compiled
}

/// Whether `line` lies in a function the run compiled.
fn runs_compiled(spans: &[FunctionSpan], compiled: &[(String, usize)], line: usize) -> bool {
    compiled.iter().any(|(name, inside)| {
        function_at(spans, name, *inside).is_some_and(|span| span.first_line <= line && line <= span.last_line)
    })
}

/// The code of a line, without its indentation and line ending.
fn line_range(text: &str, lines: &LineIndex, line: usize) -> TextRange {
    let one_based = ruff_source_file::OneIndexed::new(line).unwrap_or(ruff_source_file::OneIndexed::MIN);
    let start = lines.line_start(one_based, text);
    let end = lines.line_end(one_based, text);
    let code = &text[usize::from(start)..usize::from(end)];
    let indent = code.len() - code.trim_start().len();
    let content = code.trim().len();
    let begin = start + TextSize::try_from(indent).unwrap_or_default();
    TextRange::at(begin, TextSize::try_from(content).unwrap_or_default())
}

/// `graph break seen at runtime, no rule: Data-dependent branching [GB0170]`.
fn runtime_message(kind: &EventKind, observed: &Observed) -> String {
    // A counter's guard fails with a new value each time: a few say enough.
    const SHOWN: usize = 3;
    let mut reasons = observed.reasons.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; ");
    if observed.reasons.len() > SHOWN {
        reasons.push_str(&format!("; {} more", observed.reasons.len() - SHOWN));
    }
    match kind {
        EventKind::GraphBreak => format!("graph break seen at runtime, no rule explains it: {reasons}"),
        EventKind::Recompile => {
            let mut message = if observed.guarded.is_empty() {
                format!("recompile seen at runtime, no rule explains it: {reasons}")
            } else {
                let names: Vec<String> = observed.guarded.iter().map(|name| format!("`{name}`")).collect();
                format!(
                    "recompile seen at runtime, no rule explains it: {} changed between calls ({reasons})",
                    names.join(", ")
                )
            };
            if let [line, ..] = observed.resumed_after.as_slice() {
                // The resumed code takes the break's live values as inputs and guards on them.
                message.push_str(&format!(
                    "; in the code Dynamo resumed after the graph break at line {line}, which hands it these values"
                ));
            } else if let [at, ..] = observed.caused_by_break.as_slice() {
                // One graph would hold every block; apart, each is told from the others by guards.
                message.push_str(&format!(
                    "; in a frame Dynamo compiled on its own because the graph break at {}:{} ran its caller \
                     eagerly: fix that break first",
                    at.filename, at.line
                ));
            }
            message
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{LoggedFrame, Origin};

    fn event(reason: &str, line: usize) -> Event {
        Event {
            kind: EventKind::GraphBreak,
            log: 0,
            rank: None,
            thread: None,
            frame_id: Some(0),
            frame_compile_id: Some(0),
            frames: vec![LoggedFrame { file: "/elsewhere/m.py".into(), line, function: "forward".into() }],
            reason: reason.into(),
            gb_code: None,
            guarded: None,
            origin: Origin { log: "t.log".into(), line: 1 },
        }
    }

    fn evidence(events: Vec<Event>) -> Evidence {
        let compile = Compile {
            log: 0,
            rank: None,
            frame_id: Some(0),
            frame_compile_id: Some(0),
            co_name: "forward".into(),
            co_filename: "/elsewhere/m.py".into(),
            co_firstlineno: 1,
            seconds: 5.0,
            graph: true,
            failure: None,
        };
        Evidence { events, compiles: vec![compile], logs: vec!["t.log".into()], ..Default::default() }
    }

    fn joined(evidence: &Evidence) -> Vec<Diagnostic> {
        let mut text = "def forward(x):\n    print(x)\n    return x\n".to_string();
        let mut diagnostics = Vec::new();
        let path = std::path::PathBuf::from("/here/m.py");
        let mut files = [CheckedFile { path: &path, text: &mut text, diagnostics: &mut diagnostics }];
        join(evidence, &mut files, &|_, _, _| {});
        diagnostics
    }

    #[test]
    fn two_events_of_one_compile_count_its_time_once() {
        let found = joined(&evidence(vec![event("one", 2), event("two", 2)]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule.code, "TCF100");
        let observed = found[0].runtime.as_ref().and_then(Runtime::observed).expect("seen");
        assert_eq!((observed.breaks, observed.compile_seconds), (2, 5.0));
    }

    #[test]
    fn the_same_event_logged_twice_for_one_compile_counts_once() {
        let found = joined(&evidence(vec![event("one", 2), event("one", 2)]));
        assert_eq!(found[0].runtime.as_ref().and_then(Runtime::observed).map(|o| o.breaks), Some(1));
    }

    #[test]
    fn a_recompile_on_an_input_with_no_source_line_is_placed_at_the_compiled_function() {
        let mut recompile = event("tensor 'x' size mismatch at index 0. expected 2, actual 3", 0);
        recompile.kind = EventKind::Recompile;
        recompile.frames.clear();
        recompile.guarded = Some("x".into());
        let found = joined(&evidence(vec![recompile]));
        assert_eq!(found[0].rule.code, "TCF200");
        assert_eq!(
            found[0].message,
            "recompile seen at runtime, no rule explains it: `x` changed between calls (guard `tensor 'x' size mismatch at index 0. expected 2, actual 3` failed)"
        );
        assert_eq!(u32::from(found[0].range.start()), 0, "line 1, the `def`");
    }

    #[test]
    fn a_recompile_of_code_resumed_after_a_break_names_the_break() {
        let mut recompile = event("padding == 4", 3);
        recompile.kind = EventKind::Recompile;
        recompile.frames[0].function = "torch_dynamo_resume_in_forward_at_2".into();
        let found = joined(&evidence(vec![recompile]));
        assert_eq!(
            found[0].runtime.as_ref().and_then(Runtime::observed).map(|o| o.resumed_after.clone()),
            Some(vec![2])
        );
        assert!(found[0].message.ends_with("resumed after the graph break at line 2, which hands it these values"));
    }

    #[test]
    fn a_backend_failure_joins_the_finding_making_its_operator_later_in_the_function() {
        let mut text = "def forward(x, m):\n    y = helper(x)\n    x[m] = y\n    print(x)\n    x[m] = x + 1\n    return x\n\ndef other(x, m):\n    x[m] = x\n"
            .to_string();
        let index_put = crate::rules::RULES.iter().find(|rule| rule.code == "TCF105").expect("TCF105");
        let at = |code: &str| {
            let start = TextSize::try_from(text.find(code).expect("in the text")).expect("small");
            TextRange::at(start, TextSize::of(code))
        };
        let mut diagnostics = vec![
            Diagnostic::new(index_put, at("x[m] = y"), "put"),
            Diagnostic::new(index_put, at("x[m] = x + 1"), "put"),
            Diagnostic::new(index_put, at("x[m] = x\n"), "put"),
        ];
        let path = std::path::PathBuf::from("/here/m.py");
        let mut files = [CheckedFile { path: &path, text: &mut text, diagnostics: &mut diagnostics }];
        let failed = "Backend compiler `aot_eager` failed with aten.nonzero.default. Adding a graph break.";
        join(
            &evidence(vec![event(failed, 2), event("Backend compiler `x` failed with aten.sort.default", 2)]),
            &mut files,
            &|_, _, _| {},
        );
        let breaks = |d: &Diagnostic| d.runtime.as_ref().and_then(Runtime::observed).map(|o| o.breaks);
        assert_eq!(breaks(&diagnostics[0]), Some(1), "the first put after the frame's start");
        assert_eq!(breaks(&diagnostics[1]), None, "a later put, maybe past a break that ended the graph");
        assert_eq!(breaks(&diagnostics[2]), None, "another function's put");
        assert_eq!(diagnostics[3].rule.code, "TCF100", "an operator no rule hands the backend");
    }

    #[test]
    fn the_failed_operator_is_read_from_the_backends_message() {
        let reason = "Backend compiler `counting` failed with aten.nonzero.default. Adding a graph break.";
        assert_eq!(failed_op(reason), Some("aten.nonzero"));
        assert_eq!(failed_op("Data-dependent branching"), None);
    }

    #[test]
    fn a_runtime_only_finding_covers_its_lines_code_without_indentation() {
        let found = joined(&evidence(vec![event("one", 2)]));
        assert_eq!((u32::from(found[0].range.start()), u32::from(found[0].range.end())), (20, 28));
    }
}
