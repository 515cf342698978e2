//! Recompiles that exist only because of a graph break, with the break's innermost line:
//! - Frames compiled on their own because their caller broke: when Dynamo breaks the graph at a
//!   call (`x = self.blocks(x)` whose callee calls an `nn.LSTM`), the call runs eagerly, and each
//!   function it reaches is compiled as a frame of its own. Such a frame is called once per block
//!   or stage, and recompiles for each one's module types, strides and sizes.
//! - Code Dynamo resumed after a break (`torch_dynamo_resume_in_forward_at_1473`) takes the values
//!   the break hands over as inputs, and a guard on one of them (`padding_len == 504`,
//!   `___stack0[0] == 504`) fails when they change.
//! Both are read from the stack each compile started from (`dynamo_start`) and the breaks'
//! tracebacks. A frame apart that recompiles because a flag flipped between calls is blamed on
//! the break too: once the break is fixed, that recompile shows at its own line.

use rustc_hash::FxHashMap as HashMap;

use super::frames::{resumed_after, user_function};
use super::{Event, EventKind, Evidence, FrameStart, LoggedFrame};

/// A compile: (log, rank, frame id, compile number).
type CompileKey = (usize, Option<u32>, u64, u64);

/// Sets `caused_by_break` on each recompile of a frame entered from a line where a logged graph
/// break ran its caller eagerly.
pub fn link(evidence: &mut Evidence) {
    let starts: HashMap<CompileKey, &FrameStart> = evidence
        .starts
        .iter()
        .map(|start| ((start.log, start.rank, start.frame_id, start.frame_compile_id), start))
        .collect();
    let broke_at = lines_that_broke(evidence, &starts);
    if broke_at.is_empty() {
        return;
    }
    let entered: Vec<Option<LoggedFrame>> = evidence
        .events
        .iter()
        .map(|event| {
            if event.kind != EventKind::Recompile {
                return None;
            }
            let start = starts.get(&(event.log, event.rank, event.frame_id?, event.frame_compile_id?))?;
            let (frame, callers) = start.stack.split_last()?;
            let broke = |file: &str, line: usize| {
                broke_at.get(&(event.log, event.rank, file, line)).map(|root| (*root).clone())
            };
            if let Some(line) = resumed_after(&frame.function)
                && guards_a_handed_over_value(event)
                && let Some(root) = broke(&frame.file, line)
            {
                return Some(root);
            }
            // The nearest caller that broke: the frame runs apart because of that break.
            callers.iter().rev().find_map(|caller| broke(&caller.file, caller.line))
        })
        .collect();
    drop(starts);
    for (event, entered) in evidence.events.iter_mut().zip(entered) {
        event.caused_by_break = entered;
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

/// Where each frame that broke stood when it broke: its own line in the break's traceback (the
/// call it then ran eagerly), with the break's innermost line. A frame entered while that line
/// was on its callers' stack was called from the eager call.
fn lines_that_broke<'e>(
    evidence: &'e Evidence,
    starts: &HashMap<CompileKey, &'e FrameStart>,
) -> HashMap<(usize, Option<u32>, &'e str, usize), &'e LoggedFrame> {
    let mut broke_at = HashMap::default();
    for event in evidence.events.iter().filter(|event| event.kind == EventKind::GraphBreak) {
        let (Some(frame_id), Some(compile_id), Some(root)) =
            (event.frame_id, event.frame_compile_id, event.frames.first())
        else {
            continue;
        };
        let Some(start) = starts.get(&(event.log, event.rank, frame_id, compile_id)) else { continue };
        if let Some(own) = own_line(event, start) {
            broke_at.entry((event.log, event.rank, own.file.as_str(), own.line)).or_insert(root);
        }
    }
    broke_at
}

/// The broken frame's own entry in the break's traceback (innermost first): in the frame's file
/// and function, at or after its first line, and the nearest such line to it (a caller of the
/// same name in the same file lies outside the frame's lines, so further on).
fn own_line<'e>(event: &'e Event, start: &FrameStart) -> Option<&'e LoggedFrame> {
    let frame = start.stack.last()?;
    let function = user_function(&frame.function);
    event
        .frames
        .iter()
        .filter(|logged| logged.file == frame.file && user_function(&logged.function) == function)
        .filter(|logged| logged.line >= frame.line)
        .min_by_key(|logged| logged.line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Origin;

    fn frame(file: &str, line: usize, function: &str) -> LoggedFrame {
        LoggedFrame { file: file.into(), line, function: function.into() }
    }

    /// An event of compile `[frame_id/compile_id]`.
    fn event(kind: EventKind, (frame_id, compile_id): (u64, u64), frames: Vec<LoggedFrame>) -> Event {
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
            caused_by_break: None,
            origin: Origin { log: "t.log".into(), line: 1 },
        }
    }

    fn start((frame_id, frame_compile_id): (u64, u64), stack: Vec<LoggedFrame>) -> FrameStart {
        FrameStart { log: 0, rank: None, frame_id, frame_compile_id, stack }
    }

    /// `Net.forward` (line 30, compiled) calls `self.stages(x)` at 31; a stage's `forward` (line 20)
    /// calls its mixer at 21, whose LSTM call at 11 breaks the graph.
    fn staged(stage_called_from: usize) -> Evidence {
        let runner = frame("train.py", 5, "main");
        let lstm_break = event(
            EventKind::GraphBreak,
            (0, 0),
            vec![
                frame("m.py", 11, "forward"),
                frame("m.py", 21, "forward"),
                frame("m.py", 31, "forward"),
                runner.clone(),
            ],
        );
        let stage_recompile = event(EventKind::Recompile, (1, 1), vec![frame("m.py", 20, "forward")]);
        Evidence {
            events: vec![lstm_break, stage_recompile],
            starts: vec![
                start((0, 0), vec![runner.clone(), frame("m.py", 30, "forward")]),
                start((1, 1), vec![runner, frame("m.py", stage_called_from, "forward"), frame("m.py", 20, "forward")]),
            ],
            ..Evidence::default()
        }
    }

    #[test]
    fn a_frame_called_from_the_line_where_its_caller_broke_names_that_break() {
        let mut evidence = staged(31);
        link(&mut evidence);
        assert_eq!(evidence.events[1].caused_by_break, Some(frame("m.py", 11, "forward")));
        assert_eq!(evidence.events[0].caused_by_break, None, "a break is no recompile");
    }

    #[test]
    fn a_frame_called_from_elsewhere_names_none() {
        // Called from line 33 of the compiled forward, which did not break there.
        let mut evidence = staged(33);
        link(&mut evidence);
        assert_eq!(evidence.events[1].caused_by_break, None);
    }

    #[test]
    fn code_resumed_after_a_break_that_guards_a_handed_over_value_names_it() {
        // Net.forward broke at 31 (inside, at the LSTM's 11), and resumed after it.
        let mut evidence = staged(31);
        let resumed = frame("m.py", 31, "torch_dynamo_resume_in_forward_at_31");
        evidence.starts[1].stack = vec![frame("train.py", 5, "main"), resumed.clone()];
        evidence.events[1].frames = vec![resumed];
        evidence.events[1].reason = "___stack0[0] == 504".into();
        link(&mut evidence);
        assert_eq!(evidence.events[1].caused_by_break, Some(frame("m.py", 11, "forward")));
    }

    #[test]
    fn the_callers_above_the_frame_that_broke_do_not_count() {
        // The runner's line is on every frame's stack and in every traceback.
        let mut evidence = staged(31);
        evidence.starts[1].stack.remove(1);
        link(&mut evidence);
        assert_eq!(evidence.events[1].caused_by_break, None);
    }
}
