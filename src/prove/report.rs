//! The proof: per compiled frame, what the run had before the fixes and after; which findings
//! the events confirmed; what each fix removed, moved or left; the events no rule explains; and
//! whether the outputs stayed the same. Text for a person, Markdown for a pull request, JSON for
//! a program.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use ruff_source_file::LineIndex;
use serde::Serialize;
use similar::{DiffOp, TextDiff};

use super::Fixed;
use super::compare::Comparison;
use crate::evidence::frames::functions;
use crate::evidence::{Evidence, Runtime};
use crate::project::FileReport;
use crate::rules::Settings;

/// What one compiled frame did in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    pub graphs: usize,
    pub graph_breaks: usize,
    pub recompiles: usize,
    /// Compiles that made no graph: the frame ran eagerly (skipped, or its compile failed).
    pub eager_frames: usize,
    pub compile_seconds: f64,
}

/// A place where the run logged graph breaks or recompiles, with the finding it joined (a rule's
/// code, or TCF100/TCF200 when no rule explains it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Site {
    pub file: String,
    /// In the text that ran (for the run after the fixes: the fixed text).
    pub line: usize,
    /// The line in the text before the fixes that this line came from.
    pub original_line: usize,
    pub function: String,
    pub code: &'static str,
    pub graph_breaks: usize,
    pub recompiles: usize,
    pub reasons: Vec<String>,
}

/// One run's account.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunAccount {
    pub total: Counts,
    pub frames: Vec<Frame>,
    pub sites: Vec<Site>,
    pub seconds: f64,
    pub torch: Vec<String>,
    pub logs: usize,
    /// The ranks of a distributed run (one log each); empty for one process.
    pub ranks: Vec<u32>,
}

/// One compiled frame of one run: a function (its resume functions included), where it starts in
/// that run's text, and its counts.
#[derive(Debug, Clone, Serialize)]
pub struct Frame {
    pub file: String,
    pub function: String,
    pub line: usize,
    pub counts: Counts,
}

/// A frame before → after.
#[derive(Debug, Clone, Serialize)]
pub struct FrameChange {
    pub file: String,
    pub function: String,
    pub line: usize,
    pub before: Counts,
    pub after: Counts,
}

/// What happened to the events at one fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// The run before had events here; the run after had none here nor new ones in the frame.
    Removed,
    /// The events here are gone, and the frame has new ones elsewhere (`moved_to`).
    Moved,
    /// The run after still had events here.
    Left,
    /// The run before had no event here: it did not compile this code, or it did not break there.
    NotSeen,
}

#[derive(Debug, Clone, Serialize)]
pub struct FixEffect {
    pub file: String,
    pub line: usize,
    pub code: &'static str,
    pub title: String,
    pub effect: Effect,
    pub before: usize,
    pub after: usize,
    /// For `Moved`: the lines (of the text before the fixes) the frame's new events are at.
    pub moved_to: Vec<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    pub dir: PathBuf,
    pub patch: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct Proof {
    pub command: Vec<String>,
    pub unsafe_fixes: bool,
    pub before: RunAccount,
    pub after: RunAccount,
    pub frames: Vec<FrameChange>,
    pub fixes: Vec<FixEffect>,
    /// Findings confirmed by the run before the fixes: `(file, line, code, events)`.
    pub confirmed: Vec<Site>,
    /// Events no rule explains (TCF100/TCF200), before and after.
    pub unexplained_before: Vec<Site>,
    pub unexplained_after: Vec<Site>,
    pub outputs: Option<Result<Comparison, String>>,
    pub kept: Option<Kept>,
    pub warnings: Vec<String>,
}

impl RunAccount {
    /// Join a run's trace to its files' findings, as `--trace` does, and count per frame.
    pub fn of(
        evidence: &Evidence,
        mut reports: Vec<FileReport>,
        settings: &Settings,
        root: &Path,
        seconds: f64,
    ) -> Self {
        let summary = crate::evidence::attach(evidence, &mut reports, settings, None, |path| super::shown(root, path));
        let mut account = RunAccount {
            seconds,
            torch: summary.torch.clone(),
            logs: summary.logs,
            ranks: summary.ranks.clone(),
            ..Default::default()
        };
        for frame in &summary.frames {
            let (file, line) = frame.place.rsplit_once(':').unwrap_or((&frame.place, "0"));
            let counts = Counts {
                graphs: frame.graphs,
                graph_breaks: frame.breaks,
                recompiles: frame.recompiles,
                eager_frames: frame.compiles - frame.graphs,
                compile_seconds: frame.seconds,
            };
            account.total.add(&counts);
            let line = line.parse().unwrap_or(0);
            account.frames.push(Frame { file: file.to_string(), function: frame.function.clone(), line, counts });
        }
        account.sites = sites(&reports, root);
        account
    }
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.graphs += other.graphs;
        self.graph_breaks += other.graph_breaks;
        self.recompiles += other.recompiles;
        self.eager_frames += other.eager_frames;
        self.compile_seconds += other.compile_seconds;
    }

    fn events(&self) -> usize {
        self.graph_breaks + self.recompiles
    }

    /// More graph breaks, recompiles or eager frames than `before`.
    fn worse_than(&self, before: &Counts) -> bool {
        self.graph_breaks > before.graph_breaks
            || self.recompiles > before.recompiles
            || self.eager_frames > before.eager_frames
    }
}

/// The findings the run saw, with their place and function.
fn sites(reports: &[FileReport], root: &Path) -> Vec<Site> {
    let mut sites = Vec::new();
    for report in reports {
        let Ok(checked) = &report.outcome else { continue };
        let lines = LineIndex::from_source_text(&checked.text);
        let spans = functions(&checked.text);
        for diagnostic in &checked.diagnostics {
            let Some(Runtime::Seen(observed)) = &diagnostic.runtime else { continue };
            let line = lines.line_index(diagnostic.range.start()).get();
            let function = spans
                .iter()
                .filter(|span| span.first_line <= line && line <= span.last_line)
                .min_by_key(|span| span.last_line - span.first_line)
                .map_or_else(|| "<module>".to_string(), |span| span.qualname.clone());
            sites.push(Site {
                file: super::shown(root, &report.path),
                line,
                original_line: line,
                function,
                code: diagnostic.rule.code,
                graph_breaks: observed.breaks,
                recompiles: observed.recompiles,
                reasons: observed.reasons.clone(),
            });
        }
    }
    sites
}

impl Proof {
    pub fn new(command: Vec<String>, unsafe_fixes: bool) -> Self {
        Proof {
            command,
            unsafe_fixes,
            before: RunAccount::default(),
            after: RunAccount::default(),
            frames: Vec::new(),
            fixes: Vec::new(),
            confirmed: Vec::new(),
            unexplained_before: Vec::new(),
            unexplained_after: Vec::new(),
            outputs: None,
            kept: None,
            warnings: Vec::new(),
        }
    }

    /// Compare the two accounts, once both are in.
    pub fn account_for(&mut self, fixed: &[Fixed]) {
        for site in &mut self.after.sites {
            if let Some(file) = fixed.iter().find(|file| file.shown == site.file) {
                site.original_line = original_line(&file.original, &file.text, site.line);
            }
        }
        self.frames = frame_changes(&self.before, &self.after);
        self.fixes = fixed.iter().flat_map(|file| fix_effects(file, &self.before.sites, &self.after.sites)).collect();
        self.confirmed = self.before.sites.iter().filter(|site| !is_runtime_code(site.code)).cloned().collect();
        self.unexplained_before = self.before.sites.iter().filter(|site| is_runtime_code(site.code)).cloned().collect();
        self.unexplained_after = self.after.sites.iter().filter(|site| is_runtime_code(site.code)).cloned().collect();
    }

    /// Whether the run after the fixes is worse anywhere, or computed something else.
    pub fn regressed(&self) -> bool {
        let outputs_differ = matches!(&self.outputs, Some(Ok(comparison)) if !comparison.equal);
        outputs_differ || self.frames.iter().any(|frame| frame.after.worse_than(&frame.before))
    }

    /// Whether the outputs could not be compared although asked.
    pub fn outputs_unknown(&self) -> bool {
        matches!(&self.outputs, Some(Err(_)))
    }
}

fn is_runtime_code(code: &str) -> bool {
    crate::evidence::runtime_rule::RUNTIME_RULES.iter().any(|rule| rule.code == code)
}

/// The line of `original` that line `line` of `fixed` came from: the same line where the fix
/// left it, else the first line of the statement the fix rewrote.
fn original_line(original: &str, fixed: &str, line: usize) -> usize {
    let diff = TextDiff::from_lines(original, fixed);
    let wanted = line - 1;
    for op in diff.ops() {
        let new = op.new_range();
        let old = op.old_range();
        let inside = new.contains(&wanted) || (new.is_empty() && new.start == wanted);
        if !inside {
            continue;
        }
        return match op {
            DiffOp::Equal { old_index, new_index, .. } => old_index + (wanted - new_index) + 1,
            _ => old.start.min(original.lines().count().saturating_sub(1)) + 1,
        };
    }
    line
}

fn frame_changes(before: &RunAccount, after: &RunAccount) -> Vec<FrameChange> {
    let mut frames: BTreeMap<(String, String), FrameChange> = BTreeMap::new();
    let blank = |file: &str, function: &str, line: usize| FrameChange {
        file: file.to_string(),
        function: function.to_string(),
        line,
        before: Counts::default(),
        after: Counts::default(),
    };
    for (run, after_fixes) in [(before, false), (after, true)] {
        for Frame { file, function, line, counts } in &run.frames {
            let frame = frames.entry((file.clone(), function.clone())).or_insert_with(|| blank(file, function, *line));
            if after_fixes { frame.after.add(counts) } else { frame.before.add(counts) }
        }
    }
    let mut frames: Vec<FrameChange> = frames.into_values().collect();
    frames.sort_by(|a, b| {
        (b.before.events() + b.after.events()).cmp(&(a.before.events() + a.after.events())).then(a.file.cmp(&b.file))
    });
    frames
}

/// What each fix of a file did to the events at its line.
fn fix_effects(file: &Fixed, before: &[Site], after: &[Site]) -> Vec<FixEffect> {
    let events = |sites: &[Site], line: usize| -> usize {
        sites
            .iter()
            .filter(|site| site.file == file.shown && site.original_line == line)
            .map(|site| site.graph_breaks + site.recompiles)
            .sum()
    };
    file.applied
        .iter()
        .map(|applied| {
            let (before_here, after_here) = (events(before, applied.line), events(after, applied.line));
            let function = before.iter().find(|site| site.file == file.shown && site.original_line == applied.line);
            let moved_to: Vec<usize> = match function {
                Some(site) => after
                    .iter()
                    .filter(|new| new.file == file.shown && new.function == site.function)
                    .filter(|new| {
                        !before.iter().any(|old| old.file == new.file && old.original_line == new.original_line)
                    })
                    .map(|new| new.original_line)
                    .collect(),
                None => Vec::new(),
            };
            let effect = match (before_here, after_here) {
                (0, _) => Effect::NotSeen,
                (_, 0) if moved_to.is_empty() => Effect::Removed,
                (_, 0) => Effect::Moved,
                _ => Effect::Left,
            };
            FixEffect {
                file: file.shown.clone(),
                line: applied.line,
                code: applied.rule.code,
                title: applied.title.clone(),
                effect,
                before: before_here,
                after: after_here,
                moved_to,
            }
        })
        .collect()
}

/// `0 → 2`, or `2` when unchanged.
fn change<T: PartialEq + std::fmt::Display>(before: T, after: T) -> String {
    if before == after { before.to_string() } else { format!("{before} → {after}") }
}

/// Each measure before → after: graphs, graph breaks, recompiles, eager frames, compile time.
fn changes(before: &Counts, after: &Counts) -> [String; 5] {
    [
        change(before.graphs, after.graphs),
        change(before.graph_breaks, after.graph_breaks),
        change(before.recompiles, after.recompiles),
        change(before.eager_frames, after.eager_frames),
        change(format!("{:.2} s", before.compile_seconds), format!("{:.2} s", after.compile_seconds)),
    ]
}

fn counts_line(before: &Counts, after: &Counts) -> String {
    let [graphs, breaks, recompiles, eager, compiling] = changes(before, after);
    format!(
        "graphs {graphs}, graph breaks {breaks}, recompiles {recompiles}, eager frames {eager}, compiling {compiling}"
    )
}

impl Effect {
    fn describe(&self, fix: &FixEffect) -> String {
        match self {
            Effect::Removed => format!("removed {} {}", fix.before, events_word(fix.before)),
            Effect::Moved => {
                let lines: Vec<String> = fix.moved_to.iter().map(usize::to_string).collect();
                format!(
                    "removed {} {} here; the frame now breaks at line {}",
                    fix.before,
                    events_word(fix.before),
                    lines.join(", ")
                )
            }
            Effect::Left => format!("left {} of {} {}", fix.after, fix.before, events_word(fix.before)),
            Effect::NotSeen => "no event here in the run before (not reached, or not a break there)".to_string(),
        }
    }
}

fn events_word(count: usize) -> &'static str {
    if count == 1 { "event" } else { "events" }
}

fn site_line(site: &Site) -> String {
    let mut parts = Vec::new();
    if site.graph_breaks > 0 {
        parts.push(format!("{} graph break{}", site.graph_breaks, if site.graph_breaks == 1 { "" } else { "s" }));
    }
    if site.recompiles > 0 {
        parts.push(format!("{} recompile{}", site.recompiles, if site.recompiles == 1 { "" } else { "s" }));
    }
    let reason =
        site.reasons.first().map(|reason| format!(" ({})", crate::diagnostic::snippet(reason))).unwrap_or_default();
    format!("{}:{} {} {}: {}{reason}", site.file, site.original_line, site.function, site.code, parts.join(", "))
}

impl Proof {
    pub fn text(&self) -> String {
        let mut out = format!("tcfix prove: `{}`\n", self.command.join(" "));
        let kind = if self.unsafe_fixes { "safe and unsafe" } else { "safe" };
        let _ = writeln!(
            out,
            "  all frames, before → after {} {kind} {}: {}",
            self.fixes.len(),
            if self.fixes.len() == 1 { "fix" } else { "fixes" },
            counts_line(&self.before.total, &self.after.total)
        );
        let _ = writeln!(out, "  runs: {}\n", self.runs());
        out.push_str("Per compiled frame, before → after:\n");
        for frame in &self.frames {
            let _ = writeln!(
                out,
                "  {}:{} {}: {}",
                frame.file,
                frame.line,
                frame.function,
                counts_line(&frame.before, &frame.after)
            );
        }
        if self.frames.is_empty() {
            out.push_str("  (no compiled frame)\n");
        }
        out.push_str("\nFindings the run before the fixes confirmed:\n");
        self.confirmed.iter().for_each(|site| {
            let _ = writeln!(out, "  {}", site_line(site));
        });
        if self.confirmed.is_empty() {
            out.push_str("  (none)\n");
        }
        out.push_str("\nFixes:\n");
        for fix in &self.fixes {
            let _ =
                writeln!(out, "  {}:{} {} {}: {}", fix.file, fix.line, fix.code, fix.title, fix.effect.describe(fix));
        }
        if self.fixes.is_empty() {
            out.push_str("  (no fix to apply)\n");
        }
        for (when, sites) in [("before", &self.unexplained_before), ("after", &self.unexplained_after)] {
            if !sites.is_empty() {
                let _ = writeln!(out, "\nEvents no rule explains, {when} the fixes:");
                sites.iter().for_each(|site| {
                    let _ = writeln!(out, "  {}", site_line(site));
                });
            }
        }
        if let Some(outputs) = &self.outputs {
            let said = match outputs {
                Ok(comparison) => comparison.describe(),
                Err(why) => format!("not compared: {why}"),
            };
            let _ = writeln!(out, "\nOutputs: {said}");
        }
        if let Some(kept) = &self.kept {
            let _ = writeln!(
                out,
                "\nKept the fixed copy in {} and the fixes in {}",
                kept.dir.display(),
                kept.patch.display()
            );
        }
        out
    }

    /// `12.1 s → 11.8 s, 2 logs (ranks 0, 1), torch 2.15.0`.
    fn runs(&self) -> String {
        let mut out = format!("{:.1} s → {:.1} s", self.before.seconds, self.after.seconds);
        let _ = write!(out, ", {} {}", self.before.logs, if self.before.logs == 1 { "log" } else { "logs" });
        if !self.before.ranks.is_empty() {
            let ranks: Vec<String> = self.before.ranks.iter().map(u32::to_string).collect();
            let _ = write!(out, " (ranks {})", ranks.join(", "));
        }
        if !self.before.torch.is_empty() {
            let _ = write!(out, ", torch {}", self.before.torch.join(", "));
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out =
            format!("### tcfix prove\n\n`{}`, {} fixes applied.\n\n", self.command.join(" "), self.fixes.len());
        out.push_str("| Frame | Graphs | Graph breaks | Recompiles | Eager frames | Compile time |\n|---|---:|---:|---:|---:|---:|\n");
        let row = |name: String, before: &Counts, after: &Counts| {
            format!("| {name} | {} |\n", changes(before, after).join(" | "))
        };
        out.push_str(&row("**all**".to_string(), &self.before.total, &self.after.total));
        for frame in &self.frames {
            out.push_str(&row(
                format!("`{}:{}` `{}`", frame.file, frame.line, frame.function),
                &frame.before,
                &frame.after,
            ));
        }
        if !self.fixes.is_empty() {
            out.push_str("\n| Fix | Effect |\n|---|---|\n");
            for fix in &self.fixes {
                let _ = writeln!(
                    out,
                    "| `{}:{}` {} {} | {} |",
                    fix.file,
                    fix.line,
                    fix.code,
                    fix.title,
                    fix.effect.describe(fix)
                );
            }
        }
        let unexplained: Vec<String> =
            self.unexplained_after.iter().map(|site| format!("- `{}`", site_line(site))).collect();
        if !unexplained.is_empty() {
            let _ = write!(out, "\nEvents no rule explains after the fixes:\n{}\n", unexplained.join("\n"));
        }
        if let Some(outputs) = &self.outputs {
            let said = match outputs {
                Ok(comparison) => comparison.describe(),
                Err(why) => format!("not compared: {why}"),
            };
            let _ = write!(out, "\nOutputs: {said}.\n");
        }
        out
    }

    pub fn json(&self) -> String {
        let outputs = match &self.outputs {
            None => serde_json::Value::Null,
            Some(Ok(comparison)) => serde_json::to_value(comparison).unwrap_or_default(),
            Some(Err(why)) => serde_json::json!({ "error": why }),
        };
        let mut value = serde_json::to_value(self).unwrap_or_default();
        value["outputs"] = outputs;
        serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_after_a_guard_is_the_guarded_line_before() {
        let original = "def f(x):\n    print(x)\n    return x\n";
        let fixed = "def f(x):\n    if not c():\n        print(x)\n    return x\n";
        assert_eq!(original_line(original, fixed, 1), 1);
        assert_eq!(original_line(original, fixed, 2), 2);
        assert_eq!(original_line(original, fixed, 3), 2);
        assert_eq!(original_line(original, fixed, 4), 3);
    }

    #[test]
    fn a_line_is_its_own_without_a_diff() {
        assert_eq!(original_line("a\nb\n", "a\nb\n", 2), 2);
    }
}
