//! Recompiles that exist only because of a graph break, with the break's innermost line:
//! - Frames compiled on their own because their caller broke: when Dynamo breaks the graph at a
//!   call (`x = self.blocks(x)` whose callee calls an `nn.LSTM`), the call runs eagerly, and each
//!   function it reaches is compiled as a frame of its own. Such a frame is called once per block
//!   or stage, and recompiles for each one's module types, strides and sizes.
//! - Code Dynamo resumed after a break (`torch_dynamo_resume_in_forward_at_1473`) takes the values
//!   the break hands over as inputs, and a guard on one of them (`padding_len == 504`,
//!   `___stack0[0] == 504`) fails when they change.
//!
//! Both are read from the stack each compile started from (`dynamo_start`): a caller on that
//! stack whose function Dynamo compiled, and which logged a graph break before, was running
//! eagerly when it made the call, because of that break. (Dynamo's break tracebacks leave out the
//! broken frame's own line, so the caller is found by its compiled code, not by its line.) A caller
//! Dynamo never compiled (a model compiled block by block) links nothing. A frame apart that
//! recompiles because a flag flipped between calls is blamed on the break too: once the break is
//! fixed, that recompile shows at its own line.

use rustc_hash::FxHashMap as HashMap;

use super::frames::{resumed_after, user_function};
use super::{Event, EventKind, Evidence, FrameStart, LoggedFrame};

/// Per event, for a recompile of a frame compiled apart because a caller broke, or of code
/// resumed after a break, where the log holds that break: the break's innermost line.
/// `same_function(file, a, b)`: whether two (function, line) places of a file lie in one function
/// (from its source; `false` where tcfix cannot read it).
pub fn causes<'e>(
    evidence: &'e Evidence,
    mut same_function: impl FnMut(&'e str, (&'e str, usize), (&'e str, usize)) -> bool,
) -> Vec<Option<&'e LoggedFrame>> {
    let compiles = Compiles::of(evidence);
    evidence
        .events
        .iter()
        .map(|event| {
            if event.kind != EventKind::Recompile {
                return None;
            }
            let start = compiles.start_of(event)?;
            let (frame, callers) = start.stack.split_last()?;
            let mut broke =
                |place: &'e LoggedFrame, line| compiles.broke_running(start, place, line, &mut same_function);
            if let Some(line) = resumed_after(&frame.function)
                && guards_a_handed_over_value(event)
                && let Some(root) = broke(frame, line)
            {
                return Some(root);
            }
            // The nearest caller that broke: the frame runs apart because of that break.
            callers.iter().rev().find_map(|caller| broke(caller, caller.line))
        })
        .collect()
}

/// A log, a process in it, and a frame id there.
type FrameKey = (usize, Option<u32>, u64);

/// The log's compiles and breaks, in log order.
struct Compiles<'e> {
    /// Per (log, rank, frame id, compile number): the starts of that compile (one per phase).
    starts: HashMap<(usize, Option<u32>, u64, u64), Vec<&'e FrameStart>>,
    /// Per (log, rank, file, function): the starts of frames compiling that function's code.
    by_code: HashMap<(usize, Option<u32>, &'e str, &'e str), Vec<&'e FrameStart>>,
    /// Per (log, rank, frame id): the graph breaks logged, as (log line, innermost frame).
    breaks: HashMap<FrameKey, Vec<(usize, &'e LoggedFrame)>>,
}

impl<'e> Compiles<'e> {
    fn of(evidence: &'e Evidence) -> Self {
        let mut compiles =
            Compiles { starts: HashMap::default(), by_code: HashMap::default(), breaks: HashMap::default() };
        for start in &evidence.starts {
            let key = (start.log, start.rank, start.frame_id, start.frame_compile_id);
            compiles.starts.entry(key).or_default().push(start);
            if let Some(frame) = start.stack.last() {
                let code = (start.log, start.rank, frame.file.as_str(), user_function(&frame.function));
                compiles.by_code.entry(code).or_default().push(start);
            }
        }
        for event in evidence.events.iter().filter(|event| event.kind == EventKind::GraphBreak) {
            if let (Some(frame_id), Some(root)) = (event.frame_id, event.frames.first()) {
                compiles.breaks.entry((event.log, event.rank, frame_id)).or_default().push((event.origin.line, root));
            }
        }
        compiles
    }

    /// The start of the compile an event belongs to: of its frame and compile number, the nearest
    /// in the log (a recompile's reasons come just before its start; a break comes after).
    fn start_of(&self, event: &Event) -> Option<&'e FrameStart> {
        let key = (event.log, event.rank, event.frame_id?, event.frame_compile_id?);
        self.starts.get(&key)?.iter().copied().min_by_key(|start| start.line.abs_diff(event.origin.line))
    }

    /// The innermost line of the graph break that left the function of `place` running eagerly
    /// at `line` when `entered` started: a frame compiling that function's code (the one starting
    /// nearest before `line`, its latest compile before `entered`) logged the break since. A
    /// function Dynamo never compiled has no such frame.
    fn broke_running(
        &self,
        entered: &'e FrameStart,
        place: &'e LoggedFrame,
        line: usize,
        same_function: &mut impl FnMut(&'e str, (&'e str, usize), (&'e str, usize)) -> bool,
    ) -> Option<&'e LoggedFrame> {
        let code = (entered.log, entered.rank, place.file.as_str(), user_function(&place.function));
        let caller = self
            .by_code
            .get(&code)?
            .iter()
            .filter(|start| start.line < entered.line)
            .filter_map(|start| Some((start.stack.last()?, *start)))
            .filter(|(frame, _)| frame.line < line)
            .filter(|(frame, _)| same_function(&place.file, (&place.function, line), (&frame.function, frame.line)))
            // A resumed frame starts later in the function than the frame it resumes.
            .max_by_key(|(frame, start)| (frame.line, start.line))
            .map(|(_, start)| start)?;
        let breaks = self.breaks.get(&(caller.log, caller.rank, caller.frame_id))?;
        breaks.iter().filter(|(at, _)| caller.line < *at && *at < entered.line).map(|(_, root)| *root).next_back()
    }
}

/// Whether a recompile's failed guard checks a value a break handed over: a plain local
/// (`padding_len == 504`) or a stack value (`___stack0[0] == 504`). In code resumed after a graph
/// break, those are the break's live values. `self.flag == True` is the object's state, there
/// before any break.
pub fn guards_a_handed_over_value(event: &Event) -> bool {
    let name = event.guarded.as_deref().unwrap_or_else(|| event.reason.split_whitespace().next().unwrap_or(""));
    let name = name.split('[').next().unwrap_or(name);
    name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Origin;

    fn frame(file: &str, line: usize, function: &str) -> LoggedFrame {
        LoggedFrame { file: file.into(), line, function: function.into() }
    }

    /// An event of compile `[frame_id/compile_id]`, at `line` of the log.
    fn event(kind: EventKind, (frame_id, compile_id): (u64, u64), line: usize, frames: Vec<LoggedFrame>) -> Event {
        Event {
            kind,
            log: 0,
            rank: None,
            thread: None,
            frame_id: Some(frame_id),
            frame_compile_id: Some(compile_id),
            frames,
            reason: String::new(),
            gb_code: None,
            guarded: None,
            origin: Origin { log: "t.log".into(), line },
        }
    }

    fn start((frame_id, frame_compile_id): (u64, u64), line: usize, stack: Vec<LoggedFrame>) -> FrameStart {
        FrameStart { log: 0, line, rank: None, frame_id, frame_compile_id, stack }
    }

    /// `Net.forward` (line 30, compiled as frame 0) calls `self.stages(x)` at 31; a stage's
    /// `forward` (line 20, frame 1) calls its mixer at 21, whose LSTM call at 11 breaks the graph.
    /// As torch 2.15 logs it, the break's traceback leaves out the broken frame's own line (31).
    fn staged() -> Evidence {
        let runner = frame("train.py", 5, "main");
        let stage = frame("m.py", 20, "forward");
        Evidence {
            starts: vec![
                start((0, 0), 10, vec![runner.clone(), frame("m.py", 30, "forward")]),
                start((1, 0), 30, vec![runner.clone(), frame("m.py", 31, "forward"), stage.clone()]),
                start((1, 1), 50, vec![runner.clone(), frame("m.py", 31, "forward"), stage.clone()]),
            ],
            events: vec![
                event(
                    EventKind::GraphBreak,
                    (0, 0),
                    20,
                    vec![frame("m.py", 11, "forward"), frame("m.py", 21, "forward"), runner],
                ),
                event(EventKind::Recompile, (1, 1), 49, vec![stage]),
            ],
            ..Evidence::default()
        }
    }

    /// m.py's functions: `Mixer.forward` 10-12, `Stage.forward` 20-22, `Net.forward` 30-40.
    fn same_function(_file: &str, (_, a): (&str, usize), (_, b): (&str, usize)) -> bool {
        let span = |line: usize| [(10, 12), (20, 22), (30, 40)].into_iter().find(|(f, l)| *f <= line && line <= *l);
        span(a).is_some() && span(a) == span(b)
    }

    fn caused(evidence: &Evidence) -> Vec<Option<LoggedFrame>> {
        causes(evidence, same_function).into_iter().map(|cause| cause.cloned()).collect()
    }

    #[test]
    fn a_frame_called_by_a_compiled_function_that_broke_names_that_break() {
        let evidence = staged();
        assert_eq!(caused(&evidence), vec![None, Some(frame("m.py", 11, "forward"))]);
    }

    #[test]
    fn a_caller_dynamo_never_compiled_links_nothing() {
        // Compiled block by block: `Net.forward` runs eagerly by design, not because it broke.
        let mut evidence = staged();
        evidence.starts.remove(0);
        evidence.events.remove(0);
        assert_eq!(caused(&evidence), vec![None]);
    }

    #[test]
    fn a_break_of_another_phase_links_nothing() {
        // The same frame id in a later phase of the log (after `torch._dynamo.reset`), no break.
        let mut evidence = staged();
        let runner = frame("train.py", 5, "main");
        evidence.starts.push(start((0, 0), 60, vec![runner.clone(), frame("m.py", 30, "forward")]));
        evidence.starts.push(start(
            (1, 1),
            80,
            vec![runner, frame("m.py", 31, "forward"), frame("m.py", 20, "forward")],
        ));
        evidence.events[1].origin.line = 79;
        assert_eq!(caused(&evidence), vec![None, None]);
    }

    #[test]
    fn code_resumed_after_a_break_that_guards_a_handed_over_value_names_it() {
        let mut evidence = staged();
        let resumed = frame("m.py", 31, "torch_dynamo_resume_in_forward_at_31");
        evidence.starts[2].stack = vec![frame("train.py", 5, "main"), resumed.clone()];
        evidence.events[1].frames = vec![resumed];
        evidence.events[1].reason = "___stack0[0] == 504".into();
        assert_eq!(caused(&evidence), vec![None, Some(frame("m.py", 11, "forward"))]);
        evidence.events[1].reason = "self._modules['conv'].stride == (1, 1)".into();
        assert_eq!(caused(&evidence), vec![None, None], "its guard checks no handed-over value");
    }
}
