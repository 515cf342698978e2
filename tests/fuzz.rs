//! Property test of the parse → rules → fix pipeline on mutated fixtures.
//!
//! Every `codemods/*/*.py` fixture is a seed; a case deletes, duplicates and re-indents lines,
//! inserts hazards (prints, logging, hooks, buffers, tokenizer lookups), joins lines with `;`,
//! splits them with `\`, switches line endings, adds a BOM or form feeds. For each mutated text
//! that parses, with every fix applied (unsafe ones too):
//! - nothing panics (checking or fixing);
//! - the fixed text parses (ruff's parser; and CPython's, checked in one batch at the end, for
//!   every case whose input CPython accepts);
//! - every byte outside the edits the rules proposed is unchanged (`corpus/containment.rs`);
//! - fixing again changes nothing (idempotent).
//!
//! 2000 cases from a fixed seed by default (well under a minute in a debug build); set
//! `PROPTEST_CASES` and `PROPTEST_RNG_SEED` to search longer or elsewhere.

#[path = "corpus/containment.rs"]
mod containment;

use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use ruff_python_parser::parse_module;
use tcfix::rules::Settings;

/// Code that trips (or nearly trips) a rule, inserted as a line of its own.
const SNIPPETS: &[&str] = &[
    "print(x)",
    "print(\"shape\", x.shape, sep=\", \")",
    "logger.warning(\"slow path %s\", x.shape)",
    "logging.info(\"x\")",
    "warnings.warn(\"deprecated\")",
    "self.register_forward_hook(lambda m, i, o: print(o))",
    "self.register_forward_pre_hook(self._hook)",
    "self.register_buffer(\"pe\", torch.empty(0, 4), persistent=False)",
    "self.pe = torch.zeros(x.shape[0], 4)",
    "n = self.tokenizer.pad_token_id",
    "ids = self.processor.tokenizer.convert_tokens_to_ids(\"<image>\")",
    "if torch.compiler.is_compiling():\n    return x",
    "if not torch.compiler.is_compiling():\n    print(x)",
    "for _ in range(2):\n    print(x)",
    "def hook(module, args, output):\n    print(output)",
    "@torch.compiler.disable",
    "\"\"\"A docstring\nover two lines.\"\"\"",
    "# a comment",
    "pass",
    "y = (x,\n     x)",
    "print(x,\n      \"\"\"a\nb\"\"\")",
    "global STATE",
    "return x",
    "import torch",
    "class Inner(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x",
    "print(x)  # noqa: TCF101",
    "print(x)  # tcfix: ignore[TCF1]",
    "# tcfix: ignore-file[TCF201]",
    "@torch.compile\ndef compiled(x):\n    print(x)\n    return x",
    "self.register_forward_hook(functools.partial(self._collect, name=\"x\"))",
    "self.tokenizer = tokenizer",
    "with torch.no_grad():\n    print(x)",
    "try:\n    print(x)\nexcept Exception:\n    pass",
    "print(x) if x is not None else None",
    "assert x is not None, print(x)",
    "match x:\n    case _:\n        print(x)",
    "print(f\"{x!r:>{10}}\")",
    "ys = [print(i) for i in range(3)]",
    "while False:\n    logger.debug(x)",
    "async def later(x):\n    print(x)",
    "nonlocal counter",
    "self.pe = torch.cat([self.pe, self.pe], dim=0)",
    "self.max_len = 128",
    "if x.shape[0] > self.pe.shape[0]:\n    self._extend_pe(x.shape[0])",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete(Index),
    Duplicate(Index),
    /// Change a line's indentation: add spaces, remove some, or turn four spaces into a tab.
    Reindent(Index, i8),
    Tabs(Index),
    /// A snippet on new lines after the line, indented like it (or one level deeper).
    Insert(Index, usize, bool),
    JoinWithSemicolon(Index),
    /// Split a line after its first word with a backslash continuation.
    Continue(Index),
    FormFeed(Index),
    /// Put the line under `if x:` (one level deeper).
    Wrap(Index),
    /// A comment at the end of the line.
    TrailingComment(Index),
    Endings(usize),
    Bom,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Delete),
        1 => any::<Index>().prop_map(Mutation::Duplicate),
        1 => (any::<Index>(), -4i8..=4).prop_map(|(i, by)| Mutation::Reindent(i, by)),
        1 => any::<Index>().prop_map(Mutation::Tabs),
        3 => (any::<Index>(), 0..SNIPPETS.len(), any::<bool>()).prop_map(|(i, s, deeper)| Mutation::Insert(i, s, deeper)),
        1 => any::<Index>().prop_map(Mutation::JoinWithSemicolon),
        1 => any::<Index>().prop_map(Mutation::Continue),
        1 => any::<Index>().prop_map(Mutation::FormFeed),
        1 => any::<Index>().prop_map(Mutation::Wrap),
        1 => any::<Index>().prop_map(Mutation::TrailingComment),
        1 => (0usize..4).prop_map(Mutation::Endings),
        1 => Just(Mutation::Bom),
    ]
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t', '\x0c']).len()]
}

/// Applies the mutations to `text`, line by line (line endings are normalised to `\n` first
/// and chosen again by an `Endings` mutation).
fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let normal = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<String> = normal.lines().map(str::to_string).collect();
    let (mut ending, mut bom) = (0, false);
    for mutation in mutations {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let at = |index: &Index| index.index(lines.len());
        match mutation {
            Mutation::Delete(i) => {
                lines.remove(at(i));
            }
            Mutation::Duplicate(i) => {
                let i = at(i);
                lines.insert(i, lines[i].clone());
            }
            Mutation::Reindent(i, by) => {
                let i = at(i);
                let line = &lines[i];
                let indent = indentation(line).len();
                let rest = &line[indent..];
                let width = (indent as i64 + *by as i64).max(0) as usize;
                lines[i] = format!("{}{rest}", " ".repeat(width));
            }
            Mutation::Tabs(i) => {
                let i = at(i);
                let indent = indentation(&lines[i]).replace("    ", "\t");
                lines[i] = format!("{indent}{}", lines[i].trim_start_matches([' ', '\t', '\x0c']));
            }
            Mutation::Insert(i, snippet, deeper) => {
                let i = at(i);
                let mut indent = indentation(&lines[i]).to_string();
                if *deeper || lines[i].trim_end().ends_with(':') {
                    indent.push_str("    ");
                }
                let new: Vec<String> = SNIPPETS[*snippet].lines().map(|line| format!("{indent}{line}")).collect();
                lines.splice(i + 1..i + 1, new);
            }
            Mutation::JoinWithSemicolon(i) => {
                let i = at(i);
                if i + 1 < lines.len() {
                    let next = lines.remove(i + 1);
                    lines[i] = format!("{}; {}", lines[i], next.trim_start());
                }
            }
            Mutation::Continue(i) => {
                let i = at(i);
                let indent = indentation(&lines[i]).to_string();
                let body = lines[i][indent.len()..].to_string();
                if let Some(space) = body.find(' ') {
                    lines[i] = format!("{indent}{} \\", &body[..space]);
                    lines.insert(i + 1, format!("{indent}        {}", body[space..].trim_start()));
                }
            }
            Mutation::FormFeed(i) => {
                let i = at(i);
                lines[i] = format!("\x0c{}", lines[i]);
            }
            Mutation::Wrap(i) => {
                let i = at(i);
                let indent = indentation(&lines[i]).to_string();
                let body = lines[i][indent.len()..].to_string();
                lines[i] = format!("{indent}if x:");
                lines.insert(i + 1, format!("{indent}    {body}"));
            }
            Mutation::TrailingComment(i) => {
                let i = at(i);
                lines[i].push_str("  # a comment: with ( and \" in it");
            }
            Mutation::Endings(kind) => ending = *kind,
            Mutation::Bom => bom = true,
        }
    }
    let mut out = String::from(if bom { "\u{feff}" } else { "" });
    for (n, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push_str(match (ending, n % 3) {
            (0, _) => "\n",
            (1, _) => "\r\n",
            (2, _) => "\r",
            (_, 0) => "\r\n",
            (_, 1) => "\n",
            _ => "\r",
        });
    }
    out
}

fn seeds() -> &'static Vec<(String, String)> {
    static SEEDS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("codemods");
        let mut seeds = Vec::new();
        for rule in std::fs::read_dir(root).expect("codemods/").flatten() {
            for file in std::fs::read_dir(rule.path()).into_iter().flatten().flatten() {
                let path = file.path();
                if path.extension().is_some_and(|ext| ext == "py") {
                    let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display().to_string();
                    seeds.push((name, std::fs::read_to_string(&path).expect("fixture")));
                }
            }
        }
        seeds.sort();
        seeds
    })
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    parsed: usize,
    fixed: usize,
    fixes: usize,
    passes: usize,
    /// (input, output) of every case whose text the fixes changed, for CPython at the end.
    changed: Vec<(String, String)>,
}

/// The properties for one mutated text.
fn check(seed: &str, text: &str, tally: &Mutex<Tally>) -> Result<(), TestCaseError> {
    let path = Path::new("models/fuzzed.py");
    let settings = Settings::default();
    tally.lock().unwrap().cases += 1;
    let reported = tcfix::check_source(path, text, &settings);
    let Ok(facts) = tcfix::facts_of_single_file(path, text) else {
        prop_assert!(reported.is_err(), "check_source accepted a text the index could not parse");
        return Ok(());
    };
    prop_assert!(reported.is_ok(), "{seed}: the text parses but check_source failed: {:?}", reported.err());

    let (outcome, passes) = containment::fix_recording(path, text, &facts, &settings, true)
        .map_err(|err| TestCaseError::fail(format!("{seed}: fixing failed on its own output: {err}")))?;
    if let Err(err) = parse_module(&outcome.text) {
        return Err(TestCaseError::fail(format!("{seed}: the fixed text does not parse: {err}\n{}", outcome.text)));
    }
    let changed = containment::check_passes(&passes, &outcome.text, true)
        .map_err(|err| TestCaseError::fail(format!("{seed}: {err}")))?;
    // A file that compiles also gets the capture options its findings wait for (one insertion,
    // outside the per-file passes).
    let mut outcome = outcome;
    tcfix::write_own_settings(path, &mut outcome, true);

    let api = tcfix::fix_source(path, text, &settings, true).expect("fixed once already");
    prop_assert_eq!(&api.text, &outcome.text, "fix_source agrees with the recorded run");

    let again = tcfix::fix_source(path, &outcome.text, &settings, true).expect("the fixed text parses");
    prop_assert!(
        again.applied.is_empty() && again.text == outcome.text,
        "{}: not idempotent: a second run applied {:?}\n--- first result\n{}\n--- second result\n{}",
        seed,
        again.applied.iter().map(|fix| fix.rule.code).collect::<Vec<_>>(),
        outcome.text,
        again.text
    );

    let mut tally = tally.lock().unwrap();
    tally.parsed += 1;
    tally.passes += changed;
    if outcome.text != text {
        tally.fixed += 1;
        tally.fixes += outcome.applied.len();
        tally.changed.push((text.to_string(), outcome.text));
    }
    Ok(())
}

/// Indices of the pairs whose input CPython accepts and whose output it rejects; `None` without
/// a `python3` to ask.
fn cpython_rejects(pairs: &[(String, String)]) -> Option<Vec<usize>> {
    let dir = tempfile::tempdir().ok()?;
    for (n, (input, output)) in pairs.iter().enumerate() {
        std::fs::write(dir.path().join(format!("{n}.in.py")), input).ok()?;
        std::fs::write(dir.path().join(format!("{n}.out.py")), output).ok()?;
    }
    let script = "import ast, sys\n\
        def ok(p):\n    try:\n        ast.parse(open(p, 'rb').read()); return True\n    except (SyntaxError, ValueError):\n        return False\n\
        for n in range(int(sys.argv[2])):\n    d = sys.argv[1]\n    if ok(f'{d}/{n}.in.py') and not ok(f'{d}/{n}.out.py'): print(n)\n";
    let output = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir.path())
        .arg(pairs.len().to_string())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).lines().filter_map(|line| line.parse().ok()).collect())
}

#[test]
fn mutated_fixtures_never_panic_always_parse_and_fix_to_a_fixpoint() {
    let mut config = Config::default();
    if std::env::var("PROPTEST_CASES").is_err() {
        config.cases = 2000;
    }
    if std::env::var("PROPTEST_RNG_SEED").is_err() {
        config.rng_seed = RngSeed::Fixed(0x7c_f1_c5);
    }
    config.failure_persistence = None;
    let cases = config.cases;
    let seeds = seeds();
    assert!(seeds.len() > 50, "found the fixtures");

    let started = Instant::now();
    let tally = Mutex::new(Tally::default());
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..7));
    let result = TestRunner::new(config).run(&strategy, |(seed, mutations)| {
        let (name, original) = &seeds[seed];
        check(name, &mutate(original, &mutations), &tally)
    });
    let tally = tally.into_inner().unwrap();
    if let Err(failure) = result {
        panic!("{failure}");
    }
    let rejected = cpython_rejects(&tally.changed);
    eprintln!(
        "fuzz: {cases} cases ({} runs with shrinking) in {:.1} s: {} parsed, {} fixed ({} fixes in {} passes); CPython: {}",
        tally.cases,
        started.elapsed().as_secs_f64(),
        tally.parsed,
        tally.fixed,
        tally.fixes,
        tally.passes,
        match &rejected {
            Some(bad) => format!("{} of {} fixed outputs rejected", bad.len(), tally.changed.len()),
            None => "not checked (no python3)".to_string(),
        }
    );
    if let Some(bad) = rejected
        && let Some(&first) = bad.first()
    {
        let (input, output) = &tally.changed[first];
        panic!("CPython accepts the input but not the fixed output:\n--- input\n{input}\n--- output\n{output}");
    }
    assert!(tally.parsed * 3 >= tally.cases, "most mutated texts still parse, or the test tests little: {tally:?}");
    assert!(tally.fixed > 0, "some cases were fixed");
}
