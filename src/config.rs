//! Configuration: `tcfix.toml`, `.tcfix.toml`, or `[tool.tcfix]` in `pyproject.toml`. The file
//! closest to the current directory is the run's (looking upwards); each checked file then uses
//! the one nearest to it, as ruff does, so the projects of a monorepo keep their own (`Nearest`).
//! `--config` names one for all, `--isolated` ignores them all. Patterns in `exclude` and
//! `per-file-ignores` are relative to the configuration file's directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::fix::torch_api::TorchVersion;

/// The keys a configuration may hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    /// Glob -> rules ignored in the files it matches.
    pub per_file_ignores: Option<std::collections::BTreeMap<String, Vec<String>>>,
    pub unsafe_fixes: Option<bool>,
    /// The oldest torch the code must run on (`"2.1"`): fixes then use `torch._dynamo.*` names
    /// where the `torch.compiler.*` ones are newer.
    pub target_torch: Option<String>,
    /// Report (and fix) only findings at least this severe.
    pub min_severity: Option<crate::diagnostic::Severity>,
    /// More attribute names on `self` to treat like `tokenizer` (TCF102).
    pub opaque_helpers: Option<Vec<String>>,
    /// Files and directories not to check (globs).
    pub exclude: Option<Vec<String>>,
    /// A baseline file (`--write-baseline` writes one): findings recorded there are not reported.
    pub baseline: Option<PathBuf>,
    /// Keep findings in `.tcfix_cache/` for the next run (default true; `--no-cache` for one run).
    pub cache: Option<bool>,
}

/// The keys of [`Options`], as written in a configuration file.
const KEYS: [&str; 10] = [
    "select",
    "ignore",
    "per-file-ignores",
    "unsafe-fixes",
    "target-torch",
    "min-severity",
    "opaque-helpers",
    "exclude",
    "baseline",
    "cache",
];

/// A configuration read from a file, with its patterns compiled.
#[derive(Debug, Default)]
pub struct Config {
    /// The file it came from (`None`: defaults).
    pub source: Option<PathBuf>,
    pub options: Options,
    pub target_torch: Option<TorchVersion>,
    root: PathBuf,
    exclude: Option<GlobSet>,
    per_file_ignores: Vec<(GlobSet, Vec<String>)>,
    /// Things in the files read that are probably meant for tcfix but that it does not read (a
    /// `[per-file-ignores]` table outside `[tool.tcfix]`), for the caller to show.
    pub warnings: Vec<String>,
}

/// The configuration files' names, in the order each directory is searched.
pub const FILE_NAMES: [&str; 3] = ["tcfix.toml", ".tcfix.toml", "pyproject.toml"];

#[derive(Deserialize)]
struct PyProject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    tcfix: Option<toml::Value>,
}

impl Config {
    /// The configuration for a run from `cwd`: `explicit` if given, else the closest file.
    /// `names_a_rule` says whether a selector in `select`, `ignore` or `per-file-ignores` names
    /// any rule (the registry's to answer): one that names none is a typo, and an error.
    pub fn discover(
        cwd: &Path,
        explicit: Option<&Path>,
        isolated: bool,
        names_a_rule: fn(&str) -> bool,
    ) -> Result<Self> {
        if isolated {
            return Ok(Config { root: cwd.to_path_buf(), ..Config::default() });
        }
        if let Some(path) = explicit {
            return match Self::read(path, names_a_rule)? {
                Some(config) => Ok(config),
                None => bail!("{}: no [tool.tcfix] table in this file", path.display()),
            };
        }
        let mut warnings = Vec::new();
        for directory in cwd.ancestors() {
            for name in FILE_NAMES {
                let candidate = directory.join(name);
                if candidate.is_file() {
                    if let Some(mut config) = Self::read(&candidate, names_a_rule)? {
                        warnings.append(&mut config.warnings);
                        config.warnings = warnings;
                        return Ok(config);
                    }
                    warnings.extend(stray_keys(&candidate));
                }
            }
        }
        Ok(Config { root: cwd.to_path_buf(), warnings, ..Config::default() })
    }

    /// The configuration in `path`; `None` for a `pyproject.toml` without `[tool.tcfix]`.
    fn read(path: &Path, names_a_rule: fn(&str) -> bool) -> Result<Option<Self>> {
        let shown = path.display();
        let text = std::fs::read_to_string(path).with_context(|| format!("{shown}: cannot read"))?;
        let options: Options = if path.file_name().is_some_and(|name| name == "pyproject.toml") {
            let pyproject: PyProject = toml::from_str(&text).with_context(|| shown.to_string())?;
            match pyproject.tool.and_then(|tool| tool.tcfix) {
                Some(table) => table.try_into().with_context(|| format!("{shown}: [tool.tcfix]"))?,
                None => return Ok(None),
            }
        } else {
            toml::from_str(&text).with_context(|| shown.to_string())?
        };
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut config = Self::compile(path, root, options, names_a_rule)?;
        config.warnings = stray_keys(path);
        Ok(Some(config))
    }

    /// The configuration file's directory, or the current one without a file: where the
    /// project's `.tcfix_cache/` lives.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The baseline file the configuration names, relative to the configuration's directory.
    pub fn baseline(&self) -> Option<PathBuf> {
        self.options.baseline.as_ref().map(|path| self.root.join(path))
    }

    fn compile(path: &Path, root: PathBuf, options: Options, names_a_rule: fn(&str) -> bool) -> Result<Self> {
        let shown = path.display();
        let target_torch = match &options.target_torch {
            Some(version) => match TorchVersion::parse(version) {
                // torch.compile, and every API a fix writes, came with torch 2.0.
                Some(parsed) if parsed < TorchVersion::FIRST_WITH_COMPILE => bail!(
                    "{shown}: target-torch = {version:?}: torch.compile needs torch 2.0 or later; write \"2.0\" or newer"
                ),
                Some(parsed) => Some(parsed),
                None => bail!("{shown}: target-torch = {version:?}: expected a version like \"2.1\" or \"2.3\""),
            },
            None => None,
        };
        let selectors = options.select.iter().chain(&options.ignore).flatten();
        let per_file = options.per_file_ignores.iter().flat_map(|table| table.values().flatten());
        let unknown: Vec<&str> =
            selectors.chain(per_file).map(String::as_str).filter(|selector| !names_a_rule(selector)).collect();
        if !unknown.is_empty() {
            bail!("{shown}: no rule matches {}: use a code (TCF101), a prefix (TCF1) or a name", unknown.join(", "));
        }
        let exclude = match &options.exclude {
            Some(patterns) => Some(glob_set(path, "exclude", patterns)?),
            None => None,
        };
        let mut per_file_ignores = Vec::new();
        for (pattern, rules) in options.per_file_ignores.iter().flatten() {
            per_file_ignores.push((glob_set(path, "per-file-ignores", std::slice::from_ref(pattern))?, rules.clone()));
        }
        Ok(Config {
            source: Some(path.to_path_buf()),
            options,
            target_torch,
            root,
            exclude,
            per_file_ignores,
            warnings: Vec::new(),
        })
    }

    /// Whether `path` is excluded (matched as written, relative to the config's directory, or by
    /// any of its parent directories).
    pub fn excludes(&self, path: &Path) -> bool {
        let Some(exclude) = &self.exclude else { return false };
        let relative = self.relative(path);
        relative.ancestors().filter(|p| !p.as_os_str().is_empty()).any(|p| exclude.is_match(p))
    }

    /// The rules `per-file-ignores` turns off for `path`.
    pub fn ignored_for(&self, path: &Path) -> Vec<String> {
        let relative = self.relative(path);
        self.per_file_ignores
            .iter()
            .filter(|(set, _)| set.is_match(&relative))
            .flat_map(|(_, rules)| rules.clone())
            .collect()
    }

    fn relative(&self, path: &Path) -> PathBuf {
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf())
        };
        absolute.strip_prefix(&self.root).map(Path::to_path_buf).unwrap_or(absolute)
    }
}

/// The configuration nearest each checked file: in its own directory or the closest above it.
#[derive(Debug, Default, Clone)]
pub struct Nearest {
    /// Each directory holding a checked file -> its configuration (`None`: none above it).
    by_directory: std::collections::HashMap<PathBuf, Option<Arc<Config>>>,
}

impl Nearest {
    /// Reads the configuration nearest each of `files`. `run` is the run's own (found from the
    /// current directory): where it is a file's nearest, that file uses it as it is. A nearer
    /// file that does not load is an error, as the run's own would be.
    pub fn discover(files: &[PathBuf], run: &Arc<Config>, names_a_rule: fn(&str) -> bool) -> Result<Self> {
        let mut nearest = Nearest::default();
        let mut loaded: std::collections::HashMap<PathBuf, Arc<Config>> = std::collections::HashMap::new();
        if let Some(source) = &run.source {
            loaded.insert(canonical(source), Arc::clone(run));
        }
        for file in files {
            let directory = directory_of(file);
            if nearest.by_directory.contains_key(&directory) {
                continue;
            }
            let mut found = None;
            'up: for ancestor in directory.ancestors() {
                for name in FILE_NAMES {
                    let candidate = ancestor.join(name);
                    if !candidate.is_file() {
                        continue;
                    }
                    let key = canonical(&candidate);
                    if let Some(config) = loaded.get(&key) {
                        found = Some(Arc::clone(config));
                        break 'up;
                    }
                    if let Some(config) = Config::read(&candidate, names_a_rule)? {
                        let config = Arc::new(config);
                        loaded.insert(key, Arc::clone(&config));
                        found = Some(config);
                        break 'up;
                    }
                }
            }
            nearest.by_directory.insert(directory, found);
        }
        Ok(nearest)
    }

    /// The configuration nearest `file`, if one was found for its directory.
    pub fn of(&self, file: &Path) -> Option<&Arc<Config>> {
        self.by_directory.get(&directory_of(file))?.as_ref()
    }

    /// The warnings of the configurations found (stray keys in a pyproject.toml), each once.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> =
            self.by_directory.values().flatten().flat_map(|config| config.warnings.clone()).collect();
        warnings.sort();
        warnings.dedup();
        warnings
    }
}

/// A file's directory, absolute.
fn directory_of(file: &Path) -> PathBuf {
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir().map(|cwd| cwd.join(file)).unwrap_or_else(|_| file.to_path_buf())
    };
    absolute.parent().map(Path::to_path_buf).unwrap_or(absolute)
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Keys of tcfix's options at the top level of a `pyproject.toml`, where tcfix does not read
/// them: in TOML, a `[per-file-ignores]` header after `[tool.tcfix]` starts a new top-level table
/// (the tcfix.toml form pasted into pyproject.toml), not a sub-table of tcfix's. Only the top level
/// is looked at: `[tool.ruff]` has keys of the same names.
fn stray_keys(path: &Path) -> Vec<String> {
    if path.file_name().is_none_or(|name| name != "pyproject.toml") {
        return Vec::new();
    }
    let Ok(document) = std::fs::read_to_string(path).map(|text| text.parse::<toml::Table>()) else { return Vec::new() };
    let Ok(document) = document else { return Vec::new() };
    document
        .keys()
        .filter(|key| KEYS.contains(&key.as_str()))
        .map(|key| {
            let form = if document[key].is_table() { format!("[{key}]") } else { format!("`{key}`") };
            format!(
                "{}: {form} is at the top level, where tcfix does not read it: in pyproject.toml tcfix's \
                 options go under [tool.tcfix] (write [tool.tcfix.{key}] for a table)",
                path.display()
            )
        })
        .collect()
}

/// Patterns as gitignore-style globs: `generated/` or `*_pb2.py` match at any depth.
fn glob_set(path: &Path, key: &str, patterns: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim_end_matches('/');
        let anchored = if trimmed.contains('/') { trimmed.to_string() } else { format!("**/{trimmed}") };
        let glob = Glob::new(&anchored)
            .with_context(|| format!("{}: {key}: {pattern:?} is not a valid glob", path.display()))?;
        builder.add(glob);
    }
    builder.build().with_context(|| format!("{}: {key}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules these tests know: a stand-in for the registry.
    fn names_a_rule(selector: &str) -> bool {
        ["TCF1", "TCF101", "TCF202"].contains(&selector)
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_closest_file_wins_and_pyproject_needs_its_table() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("pkg");
        std::fs::create_dir(&nested).unwrap();
        write(dir.path(), "tcfix.toml", "select = [\"TCF1\"]\n");
        write(&nested, "pyproject.toml", "[project]\nname = \"x\"\n");
        let config = Config::discover(&nested, None, false, names_a_rule).unwrap();
        assert_eq!(config.source, Some(dir.path().join("tcfix.toml")), "a pyproject without [tool.tcfix] is skipped");

        write(&nested, "pyproject.toml", "[tool.tcfix]\nignore = [\"TCF202\"]\n");
        let config = Config::discover(&nested, None, false, names_a_rule).unwrap();
        assert_eq!(config.options.ignore, Some(vec!["TCF202".to_string()]));
        assert!(Config::discover(&nested, None, true, names_a_rule).unwrap().source.is_none(), "--isolated");
    }

    #[test]
    fn an_unknown_key_or_bad_value_names_the_file_and_what_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "tcfix.toml", "selct = [\"TCF1\"]\n");
        let err = format!("{:#}", Config::discover(dir.path(), None, false, names_a_rule).unwrap_err());
        assert!(err.contains("tcfix.toml") && err.contains("unknown field `selct`") && err.contains("select"), "{err}");

        std::fs::write(&path, "target-torch = \"two\"\n").unwrap();
        let err = format!("{:#}", Config::discover(dir.path(), None, false, names_a_rule).unwrap_err());
        assert!(err.contains("target-torch = \"two\": expected a version like"), "{err}");

        std::fs::write(&path, "target-torch = \"1.13\"\n").unwrap();
        let err = format!("{:#}", Config::discover(dir.path(), None, false, names_a_rule).unwrap_err());
        assert!(err.contains("target-torch = \"1.13\": torch.compile needs torch 2.0 or later"), "{err}");
        std::fs::write(&path, "target-torch = \"2.0\"\n").unwrap();
        assert!(Config::discover(dir.path(), None, false, names_a_rule).is_ok());

        std::fs::write(&path, "ignore = [\"TCF999\"]\n").unwrap();
        assert!(
            format!("{:#}", Config::discover(dir.path(), None, false, names_a_rule).unwrap_err())
                .contains("no rule matches TCF999")
        );

        std::fs::write(&path, "unsafe-fixes = \"yes\"\n").unwrap();
        assert!(
            format!("{:#}", Config::discover(dir.path(), None, false, names_a_rule).unwrap_err())
                .contains("invalid type")
        );
    }

    #[test]
    fn exclude_and_per_file_ignores_match_relative_to_the_config() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            ".tcfix.toml",
            "exclude = [\"generated/\", \"*_pb2.py\"]\n[per-file-ignores]\n\"tests/*\" = [\"TCF101\"]\n",
        );
        let config = Config::discover(dir.path(), None, false, names_a_rule).unwrap();
        assert!(config.excludes(&dir.path().join("generated/model.py")));
        assert!(config.excludes(&dir.path().join("src/proto/x_pb2.py")));
        assert!(!config.excludes(&dir.path().join("src/model.py")));
        assert_eq!(config.ignored_for(&dir.path().join("tests/test_model.py")), vec!["TCF101"]);
        assert!(config.ignored_for(&dir.path().join("src/model.py")).is_empty());
    }

    #[test]
    fn tcfix_keys_outside_the_tool_table_of_pyproject_are_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let pasted = "[project]\nname = \"m\"\n\n[tool.tcfix]\nselect = [\"TCF1\"]\n\n[per-file-ignores]\n\"tests/*\" = [\"TCF101\"]\n\n[tool.ruff.lint.per-file-ignores]\n\"x\" = [\"E1\"]\n";
        write(dir.path(), "pyproject.toml", pasted);
        let config = Config::discover(dir.path(), None, false, names_a_rule).unwrap();
        assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
        assert!(config.warnings[0].contains("[per-file-ignores] is at the top level"), "{:?}", config.warnings);
        assert!(config.warnings[0].contains("[tool.tcfix.per-file-ignores]"), "{:?}", config.warnings);

        // With no [tool.tcfix] table at all, the file is no configuration, and still warned about.
        write(dir.path(), "pyproject.toml", "[per-file-ignores]\n\"tests/*\" = [\"TCF101\"]\nbaseline = \"b.json\"\n");
        let config = Config::discover(dir.path(), None, false, names_a_rule).unwrap();
        assert!(config.source.is_none());
        assert_eq!(config.warnings.len(), 1, "baseline belongs to the table: {:?}", config.warnings);

        write(
            dir.path(),
            "pyproject.toml",
            "[tool.tcfix]\nbaseline = \"tcfix-baseline.json\"\n[tool.tcfix.per-file-ignores]\n\"t/*\" = [\"TCF1\"]\n",
        );
        let config = Config::discover(dir.path(), None, false, names_a_rule).unwrap();
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        assert_eq!(config.baseline(), Some(dir.path().join("tcfix-baseline.json")));
        assert_eq!(config.ignored_for(&dir.path().join("t/a.py")), vec!["TCF1"]);
    }
}
