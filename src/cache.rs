//! The warm run's cache, like ruff's `.ruff_cache/`: a second run over an unchanged tree parses
//! nothing. It lives in `.tcfix_cache/` at the project root (the configuration file's directory,
//! else the current one), with a `.gitignore` holding `*`.
//!
//! What it stores, per file (by its absolute path): the hash of its text, its summary
//! for the project index (what pass one would get by parsing it), and its findings, with their
//! fixes, together with the fingerprint of the project facts they were made with. A file whose
//! text is unchanged is not parsed in pass one; its findings are reused only when the index tells
//! it the same facts again (`facts_fingerprint`), so editing a base class in one file re-checks
//! the subclasses in others.
//!
//! The run users repeat most is over a tree that did not change at all. A file whose `Stamp`
//! (size, times, inode and mode, as git's index judges a file unchanged) is the stored one is
//! not read to be hashed; and when the run's files are those of the last run that learnt every
//! file's findings (the `tree` fingerprint: each path with its text's hash and its settings'),
//! the index is not built either: each file's findings are those stored, and only the texts with
//! findings are read, to show them (each checked against its stored hash). The files' summaries, nearly all of the cache's bytes, are kept in a file
//! of their own beside it (`<settings>.summaries.json`, of the same `generation`), read only when
//! the index is built. Every cache file is keyed by tcfix's version and build and by the
//! settings that change findings; a cache that is unreadable or not this key's is ignored with a
//! warning and rebuilt, never trusted.
//!
//! Where it applies: reports and `--diff` / `--apply`, which start from the cached findings of
//! the unchanged text exactly as they start from pass one's (they are the same findings, by the
//! key); every rewritten text is parsed and analysed afresh, and a fixed text is never stored.
//! Not with `--diff-base` or a baseline (their scope filters each file's findings as they are
//! made, and is not part of the key), nor for text read from stdin.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ruff_text_size::{TextRange, TextSize};
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::dynamo_config::ProjectSetting;
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::configured::Capture;
use crate::model::file::facts::Facts;
use crate::model::file::mutation::StateAttributes;
use crate::model::index::FileSummary;
use crate::rules::{RULES, Settings};

/// The folder, under the project root.
pub const DIRECTORY: &str = ".tcfix_cache";

/// Bumped when what a cache file holds changes shape.
const FORMAT: u32 = 7;

pub struct Cache {
    /// `.tcfix_cache/<hash of the settings>.json`.
    file: PathBuf,
    key: Key,
    entries: HashMap<PathBuf, Entry>,
    /// The stored summaries' generation, and the summaries once read (`Cache::summaries`).
    generation: u64,
    summaries: std::sync::OnceLock<HashMap<PathBuf, Box<RawValue>>>,
    /// The last run's files and texts, when it learnt every file's findings (see [`tree_of`]).
    tree: Option<u64>,
    /// When the stored cache was written: a stamp no older than that may hide a change made in
    /// the same tick of the clock (git's "racily clean" files), and is not trusted.
    written: Option<std::time::SystemTime>,
    /// What this run learnt, saved at its end.
    learnt: Mutex<Vec<Learnt>>,
    /// This run's tree, when it learnt every file's findings (`Cache::certify`).
    certified: Mutex<Option<u64>>,
}

/// What a run learnt of a file: its entry, and its summary when it is not the stored one.
type Learnt = (PathBuf, Entry, Option<Box<RawValue>>);

/// Whose cache a file is: written by this tcfix, for these settings.
#[derive(Serialize, Deserialize, PartialEq, Debug, Clone)]
struct Key {
    format: u32,
    /// tcfix's version and build (the executable's size and time): a rebuilt tcfix may find
    /// other things, and must not read an older build's findings.
    tcfix: String,
    /// The hashes of a known text: a change in the hashing (a new Rust, a new rustc-hash) would
    /// silently change every hash stored.
    hashing: (u64, u64),
    /// Everything in the settings that changes findings (selection, severity, per-file ignores...).
    settings: String,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    key: Key,
    tree: Option<u64>,
    /// Names the summaries file written with this one: a run stopped between writing the two
    /// leaves generations that differ, and the summaries are not used.
    generation: u64,
    files: Vec<(PathBuf, Entry)>,
}

/// The summaries file.
#[derive(Serialize, Deserialize)]
struct StoredSummaries {
    generation: u64,
    summaries: Vec<(PathBuf, Box<RawValue>)>,
}

/// A stored cache's key alone: read first, since another tcfix's entries may not parse.
#[derive(Deserialize)]
struct StoredKey {
    key: Key,
}

#[derive(Serialize, Deserialize, Clone)]
pub struct Entry {
    content: u64,
    /// The file's size and modification time when its text was read, if known.
    stamp: Option<Stamp>,
    /// The file's findings and the fingerprint of the facts they were made with; `None` when the
    /// run did not learn them (a file a fix rewrote).
    findings: Option<(u64, Vec<StoredDiagnostic>)>,
}

impl Cache {
    /// The cache for a run with `settings` under `root`, with a warning when the one found there
    /// could not be used.
    pub fn open(root: &Path, settings: &Settings) -> (Cache, Option<String>) {
        let key = Key::of(settings);
        let file = root.join(DIRECTORY).join(format!("{:016x}.json", hash_of(&key.settings)));
        let mut cache = Cache {
            file,
            key,
            entries: HashMap::default(),
            generation: 0,
            summaries: std::sync::OnceLock::new(),
            tree: None,
            written: None,
            learnt: Mutex::default(),
            certified: Mutex::default(),
        };
        let warning = cache.load().err();
        (cache, warning)
    }

    /// Reads the stored entries; an error says why they were not trusted.
    fn load(&mut self) -> Result<(), String> {
        let text = match std::fs::read(&self.file) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(self.ignored(&error.to_string())),
        };
        let StoredKey { key } = serde_json::from_slice(&text).map_err(|error| self.ignored(&error.to_string()))?;
        if key.format != FORMAT || key.tcfix != self.key.tcfix {
            return Ok(()); // another tcfix's: expected after an upgrade, and quietly replaced
        }
        let stored: Stored = serde_json::from_slice(&text).map_err(|error| self.ignored(&error.to_string()))?;
        if stored.key != self.key {
            return Err(self.ignored("it was written for other settings or another hashing"));
        }
        self.entries = stored.files.into_iter().collect();
        self.tree = stored.tree;
        self.generation = stored.generation;
        self.written = std::fs::metadata(&self.file).and_then(|metadata| metadata.modified()).ok();
        Ok(())
    }

    fn ignored(&self, why: &str) -> String {
        format!("ignoring the cache {} ({why}): it is rebuilt", self.file.display())
    }

    /// What the cache knows of `path`, if its text is still `content` (see [`content_hash`]).
    pub fn entry(&self, path: &Path, content: u64) -> Option<&Entry> {
        self.entries.get(&*keyed(path)).filter(|entry| entry.content == content)
    }

    /// The stored summary of `path` for the project index.
    pub fn summary(&self, path: &Path) -> Option<FileSummary> {
        serde_json::from_str(self.summaries().get(&*keyed(path))?.get()).ok()
    }

    /// The summaries file, read once, the first time a summary is asked for; empty when it is
    /// missing, unreadable or of another generation (its files are then parsed again).
    fn summaries(&self) -> &HashMap<PathBuf, Box<RawValue>> {
        self.summaries.get_or_init(|| {
            let Ok(text) = std::fs::read(self.summaries_file()) else { return HashMap::default() };
            match serde_json::from_slice::<StoredSummaries>(&text) {
                Ok(stored) if stored.generation == self.generation => stored.summaries.into_iter().collect(),
                _ => HashMap::default(),
            }
        })
    }

    fn summaries_file(&self) -> PathBuf {
        self.file.with_extension("summaries.json")
    }

    /// The hash of `path`'s text as the cache knows it, when its stamp says it has not changed
    /// since (then the text need not be read).
    pub fn unchanged(&self, path: &Path, stamp: Option<Stamp>) -> Option<u64> {
        let entry = self.entries.get(&*keyed(path))?;
        (self.trusted(entry) && entry.stamp == stamp).then_some(entry.content)
    }

    /// Whether the file an entry stamps was last modified clearly before the cache was written.
    fn trusted(&self, entry: &Entry) -> bool {
        entry.stamp.zip(self.written).is_some_and(|(stamp, written)| stamp.before(written))
    }

    /// Each file's stored findings, with the hash of the text they were made on, when `files`
    /// are the last run's, under the same settings (`settings_of`: [`settings_fingerprint`] of
    /// each file's), and none changed since by its stamp (the run then needs no index: see the
    /// module's note); `None` otherwise.
    pub fn unchanged_tree(
        &self,
        files: &[PathBuf],
        settings_of: impl Fn(&Path) -> u64,
    ) -> Option<Vec<(u64, Vec<Diagnostic>)>> {
        let tree = self.tree?;
        let contents: Option<Vec<u64>> = files.iter().map(|path| self.unchanged(path, Stamp::of(path))).collect();
        let contents = contents?;
        let seen = files.iter().zip(&contents).map(|(path, &content)| (path.as_path(), content, settings_of(path)));
        if tree_of(seen) != tree {
            return None;
        }
        let stored = |(path, content): (&PathBuf, u64)| -> Option<(u64, Vec<Diagnostic>)> {
            let (_, found) = self.entries.get(&*keyed(path))?.findings.as_ref()?;
            Some((content, found.iter().map(StoredDiagnostic::diagnostic).collect::<Option<_>>()?))
        };
        files.iter().zip(contents).map(stored).collect()
    }

    /// Notes that this run learnt the findings of every one of its files, whose paths and texts
    /// `tree` fingerprints: the next run over the same tree may reuse them without an index.
    pub fn certify(&self, tree: u64) {
        *self.certified.lock().expect("no panic holds the lock") = Some(tree);
    }

    /// Keeps what a run learnt of a file, for [`Cache::save`]: nothing when the cache knew it
    /// already (so a warm run over an unchanged tree writes nothing).
    pub fn learn(
        &self,
        path: &Path,
        (content, stamp): (u64, Option<Stamp>),
        findings: Option<(u64, &[Diagnostic])>,
        summary: Option<StoredSummary>,
    ) {
        let facts = findings.map(|(facts, _)| facts);
        let path = &*keyed(path);
        // A new stamp is stored; so is an old one the stored cache was written too soon after to
        // trust, once a cache written now would trust it (then the next run need not read it).
        let now_trusted = || stamp.is_some_and(|stamp| stamp.before(std::time::SystemTime::now()));
        // A file parsed because its stored summary was missing is stored again, summary and all.
        let known = summary.is_none()
            && self.entry(path, content).is_some_and(|old| {
                old.stamp == stamp
                    && (self.trusted(old) || !now_trusted())
                    && (facts.is_none() || old.findings.as_ref().map(|(made_with, _)| *made_with) == facts)
            });
        if known {
            return;
        }
        let summary = match summary {
            Some(Ok(summary)) => Some(summary),
            Some(Err(_)) => return,
            None => None,
        };
        let findings = findings.map(|(facts, found)| (facts, found.iter().map(StoredDiagnostic::of).collect()));
        let entry = Entry { content, stamp, findings };
        self.learnt.lock().expect("no panic holds the lock").push((path.to_path_buf(), entry, summary));
    }

    /// Writes the entries back, this run's over the stored ones (a run over a few files keeps
    /// what the cache knows of the others), less those of files that are gone; a run that learnt
    /// no summary leaves the summaries file as it is. Each file is written to a temporary file
    /// and renamed, so that a run stopped halfway leaves the old cache or the new one, never half
    /// of one.
    pub fn save(mut self) -> std::io::Result<()> {
        let learnt = std::mem::take(self.learnt.get_mut().expect("no panic holds the lock"));
        let certified = self.certified.get_mut().expect("no panic holds the lock").take();
        if learnt.is_empty() && certified.is_none_or(|certified| Some(certified) == self.tree) {
            return Ok(());
        }
        let directory = self.file.parent().expect("the cache file is in the cache directory").to_path_buf();
        std::fs::create_dir_all(&directory)?;
        write_if_missing(&directory.join(".gitignore"), "# Automatically created by tcfix.\n*\n")?;
        write_if_missing(
            &directory.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is tcfix's cache.\n",
        )?;
        // An entry learnt without certifying (a run over other files, one that fixed or failed
        // to parse a file) may hold findings made with other facts: the old tree no longer holds.
        let tree = if learnt.is_empty() { certified.or(self.tree) } else { certified };
        let generation = if learnt.iter().any(|(_, _, summary)| summary.is_some()) {
            self.save_summaries(&learnt, &directory)?
        } else {
            self.generation
        };
        let mut entries = std::mem::take(&mut self.entries);
        let learnt_paths: rustc_hash::FxHashSet<&PathBuf> = learnt.iter().map(|(path, ..)| path).collect();
        entries.retain(|path, _| learnt_paths.contains(path) || path.exists());
        entries.extend(learnt.into_iter().map(|(path, entry, _)| (path, entry)));
        let mut files: Vec<(PathBuf, Entry)> = entries.into_iter().collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let stored = Stored { key: self.key, tree, generation, files };
        write_atomically(&directory, &self.file, &stored)
    }

    /// Writes the summaries of the stored files and of `learnt`, under a new generation, which
    /// it returns. A file whose summary the cache does not hold is left out (it is parsed again).
    fn save_summaries(
        &self,
        learnt: &[(PathBuf, Entry, Option<Box<RawValue>>)],
        directory: &Path,
    ) -> std::io::Result<u64> {
        let mut summaries: HashMap<&PathBuf, &RawValue> = self
            .summaries()
            .iter()
            .filter(|(path, _)| self.entries.contains_key(*path) && path.exists())
            .map(|(path, summary)| (path, &**summary))
            .collect();
        summaries.extend(learnt.iter().filter_map(|(path, _, summary)| Some((path, &**summary.as_ref()?))));
        let mut summaries: Vec<(&PathBuf, &RawValue)> = summaries.into_iter().collect();
        summaries.sort_by(|a, b| a.0.cmp(b.0));
        let generation = hash_of(&(self.generation, std::time::SystemTime::now(), std::process::id()));
        #[derive(Serialize)]
        struct Written<'a> {
            generation: u64,
            summaries: Vec<(&'a PathBuf, &'a RawValue)>,
        }
        write_atomically(directory, &self.summaries_file(), &Written { generation, summaries })?;
        Ok(generation)
    }
}

/// Writes `value` as JSON to a temporary file in `directory`, renamed to `file` once complete.
fn write_atomically(directory: &Path, file: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let mut temporary = tempfile::NamedTempFile::new_in(directory)?;
    serde_json::to_writer(std::io::BufWriter::new(&mut temporary), value)?;
    temporary.flush()?;
    temporary.persist(file).map_err(|error| error.error)?;
    Ok(())
}

impl Entry {
    /// The stored findings, when they were made with facts of this fingerprint.
    pub fn findings(&self, facts: u64) -> Option<Vec<Diagnostic>> {
        let (_, found) = self.findings.as_ref().filter(|(made_with, _)| *made_with == facts)?;
        found.iter().map(StoredDiagnostic::diagnostic).collect()
    }
}

fn write_if_missing(path: &Path, text: &str) -> std::io::Result<()> {
    if path.exists() { Ok(()) } else { std::fs::write(path, text) }
}

impl Key {
    fn of(settings: &Settings) -> Key {
        let build = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map(|metadata| format!("{} {:?}", metadata.len(), metadata.modified().ok()))
            .unwrap_or_default();
        let per_file_ignores = settings.config.as_ref().map(|config| (&config.options.per_file_ignores, config.root()));
        Key {
            format: FORMAT,
            tcfix: format!("{} {build}", env!("CARGO_PKG_VERSION")),
            hashing: (content_hash("tcfix"), crate::model::file::dead_code::name_hash("tcfix")),
            settings: format!("{} {per_file_ignores:?}", Key::settings_of(settings)),
        }
    }

    /// What in one file's settings changes its findings.
    fn settings_of(settings: &Settings) -> String {
        format!(
            "{:?} {:?} {:?} {:?}",
            settings.selection, settings.min_severity, settings.target_torch, settings.opaque_helpers
        )
    }
}

fn hash_of(value: &(impl Hash + ?Sized)) -> u64 {
    let mut hasher = fingerprint_hasher();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The hash a file's text is known by.
pub fn content_hash(text: &str) -> u64 {
    hash_of(text)
}

/// A file summary as the cache stores it: JSON, read only when the index needs it.
pub type StoredSummary = Result<Box<RawValue>, String>;

/// A summary as the cache stores it.
pub fn stored_summary(summary: &FileSummary) -> StoredSummary {
    serde_json::value::to_raw_value(summary).map_err(|error| error.to_string())
}

/// The fingerprint of a run's files: each path with the hash of its text and of its settings,
/// in path order.
pub fn tree_of<'p>(files: impl Iterator<Item = (&'p Path, u64, u64)>) -> u64 {
    let mut files: Vec<(&Path, u64, u64)> = files.collect();
    files.sort_unstable();
    hash_of(&files)
}

/// The fingerprint of one file's settings (`Settings::for_file`): a nearer configuration or a
/// per-file ignore changes its findings, and is not in the cache's key.
pub fn settings_fingerprint(settings: &Settings) -> u64 {
    hash_of(&Key::settings_of(settings))
}

/// What says a file is unchanged without reading it, as git's index does: its size, its
/// modification time, and on Unix its inode, mode and status-change time (which no tool that
/// restores a modification time, `touch -r`, `cp -p`, `tar`, can set back), in nanoseconds.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
pub struct Stamp {
    len: u64,
    modified: u64,
    changed: u64,
    inode: u64,
    mode: u32,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let metadata = std::fs::metadata(path).ok()?;
        let modified = nanoseconds(metadata.modified().ok()?)?;
        #[cfg(unix)]
        let (changed, inode, mode) = {
            use std::os::unix::fs::MetadataExt;
            let changed = u64::try_from(metadata.ctime()).ok()?.checked_mul(1_000_000_000)?;
            (changed.checked_add(u64::try_from(metadata.ctime_nsec()).ok()?)?, metadata.ino(), metadata.mode())
        };
        #[cfg(not(unix))]
        let (changed, inode, mode) = (0, 0, 0);
        Some(Stamp { len: metadata.len(), modified, changed, inode, mode })
    }

    /// Whether the file was last modified clearly before `time`: two seconds before, since
    /// some file systems keep modification times to the even second.
    fn before(self, time: std::time::SystemTime) -> bool {
        nanoseconds(time).is_some_and(|time| self.modified.saturating_add(2_000_000_000) < time)
    }
}

fn nanoseconds(time: std::time::SystemTime) -> Option<u64> {
    u64::try_from(time.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos()).ok()
}

/// The path a file is stored under: absolute, so that runs from other directories of the
/// project, which name it otherwise, find the same entry (and no other file's).
fn keyed(path: &Path) -> std::borrow::Cow<'_, Path> {
    if path.is_absolute() {
        return std::borrow::Cow::Borrowed(path);
    }
    std::path::absolute(path).map_or(std::borrow::Cow::Borrowed(path), std::borrow::Cow::Owned)
}

/// The fingerprint of what the index told a file: its findings depend on nothing else from other
/// files, and its own settings (`settings`: [`settings_fingerprint`]). `shared` is
/// [`shared_fingerprint`] of the facts every file shares (hashed once per run:
/// hashing them for each file made a warm run over a large project quadratic). Every field is
/// named, so that a new one cannot be forgotten here.
pub fn facts_fingerprint(facts: &Facts, shared: u64, settings: u64) -> u64 {
    let Facts {
        module_classes,
        forward_replaced,
        never_built,
        outside_compile_scope,
        reached,
        disabled,
        called_from_other_files,
        imported_elsewhere,
        named_elsewhere,
        imported_module_classes,
        state_attributes: _,
        setup_code,
        config_defaults,
        imported_submodules,
        project_lengths: _,
        captures: _,
        message_checks: _,
        passed_from_elsewhere,
    } = facts;
    let mut hasher = fingerprint_hasher();
    for set in [
        module_classes,
        forward_replaced,
        never_built,
        outside_compile_scope,
        disabled,
        called_from_other_files,
        imported_elsewhere,
        named_elsewhere,
        imported_module_classes,
    ] {
        sorted(set.iter()).hash(&mut hasher);
    }
    sorted(reached.iter().map(|(name, reason)| format!("{name} {reason:?}"))).hash(&mut hasher);
    sorted(config_defaults.iter().map(|(name, default)| format!("{name} {default:?}"))).hash(&mut hasher);
    sorted(imported_submodules.iter()).hash(&mut hasher);
    sorted(passed_from_elsewhere.iter().map(|(name, passed)| format!("{name} {passed:?}"))).hash(&mut hasher);
    (shared, settings, setup_code).hash(&mut hasher);
    hasher.finish()
}

/// The fingerprint of the facts every file of the project shares: its state attributes, the
/// lengths its config classes give, and its capture options (see [`facts_fingerprint`]).
pub fn shared_fingerprint(facts: &Facts) -> u64 {
    let StateAttributes { flags, changing, counters } = &*facts.state_attributes;
    let mut hasher = fingerprint_hasher();
    for set in [flags, changing, counters] {
        sorted(set.iter()).hash(&mut hasher);
    }
    sorted(facts.project_lengths.iter()).hash(&mut hasher);
    facts.captures.hash(&mut hasher);
    sorted(facts.message_checks.iter()).hash(&mut hasher);
    hasher.finish()
}

/// std's SipHash with its fixed keys: the same in every run of a build (the key's `hashing`
/// notices a build that hashes otherwise).
fn fingerprint_hasher() -> std::hash::DefaultHasher {
    std::hash::DefaultHasher::new()
}

/// A set's items in one order, whatever order the set holds them in.
fn sorted<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.collect();
    items.sort_unstable();
    items
}

/// A finding as the cache holds it: the rule by its code, ranges as byte offsets.
#[derive(Serialize, Deserialize, Clone)]
struct StoredDiagnostic {
    rule: String,
    range: (u32, u32),
    message: String,
    severity: Severity,
    fix: Option<StoredFix>,
    no_fix_reason: Option<String>,
    fingerprint: String,
    /// The option that removes it and where it is written (`ProjectSetting`).
    setting: Option<(String, Option<String>)>,
}

#[derive(Serialize, Deserialize, Clone)]
struct StoredFix {
    title: String,
    safety: StoredSafety,
    edits: Vec<(u32, u32, String)>,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
enum StoredSafety {
    DisplayOnly,
    Unsafe,
    Safe,
}

impl StoredDiagnostic {
    fn of(diagnostic: &Diagnostic) -> Self {
        let fix = diagnostic.fix.as_ref().map(|fix| StoredFix {
            title: fix.title.clone(),
            safety: match fix.safety {
                Safety::DisplayOnly => StoredSafety::DisplayOnly,
                Safety::Unsafe => StoredSafety::Unsafe,
                Safety::Safe => StoredSafety::Safe,
            },
            edits: fix
                .edits
                .iter()
                .map(|edit| (edit.range.start().into(), edit.range.end().into(), edit.content.clone()))
                .collect(),
        });
        StoredDiagnostic {
            rule: diagnostic.rule.code.to_string(),
            range: (diagnostic.range.start().into(), diagnostic.range.end().into()),
            message: diagnostic.message.clone(),
            severity: diagnostic.severity,
            fix,
            no_fix_reason: diagnostic.no_fix_reason.clone(),
            fingerprint: diagnostic.fingerprint.clone(),
            setting: diagnostic
                .setting
                .as_ref()
                .map(|setting| (setting.capture.option().to_string(), setting.written_in.clone())),
        }
    }

    /// The finding, or `None` for a rule this tcfix does not have (then the file is checked).
    fn diagnostic(&self) -> Option<Diagnostic> {
        let rule = RULES.iter().find(|rule| rule.code == self.rule)?;
        let range = |(start, end): (u32, u32)| TextRange::new(TextSize::new(start), TextSize::new(end));
        let fix = self.fix.as_ref().map(|fix| {
            let safety = match fix.safety {
                StoredSafety::DisplayOnly => Safety::DisplayOnly,
                StoredSafety::Unsafe => Safety::Unsafe,
                StoredSafety::Safe => Safety::Safe,
            };
            // Not `Fix::new`: the edits were stored in the order it made them.
            let edits =
                fix.edits.iter().map(|(start, end, content)| Edit::replace(range((*start, *end)), content.clone()));
            Fix { title: fix.title.clone(), edits: edits.collect(), safety }
        });
        let mut diagnostic =
            Diagnostic::new(rule, range(self.range), self.message.clone()).with_severity(self.severity);
        diagnostic.fix = fix;
        diagnostic.no_fix_reason = self.no_fix_reason.clone();
        diagnostic.fingerprint = self.fingerprint.clone();
        if let Some((option, written_in)) = &self.setting {
            let capture = Capture::named(option)?;
            diagnostic.setting = Some(ProjectSetting { capture, written_in: written_in.clone() });
        }
        Some(diagnostic)
    }
}
