//! Dynamo's two messages, as both logs write them (the trace as an artifact's payload, the text
//! log as the lines after its `[__graph_breaks]` / `[__recompiles]` tag): a graph break's reason,
//! GB code and user traceback, and a recompile's failed guard with the source line it came from.

use super::LoggedFrame;

/// What a graph-break message says.
#[derive(Debug, Default, PartialEq)]
pub struct GraphBreakMessage {
    pub reason: String,
    pub gb_code: Option<String>,
    /// Innermost first.
    pub frames: Vec<LoggedFrame>,
}

/// What a recompile message says about its most recent guard failure.
#[derive(Debug, Default, PartialEq)]
pub struct RecompileMessage {
    /// The failed guard (`self.flag == True`).
    pub guard: String,
    /// The name it checks (`self.flag`, `x`).
    pub guarded: Option<String>,
    /// Innermost first: the user stack of the guard's source, else the `# file:line in fn` Dynamo
    /// appends to the guard (a path it may cut short at the front).
    pub frames: Vec<LoggedFrame>,
}

/// Parse a graph-break message: `Graph break in user code at FILE:LINE`, `Graph Break Reason:
/// ...`, the explanation, the GB code's link, `User code traceback:`.
pub fn graph_break(text: &str) -> GraphBreakMessage {
    let lines: Vec<&str> = text.lines().collect();
    let mut message = GraphBreakMessage { gb_code: gb_code(text), ..Default::default() };
    let mut title = None;
    let mut explanation = None;
    let mut head = None;
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if let Some(at) = trimmed.strip_prefix("Graph break in user code at ") {
            head = file_and_line(at);
        } else if let Some(reason) = trimmed.strip_prefix("Graph Break Reason: ") {
            // A generic lead-in ("Encountered graph break when attempting to trace CALL: ...")
            // is followed by the real title on the next non-empty line.
            title = Some(if reason.starts_with("Encountered graph break when attempting to trace") {
                lines[index + 1..].iter().map(|next| next.trim()).find(|next| !next.is_empty()).unwrap_or(reason)
            } else {
                reason
            });
        } else if let Some(text) = trimmed.strip_prefix("Explanation: ") {
            explanation.get_or_insert(text);
        } else if trimmed == "User code traceback:" {
            message.frames = traceback(&lines[index + 1..]);
            break;
        }
    }
    message.reason = match (title, explanation) {
        (Some(title), Some(explanation)) => format!("{title}: {explanation}"),
        (Some(title), None) => title.to_string(),
        (None, _) => lines.first().map(|line| line.trim().to_string()).unwrap_or_default(),
    };
    if message.frames.is_empty()
        && let Some((file, line)) = head
    {
        message.frames.push(LoggedFrame { file, line, function: String::new() });
    }
    message
}

/// Parse one guard failure: `3/0: self.flag == True   # if self.flag:  # m.py:16 in forward`,
/// then `User stack trace:` and its `File` lines. Of several failures (one per cached compile)
/// the first, the most recent, is read.
pub fn recompile(text: &str) -> RecompileMessage {
    let mut lines = text.lines().map(str::trim_end).skip_while(|line| line.trim().is_empty());
    let first = lines.next().unwrap_or_default().trim();
    let first = strip_compile_id(first);
    let (guard, comment) = match first.find("  #").or_else(|| first.find(" # ")) {
        Some(at) => (first[..at].trim(), Some(first[at..].trim())),
        None => (first.trim(), None),
    };
    // The stack lines of this failure run until the next failure's `N/M:` line.
    let rest: Vec<&str> = lines.take_while(|line| !starts_with_compile_id(line.trim())).collect();
    let mut frames = traceback(&rest);
    if frames.is_empty()
        && let Some(frame) = comment.and_then(guard_comment_frame)
    {
        frames.push(frame);
    }
    RecompileMessage { guard: guard.to_string(), guarded: guarded_name(guard), frames }
}

/// `https://.../gb/gb0170.html` -> `GB0170`.
fn gb_code(text: &str) -> Option<String> {
    let at = text.find("/gb/gb")? + "/gb/".len();
    let code: String = text[at..].chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
    (code.len() > 2).then(|| code.to_ascii_uppercase())
}

/// `File "PATH", line N, in NAME` lines (outermost first, as Python prints them), innermost first.
fn traceback(lines: &[&str]) -> Vec<LoggedFrame> {
    let mut frames = Vec::new();
    for line in lines {
        let trimmed = line.trim();
        if trimmed.starts_with("Traceback (most recent call last)") {
            break;
        }
        if let Some(frame) = file_line(trimmed) {
            frames.push(frame);
        }
    }
    frames.reverse();
    frames
}

/// `File "PATH", line N, in NAME`.
fn file_line(line: &str) -> Option<LoggedFrame> {
    let rest = line.strip_prefix("File \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let (number, function) = match rest.split_once(", in ") {
        Some((number, function)) => (number, function),
        None => (rest, ""),
    };
    Some(LoggedFrame { file: file.to_string(), line: number.trim().parse().ok()?, function: function.to_string() })
}

/// `PATH:LINE` (the path may hold colons: the last one splits).
fn file_and_line(text: &str) -> Option<(String, usize)> {
    let (file, line) = text.trim().rsplit_once(':')?;
    Some((file.to_string(), line.trim().parse().ok()?))
}

/// From `# if self.flag:  # mp/m.py:16 in forward (HINT: ...)`, the frame `mp/m.py:16`.
fn guard_comment_frame(comment: &str) -> Option<LoggedFrame> {
    let last = comment.rsplit("  # ").next()?.trim_start_matches('#').trim();
    let (place, function) = match last.split_once(" in ") {
        Some((place, rest)) => (place, rest.split_whitespace().next().unwrap_or_default()),
        None => (last, ""),
    };
    let (file, line) = file_and_line(place)?;
    Some(LoggedFrame { file, line, function: function.to_string() })
}

fn starts_with_compile_id(line: &str) -> bool {
    strip_compile_id(line).len() != line.len()
}

/// `3/0: guard` -> `guard` (also `[!0/3/0]`-style ids with more parts).
fn strip_compile_id(line: &str) -> &str {
    let Some((id, rest)) = line.split_once(": ") else { return line };
    let id = id.trim_start_matches('!');
    let is_id =
        !id.is_empty() && id.split('/').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
    if is_id && id.contains('/') { rest } else { line }
}

/// The name a guard checks, as the user writes it: `self.flag` in `self.flag == True`,
/// `self.blocks[0].scale` in `self._modules['blocks']._modules['0']._buffers['scale'] ...`, `x` in
/// `L['x'].size()[0] == 2` and in `tensor 'x' size mismatch at index 1`, `(closure).latest` for
/// a variable a hook closes over (`...__closure__[0].cell_contents.latest`).
pub fn guarded_name(guard: &str) -> Option<String> {
    let guard = readable(guard);
    if let Some(at) = guard.find(".cell_contents.") {
        return Some(format!("(closure).{}", name_chain(&guard[at + ".cell_contents.".len()..])));
    }
    if let Some(rest) = guard.strip_prefix("tensor '") {
        return Some(rest[..rest.find("' ")?].to_string());
    }
    if let Some(at) = guard.find("self.") {
        let name = name_chain(&guard[at + "self.".len()..]);
        if !name.is_empty() {
            return Some(format!("self.{name}"));
        }
    }
    let at = guard.find("L['")? + "L['".len();
    let name = &guard[at..];
    Some(name[..name.find('\'')?].to_string())
}

/// `self._modules['blocks']._modules['0']._buffers['table']` -> `self.blocks[0].table`.
fn readable(guard: &str) -> String {
    let mut out = guard.replace("L['self']", "self");
    for store in ["._modules['", "._buffers['", "._parameters['"] {
        while let Some(at) = out.find(store) {
            let rest = &out[at + store.len()..];
            let Some(end) = rest.find("']") else { break };
            let key = &rest[..end];
            let shown = if key.chars().all(|c| c.is_ascii_digit()) { format!("[{key}]") } else { format!(".{key}") };
            out = format!("{}{shown}{}", &out[..at], &rest[end + 2..]);
        }
    }
    out
}

/// The leading `name.name[0].name` of a text.
fn name_chain(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || "_.[]".contains(c))).unwrap_or(text.len());
    text[..end].trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_break_is_read_with_its_reason_code_and_innermost_frame() {
        let text = "Graph break in user code at /w/m.py:14\nGraph Break Reason: Data-dependent branching\n  \
                    Explanation: Detected data-dependent branching.\n\n For more details, please visit: \
                    https://x/gb/gb0170.html\n\nUser code traceback:\n  File \"/w/m.py\", line 31, in <module>\n    \
                    main()\n  File \"/w/m.py\", line 14, in forward\n    if x.sum() > 0:\n\nTraceback (most recent call \
                    last):\n  File \"/torch/x.py\", line 1, in f\n";
        let message = graph_break(text);
        assert_eq!(message.reason, "Data-dependent branching: Detected data-dependent branching.");
        assert_eq!(message.gb_code.as_deref(), Some("GB0170"));
        assert_eq!(message.frames.len(), 2);
        assert_eq!((message.frames[0].file.as_str(), message.frames[0].line), ("/w/m.py", 14));
        assert_eq!(message.frames[0].function, "forward");
    }

    #[test]
    fn a_generic_lead_in_gives_way_to_the_title_after_it() {
        let text = "Graph break in user code at /w/m.py:13\nGraph Break Reason: Encountered graph break when attempting \
                    to trace CALL: a function call:\n\nFailed to trace builtin operator\n";
        let message = graph_break(text);
        assert_eq!(message.reason, "Failed to trace builtin operator");
        assert_eq!((message.frames[0].file.as_str(), message.frames[0].line), ("/w/m.py", 13));
    }

    #[test]
    fn a_guard_failure_gives_the_guard_its_name_and_its_source_line() {
        let text = "3/0: self.flag == True       # if self.flag:  # mp/m.py:16 in forward\nUser stack trace:\n  \
                    File \"/tmp/m.py\", line 16, in forward\n    if self.flag:\n";
        let message = recompile(text);
        assert_eq!(message.guard, "self.flag == True");
        assert_eq!(message.guarded.as_deref(), Some("self.flag"));
        assert_eq!((message.frames[0].file.as_str(), message.frames[0].line), ("/tmp/m.py", 16));
    }

    #[test]
    fn without_a_stack_the_guard_comment_places_it() {
        let message = recompile("2/1: L['x'].size()[0] == 4   # return x.view(4)  # els/m.py:9 in forward (HINT: x)");
        assert_eq!(message.guarded.as_deref(), Some("x"));
        assert_eq!((message.frames[0].file.as_str(), message.frames[0].line), ("els/m.py", 9));
        assert_eq!(message.frames[0].function, "forward");
    }

    #[test]
    fn a_guard_through_modules_and_closures_names_what_the_user_wrote() {
        let guard = "self._modules['blocks']._modules['0']._forward_hooks[list(dict.keys(x))[0]].__closure__[0].cell_contents.enabled == False";
        assert_eq!(guarded_name(guard).as_deref(), Some("(closure).enabled"));
        let guard =
            "tensor 'self._modules['positions']._buffers['table']' size mismatch at index 0. expected 8, actual 24";
        assert_eq!(guarded_name(guard).as_deref(), Some("self.positions.table"));
        assert_eq!(guarded_name("tensor 'tokens' size mismatch at index 1").as_deref(), Some("tokens"));
        assert_eq!(
            guarded_name("L['self']._modules['blocks']._modules['1'].scale == 2").as_deref(),
            Some("self.blocks[1].scale")
        );
    }

    #[test]
    fn of_several_failures_the_first_is_read() {
        let text =
            "3/1: self.steps == 1   # s  # a/m.py:29 in forward\n3/0: self.steps == 0   # s  # a/m.py:29 in forward";
        let message = recompile(text);
        assert_eq!(message.guard, "self.steps == 1");
        assert_eq!(message.frames.len(), 1);
    }
}
