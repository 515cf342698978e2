//! The text `TORCH_LOGS="graph_breaks,recompiles"` writes to stderr: each line of a message is
//! a glog line tagged with its compile id and log name,
//! `V1123 19:53:58.057000 7183 torch/_dynamo/symbolic_convert.py:5577] [0/0] [__graph_breaks] TEXT`,
//! and a launcher may put `[rank0]:` in front. A message starts with `Graph break in user code at`
//! or `Recompiling function`; its lines are gathered per process (the rank, else glog's thread
//! id: processes interleave on one stderr), compile id and tag, and read as the trace's payloads are.
//!
//! The text log has no compile times and no record of compiles without an event.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use anyhow::{Result, bail};

use super::{Event, EventKind, Evidence, Origin, Problem, dynamo_message};

const GRAPH_BREAKS: &str = "[__graph_breaks]";
const RECOMPILES: &str = "[__recompiles]";

/// One message being gathered.
struct Message {
    kind: EventKind,
    rank: Option<u32>,
    thread: String,
    compile_id: Option<(u64, u64)>,
    line: usize,
    text: String,
}

/// A tagged line: who logged it and what it says.
struct Tagged<'a> {
    rank: Option<u32>,
    /// glog's thread id, the third field of the prefix: tells processes apart without ranks.
    thread: &'a str,
    compile_id: Option<(u64, u64)>,
    compile_text: &'a str,
    kind: EventKind,
    text: &'a str,
}

pub fn read(log: &Path, bytes: &[u8], evidence: &mut Evidence) -> Result<()> {
    let text = String::from_utf8_lossy(bytes);
    let mut open: HashMap<(Option<u32>, String, String, bool), Message> = HashMap::default();
    let mut done: Vec<Message> = Vec::new();
    let mut trace_like = false;
    for (index, line) in text.lines().enumerate() {
        let Some(tagged) = tagged(line) else {
            trace_like |= index < 200 && line.contains("] {\"");
            continue;
        };
        let key = (
            tagged.rank,
            tagged.thread.to_string(),
            tagged.compile_text.to_string(),
            tagged.kind == EventKind::GraphBreak,
        );
        let starts = match tagged.kind {
            EventKind::GraphBreak => tagged.text.starts_with("Graph break in user code at"),
            EventKind::Recompile => tagged.text.starts_with("Recompiling function"),
        };
        if starts {
            if let Some(message) = open.remove(&key) {
                done.push(message);
            }
            let message = Message {
                kind: tagged.kind.clone(),
                rank: tagged.rank,
                thread: tagged.thread.to_string(),
                compile_id: tagged.compile_id,
                line: index + 1,
                text: String::new(),
            };
            open.insert(key.clone(), message);
        }
        match open.get_mut(&key) {
            Some(message) => {
                message.text.push_str(tagged.text);
                message.text.push('\n');
            }
            None => evidence.problems.push(Problem {
                log: log.to_path_buf(),
                line: Some(index + 1),
                message: "a message line without its first line (the log starts mid-message?), skipped".to_string(),
            }),
        }
    }
    done.extend(open.into_values());
    if done.is_empty() && trace_like {
        bail!(
            "{}: this is a TORCH_TRACE log, not TORCH_LOGS text output: read it with `--trace {}`",
            log.display(),
            log.display()
        );
    }
    if done.is_empty() {
        evidence.problems.push(Problem {
            log: log.to_path_buf(),
            line: None,
            message: "no graph break or recompile in it (was it written with TORCH_LOGS=\"graph_breaks,recompiles\"?)"
                .to_string(),
        });
    }
    done.sort_by_key(|message| message.line);
    let log_index = evidence.logs.len();
    evidence.quoted.extend(done.iter().flat_map(|message| super::stale::quoted_lines(&message.text)));
    evidence.events.extend(done.into_iter().map(|message| event(log, log_index, message)));
    evidence.logs.push(log.to_path_buf());
    Ok(())
}

fn event(log: &Path, log_index: usize, message: Message) -> Event {
    let origin = Origin { log: log.to_path_buf(), line: message.line };
    let (frame_id, frame_compile_id) = match message.compile_id {
        Some((frame, compile)) => (Some(frame), Some(compile)),
        None => (None, None),
    };
    match message.kind {
        EventKind::GraphBreak => {
            let read = dynamo_message::graph_break(&message.text);
            Event {
                kind: EventKind::GraphBreak,
                log: log_index,
                rank: message.rank,
                thread: Some(message.thread.clone()),
                frame_id,
                frame_compile_id,
                frames: read.frames,
                reason: read.reason,
                gb_code: read.gb_code,
                guarded: None,
                origin,
            }
        }
        EventKind::Recompile => {
            let read = dynamo_message::recompile(&guard_failures(&message.text));
            Event {
                kind: EventKind::Recompile,
                log: log_index,
                rank: message.rank,
                thread: Some(message.thread.clone()),
                frame_id,
                frame_compile_id,
                frames: read.frames,
                reason: read.guard,
                gb_code: None,
                guarded: read.guarded,
                origin,
            }
        }
    }
}

/// The failures listed under `triggered by the following guard failure(s):`, each line
/// without its `- ` bullet.
fn guard_failures(text: &str) -> String {
    text.lines()
        .skip_while(|line| !line.trim_start().starts_with("triggered by"))
        .skip(1)
        .map(|line| {
            let line = line.trim_start();
            line.strip_prefix("- ").or_else(|| line.strip_prefix('-')).unwrap_or(line)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Split `[rank0]:V... file.py:1] [3/1] [__recompiles] TEXT`.
fn tagged(line: &str) -> Option<Tagged<'_>> {
    let (kind, at, tag) = if let Some(at) = line.find(GRAPH_BREAKS) {
        (EventKind::GraphBreak, at, GRAPH_BREAKS)
    } else {
        (EventKind::Recompile, line.find(RECOMPILES)?, RECOMPILES)
    };
    let text = line[at + tag.len()..].strip_prefix(' ').unwrap_or(&line[at + tag.len()..]);
    let before = &line[..at];
    let rank =
        line.strip_prefix("[rank").and_then(|rest| rest.split(']').next()).and_then(|number| number.parse().ok());
    let glog = line.strip_prefix("[rank").and_then(|rest| rest.split_once("]:")).map_or(line, |(_, rest)| rest);
    let thread = glog.split_whitespace().nth(2).unwrap_or_default();
    // The compile id is the bracket just before the tag: `[3/1] `.
    let compile_text = before.trim_end().rsplit_once('[').map(|(_, id)| id.trim_end_matches(']')).unwrap_or_default();
    let compile_id = {
        let mut parts = compile_text.trim_start_matches('!').split('/');
        match (parts.next().and_then(|p| p.parse().ok()), parts.next().and_then(|p| p.parse().ok())) {
            (Some(frame), Some(compile)) => Some((frame, compile)),
            _ => None,
        }
    };
    Some(Tagged { rank, thread, compile_id, compile_text, kind, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_ranks_are_gathered_apart() {
        let log = "[rank0]:V1 a.py:1] [0/0] [__graph_breaks] Graph break in user code at /m.py:5\n\
                   [rank1]:V1 a.py:1] [0/0] [__graph_breaks] Graph break in user code at /m.py:5\n\
                   [rank0]:V1 a.py:1] [0/0] [__graph_breaks] Graph Break Reason: Data-dependent branching\n\
                   [rank1]:V1 a.py:1] [0/0] [__graph_breaks] Graph Break Reason: Data-dependent branching\n";
        let mut evidence = Evidence::default();
        read(Path::new("x.log"), log.as_bytes(), &mut evidence).unwrap();
        assert_eq!(evidence.events.len(), 2);
        let ranks: Vec<Option<u32>> = evidence.events.iter().map(|event| event.rank).collect();
        assert_eq!(ranks, vec![Some(0), Some(1)]);
        assert!(evidence.events.iter().all(|event| event.reason == "Data-dependent branching"));
        assert_eq!(evidence.events[0].frames[0].line, 5);
    }

    #[test]
    fn processes_without_ranks_are_told_apart_by_their_thread_id() {
        let log = "V1 10:00:00.1 111 a.py:1] [0/0] [__graph_breaks] Graph break in user code at /m.py:5\n\
                   V1 10:00:00.1 222 a.py:1] [0/0] [__graph_breaks] Graph break in user code at /m.py:6\n\
                   V1 10:00:00.1 111 a.py:1] [0/0] [__graph_breaks] Graph Break Reason: One\n\
                   V1 10:00:00.1 222 a.py:1] [0/0] [__graph_breaks] Graph Break Reason: Two\n";
        let mut evidence = Evidence::default();
        read(Path::new("x.log"), log.as_bytes(), &mut evidence).unwrap();
        let read: Vec<(usize, &str)> =
            evidence.events.iter().map(|event| (event.frames[0].line, event.reason.as_str())).collect();
        assert_eq!(read, vec![(5, "One"), (6, "Two")]);
    }

    #[test]
    fn a_recompile_reads_its_first_failure() {
        let log = "V1 g.py:1] [3/1] [__recompiles] Recompiling function forward in /m.py:14\n\
                   V1 g.py:1] [3/1] [__recompiles]     triggered by the following guard failure(s):\n\
                   V1 g.py:1] [3/1] [__recompiles]     - 3/0: self.flag == True   # if self.flag:  # m.py:16 in forward\n\
                   V1 g.py:1] [3/1] [__recompiles]     - User stack trace:\n\
                   V1 g.py:1] [3/1] [__recompiles]     -   File \"/m.py\", line 16, in forward\n";
        let mut evidence = Evidence::default();
        read(Path::new("x.log"), log.as_bytes(), &mut evidence).unwrap();
        let event = &evidence.events[0];
        assert_eq!((event.frame_id, event.frame_compile_id), (Some(3), Some(1)));
        assert_eq!(event.reason, "self.flag == True");
        assert_eq!((event.frames[0].file.as_str(), event.frames[0].line), ("/m.py", 16));
    }
}
