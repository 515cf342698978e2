//! Hostile input, end to end through the built binary: odd encodings and layouts, files that are
//! not what their name says, paths that lead nowhere, files that cannot be written, and a run
//! killed in the middle of `--apply`. Whatever happens, tcfix names the file and the reason,
//! still checks the other files, exits 2 when something could not be done, and never leaves a
//! file half-written.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ruff_python_parser::parse_module;

/// A print in `forward`, with the line ending and indentation unit given.
fn model(newline: &str, unit: &str) -> String {
    let lines = [
        "import torch".to_string(),
        "from torch import nn".to_string(),
        String::new(),
        String::new(),
        "class Model(nn.Module):".to_string(),
        format!("{unit}def forward(self, x):"),
        format!("{unit}{unit}print(x)"),
        format!("{unit}{unit}return x"),
    ];
    lines.iter().map(|line| format!("{line}{newline}")).collect()
}

/// `model` fixed: the print under the guard, written the way the file writes lines.
fn fixed(newline: &str, unit: &str) -> String {
    model(newline, unit).replace(
        &format!("{unit}{unit}print(x){newline}"),
        &format!("{unit}{unit}if not torch.compiler.is_compiling():{newline}{unit}{unit}{unit}print(x){newline}"),
    )
}

fn tcfix(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcfix")).args(args).current_dir(dir).output().expect("tcfix runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn project(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, bytes) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, bytes).expect("write");
    }
    dir
}

fn bytes(dir: &Path, name: &str) -> Vec<u8> {
    fs::read(dir.join(name)).unwrap_or_else(|err| panic!("{name}: {err}"))
}

fn text(dir: &Path, name: &str) -> String {
    String::from_utf8(bytes(dir, name)).expect("UTF-8")
}

/// Every file under `dir`, recursively (links not followed).
fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
            let file_type = entry.file_type().expect("file type");
            if file_type.is_dir() {
                pending.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    all_files(dir)
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with(".tcfix-")))
        .collect()
}

fn assert_no_leftovers(dir: &Path) {
    let left = leftovers(dir);
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

/// Whether CPython accepts the file, or `None` when there is no `python3` to ask.
fn cpython_parses(path: &Path) -> Option<Result<(), String>> {
    let output = Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1], 'rb').read(), sys.argv[1])"])
        .arg(path)
        .output()
        .ok()?;
    Some(if output.status.success() { Ok(()) } else { Err(stderr(&output)) })
}

/// The fixed file parses (ruff's parser, and CPython's when there is one) and a second
/// `--apply` changes nothing.
fn assert_fixed_for_good(dir: &Path, name: &str) {
    let fixed = text(dir, name);
    if let Err(err) = parse_module(&fixed) {
        panic!("{name} no longer parses: {err}\n{fixed}");
    }
    if let Some(Err(err)) = cpython_parses(&dir.join(name)) {
        panic!("CPython rejects the fixed {name}: {err}\n{fixed}");
    }
    let again = tcfix(dir, &["--apply", "--allow-no-vcs", name]);
    assert_eq!(text(dir, name), fixed, "a second --apply changed {name}: {}", stderr(&again));
}

/// Fixes the files at once and checks each one against what it must become.
fn assert_fixes(cases: &[(&str, &[u8], &[u8])]) {
    let files: Vec<(&str, &[u8])> = cases.iter().map(|(name, before, _)| (*name, *before)).collect();
    let dir = project(&files);
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    for (name, _, after) in cases {
        assert_eq!(
            String::from_utf8_lossy(&bytes(dir.path(), name)),
            String::from_utf8_lossy(after),
            "{name} was not fixed as expected"
        );
        assert_fixed_for_good(dir.path(), name);
    }
    assert_no_leftovers(dir.path());
}

/// The run checks `good.py` besides whatever went wrong elsewhere.
fn assert_good_was_checked(output: &Output) {
    assert!(stdout(output).contains("good.py:7:9: TCF101"), "the other file is still checked: {}", stdout(output));
}

#[test]
fn crlf_cr_only_and_mixed_line_endings_are_kept() {
    let mixed = "import torch\r\nfrom torch import nn\n\rclass Model(nn.Module):\r    def forward(self, x):\r\n        print(x)\n        return x\r";
    let mixed_fixed = "import torch\r\nfrom torch import nn\n\rclass Model(nn.Module):\r    def forward(self, x):\r\n        if not torch.compiler.is_compiling():\n            print(x)\n        return x\r";
    assert_fixes(&[
        ("crlf.py", model("\r\n", "    ").as_bytes(), fixed("\r\n", "    ").as_bytes()),
        ("cr.py", model("\r", "    ").as_bytes(), fixed("\r", "    ").as_bytes()),
        ("mixed.py", mixed.as_bytes(), mixed_fixed.as_bytes()),
    ]);
}

#[test]
fn a_bom_tabs_and_form_feeds_are_kept() {
    let bom = format!("\u{feff}{}", model("\n", "    "));
    let bom_fixed = format!("\u{feff}{}", fixed("\n", "    "));
    let form_feed = model("\n", "    ").replace("        print(x)", "\x0c        print(x)");
    let form_feed_fixed = fixed("\n", "    ").replace(
        "        if not torch.compiler.is_compiling():\n            print(x)",
        "\x0c        if not torch.compiler.is_compiling():\n\x0c            print(x)",
    );
    // A tab, then spaces: the new block adds what the file's block adds, after the same tab.
    let tab_spaces = model("\n", "    ")
        .replace("    def", "\tdef")
        .replace("        print", "\t    print")
        .replace("        return", "\t    return");
    let tab_spaces_fixed =
        tab_spaces.replace("\t    print(x)", "\t    if not torch.compiler.is_compiling():\n\t        print(x)");
    assert_fixes(&[
        ("bom.py", bom.as_bytes(), bom_fixed.as_bytes()),
        ("tabs.py", model("\n", "\t").as_bytes(), fixed("\n", "\t").as_bytes()),
        ("crlf_tabs.py", model("\r\n", "\t").as_bytes(), fixed("\r\n", "\t").as_bytes()),
        ("two_spaces.py", model("\n", "  ").as_bytes(), fixed("\n", "  ").as_bytes()),
        ("form_feed.py", form_feed.as_bytes(), form_feed_fixed.as_bytes()),
        ("tab_spaces.py", tab_spaces.as_bytes(), tab_spaces_fixed.as_bytes()),
    ]);
}

#[test]
fn backslash_continuations_are_wrapped_whole() {
    let before = model("\n", "    ").replace("print(x)", "print(x, \\\n              x)");
    let after = fixed("\n", "    ").replace("print(x)", "print(x, \\\n                  x)");
    let header = model("\n", "    ").replace("def forward(self, x):", "def forward(self, \\\n                x):");
    let header_fixed =
        fixed("\n", "    ").replace("def forward(self, x):", "def forward(self, \\\n                x):");
    assert_fixes(&[
        ("continued.py", before.as_bytes(), after.as_bytes()),
        ("continued_header.py", header.as_bytes(), header_fixed.as_bytes()),
    ]);
}

#[test]
fn no_final_newline_unicode_and_a_missing_import_are_handled() {
    let no_eol = model("\n", "    ").trim_end().to_string();
    let no_eol_fixed = fixed("\n", "    ").trim_end().to_string();
    let no_import = no_eol.replace("import torch\n", "");
    let no_import_fixed = format!("import torch\n{}", no_eol_fixed.replace("import torch\n", ""));
    let unicode = model("\n", "    ").replace("print(x)", "y = \"héllo 日本語 😀\"; z = 1\n        print(y, \"😀\")");
    let unicode_fixed = fixed("\n", "    ")
        .replace("        if not", "        y = \"héllo 日本語 😀\"; z = 1\n        if not")
        .replace("print(x)", "print(y, \"😀\")");
    assert_fixes(&[
        ("no_eol.py", no_eol.as_bytes(), no_eol_fixed.as_bytes()),
        ("no_import.py", no_import.as_bytes(), no_import_fixed.as_bytes()),
        ("unicode.py", unicode.as_bytes(), unicode_fixed.as_bytes()),
    ]);
    // Columns count characters, not bytes.
    let dir = project(&[(
        "unicode.py",
        format!("# é😀\n{}", model("\n", "    ")).replace("        print(x)", "        é = 1; print(x)").as_bytes(),
    )]);
    let output = tcfix(dir.path(), &["unicode.py"]);
    assert!(stdout(&output).starts_with("unicode.py:8:16: TCF101"), "{}", stdout(&output));
}

#[test]
fn a_hazard_sharing_its_line_is_reported_and_left_alone() {
    let semicolons =
        model("\n", "    ").replace("        print(x)\n        return x", "        y = x; print(x); return y");
    let header = model("\n", "    ").replace(
        "    def forward(self, x):\n        print(x)\n        return x",
        "    def forward(self, x): print(x); return x",
    );
    let one_line_if = model("\n", "    ").replace("        print(x)", "        if x is None: print(x)");
    let dir = project(&[
        ("semicolons.py", semicolons.as_bytes()),
        ("header.py", header.as_bytes()),
        ("one_line_if.py", one_line_if.as_bytes()),
    ]);
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(output.status.code(), Some(1), "the hazards remain: {}", stderr(&output));
    let out = stdout(&output);
    for (name, line, column) in [("semicolons.py", 7, 16), ("header.py", 6, 27), ("one_line_if.py", 7, 23)] {
        assert!(out.contains(&format!("{name}:{line}:{column}: TCF101")), "{name} is reported: {out}");
    }
    assert_eq!(out.matches("no fix: the statement shares its line with other code").count(), 3, "{out}");
    assert_eq!(text(dir.path(), "semicolons.py"), semicolons);
    assert_eq!(text(dir.path(), "header.py"), header);
    assert_eq!(text(dir.path(), "one_line_if.py"), one_line_if);
}

#[test]
fn syntax_errors_invalid_utf8_binary_and_nul_bytes_are_named_and_left_alone() {
    let mut binary: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    binary[0] = 0xff;
    let good = model("\n", "    ");
    let files: [(&str, &[u8]); 6] = [
        ("good.py", good.as_bytes()),
        ("syntax.py", b"def forward(self, x:\n    return x\n"),
        ("latin1.py", b"x = 1\n# caf\xe9\n"),
        ("declared.py", b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n"),
        ("binary.py", &binary),
        ("nul.py", b"x = 1\n\x00\n"),
    ];
    let dir = project(&files);
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    for expected in [
        "syntax.py:2:5: error: Expected an expression",
        "latin1.py: error: not valid UTF-8 (line 2)",
        "declared.py: error: not valid UTF-8 (line 2): the file declares the `latin-1` encoding, and tcfix reads only UTF-8",
        "binary.py: error: not valid UTF-8 (line 1)",
        "nul.py:2:1: error: Got unexpected token \\u{0}",
    ] {
        assert!(err.contains(expected), "expected `{expected}` in:\n{err}");
    }
    assert!(!err.contains('\0'), "no raw control characters on the terminal");
    for (name, before) in &files[1..] {
        assert_eq!(&bytes(dir.path(), name), before, "{name} is left as it was");
    }
    assert!(text(dir.path(), "good.py").contains("is_compiling"), "the other file is still fixed");
    assert_no_leftovers(dir.path());
}

#[test]
fn an_empty_file_is_clean() {
    let dir = project(&[("empty.py", b""), ("blank.py", b"\n\n  \n"), ("comment.py", b"# nothing\n")]);
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "All checks passed!\n");
    assert_eq!(bytes(dir.path(), "empty.py"), b"");
}

#[test]
fn a_directory_named_like_a_python_file_is_walked() {
    let dir =
        project(&[("pkg.py/model.py", model("\n", "    ").as_bytes()), ("good.py", model("\n", "    ").as_bytes())]);
    let output = tcfix(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).contains("pkg.py/model.py:7:9: TCF101"), "{}", stdout(&output));
    assert_good_was_checked(&output);
    let named = tcfix(dir.path(), &["pkg.py"]);
    assert!(stdout(&named).starts_with("pkg.py/model.py:7:9: TCF101"), "{}", stdout(&named));
}

#[test]
fn very_long_lines_are_fixed() {
    let long_string = "a".repeat(1 << 20);
    let long_list = (0..100_000).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let before = model("\n", "    ")
        .replace("print(x)", &format!("print(x, \"{long_string}\")"))
        .replace("return x", &format!("return x + sum([{long_list}])"));
    let after = fixed("\n", "    ")
        .replace("print(x)", &format!("print(x, \"{long_string}\")"))
        .replace("return x", &format!("return x + sum([{long_list}])"));
    assert_fixes(&[("long.py", before.as_bytes(), after.as_bytes())]);
}

/// 20 MB: a model, then a table of data (code of that size in one file takes the analysis
/// minutes, see the closing note of the robustness work).
#[test]
fn a_twenty_megabyte_file_is_fixed_and_nothing_else_changes() {
    let mut before = model("\n", "    ");
    before.push_str("\n\nTABLE = [\n");
    let mut row = 0;
    while before.len() < 20 << 20 {
        before
            .push_str(&format!("    ({row}, {:.6}, 'token_{row}', {{'k': {row}}}),  # row {row}\n", row as f64 * 1e-3));
        row += 1;
    }
    before.push_str("]\n");
    let after = before.replacen(
        "        print(x)\n",
        "        if not torch.compiler.is_compiling():\n            print(x)\n",
        1,
    );
    let dir = project(&[("big.py", before.as_bytes())]);
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "big.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(text(dir.path(), "big.py") == after, "only the guard is added");
    assert_no_leftovers(dir.path());
}

#[test]
fn a_file_nested_too_deeply_is_refused_and_the_others_fixed() {
    let deep = format!("y = {}x\n", "-".repeat(20_000));
    let chain = format!("y = x{}\n", " + x".repeat(20_000));
    let huge = format!("y = {}x\n(\n", "-".repeat(3 << 20));
    let dir = project(&[
        ("good.py", model("\n", "    ").as_bytes()),
        ("deep.py", deep.as_bytes()),
        ("chain.py", chain.as_bytes()),
        ("huge.py", huge.as_bytes()),
    ]);
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    for expected in [
        "deep.py: error: nested more than 10000 levels deep at line 1: too deep for tcfix to analyse",
        "chain.py: error: nested more than 10000 levels deep at line 1",
        "huge.py: error: nested more than 10000 levels deep: too deep",
    ] {
        assert!(err.contains(expected), "expected `{expected}` in:\n{err}");
    }
    assert!(text(dir.path(), "good.py").contains("is_compiling"), "the other file is still fixed");
    assert_eq!(text(dir.path(), "deep.py"), deep);
}

#[cfg(unix)]
mod unix {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn is_root() -> bool {
        Command::new("id").arg("-u").output().is_ok_and(|output| stdout(&output).trim() == "0")
    }

    #[test]
    fn an_unreadable_file_is_named_and_the_others_still_fixed() {
        let dir =
            project(&[("good.py", model("\n", "    ").as_bytes()), ("secret.py", model("\n", "    ").as_bytes())]);
        fs::set_permissions(dir.path().join("secret.py"), fs::Permissions::from_mode(0o000)).unwrap();
        let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
        assert!(text(dir.path(), "good.py").contains("is_compiling"), "the other file is still fixed");
        if is_root() {
            // root reads a file whatever its mode, so chmod 000 cannot make it unreadable and
            // the "permission denied" assertion cannot be made here. What holds: the file is
            // read and analysed, but mode 000 has no write bit, so it is not written either.
            assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
            assert!(stderr(&output).contains("secret.py: error: could not write the fixes: the file is read-only"));
            assert_eq!(fs::metadata(dir.path().join("secret.py")).unwrap().permissions().mode() & 0o777, 0);
            assert_eq!(text(dir.path(), "secret.py"), model("\n", "    "));
        } else {
            assert_eq!(output.status.code(), Some(2));
            assert!(stderr(&output).contains("secret.py: error: permission denied"), "{}", stderr(&output));
            let named = tcfix(dir.path(), &["secret.py"]);
            assert_eq!(named.status.code(), Some(2));
            assert!(stderr(&named).contains("secret.py: error: permission denied"), "{}", stderr(&named));
        }
        assert_no_leftovers(dir.path());
    }

    #[test]
    fn a_read_only_file_is_not_written_and_the_others_are() {
        let dir =
            project(&[("good.py", model("\n", "    ").as_bytes()), ("locked.py", model("\n", "    ").as_bytes())]);
        let locked = dir.path().join("locked.py");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o444)).unwrap();
        let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
        assert_eq!(output.status.code(), Some(2));
        assert!(
            stderr(&output).contains("locked.py: error: could not write the fixes: the file is read-only"),
            "{}",
            stderr(&output)
        );
        assert_eq!(text(dir.path(), "locked.py"), model("\n", "    "), "left exactly as it was");
        assert!(stdout(&output).contains("locked.py:7:9: TCF101"), "still reported: {}", stdout(&output));
        assert_eq!(fs::metadata(&locked).unwrap().permissions().mode() & 0o777, 0o444);
        assert_eq!(text(dir.path(), "good.py"), fixed("\n", "    "));
        assert_no_leftovers(dir.path());
    }

    #[test]
    fn a_file_in_a_read_only_directory_is_not_written_and_the_others_are() {
        let dir = project(&[
            ("good.py", model("\n", "    ").as_bytes()),
            ("locked/model.py", model("\n", "    ").as_bytes()),
        ]);
        let locked = dir.path().join("locked");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
        let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(text(dir.path(), "good.py"), fixed("\n", "    "));
        if is_root() {
            // root may create files in a directory whatever its mode: the file is fixed, and the
            // refusal cannot be shown here.
            assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
            assert_eq!(text(dir.path(), "locked/model.py"), fixed("\n", "    "));
        } else {
            assert_eq!(output.status.code(), Some(2));
            assert!(
                stderr(&output)
                    .contains("locked/model.py: error: could not write the fixes: cannot create a temporary file in"),
                "{}",
                stderr(&output)
            );
            assert_eq!(text(dir.path(), "locked/model.py"), model("\n", "    "), "left exactly as it was");
        }
        assert_no_leftovers(dir.path());
    }

    #[test]
    fn symbolic_link_loops_and_broken_links_are_named_and_never_followed_in_a_walk() {
        let dir = project(&[("good.py", model("\n", "    ").as_bytes()), ("pkg/model.py", b"x = 1\n")]);
        let root = dir.path();
        symlink("loop_b.py", root.join("loop_a.py")).unwrap();
        symlink("loop_a.py", root.join("loop_b.py")).unwrap();
        symlink("missing.py", root.join("broken.py")).unwrap();
        symlink("..", root.join("pkg/up")).unwrap(); // a directory loop
        let output = tcfix(root, &["."]);
        assert_eq!(output.status.code(), Some(1), "links are not followed in a walk: {}", stderr(&output));
        assert_good_was_checked(&output);

        let named = tcfix(root, &["loop_a.py", "broken.py", "good.py"]);
        assert_eq!(named.status.code(), Some(2));
        let err = stderr(&named);
        assert!(
            err.contains(
                "loop_a.py: error: a symbolic link that cannot be followed: too many levels of symbolic links"
            ),
            "{err}"
        );
        assert!(
            err.contains("broken.py: error: a broken symbolic link (to missing.py, which does not exist)"),
            "{err}"
        );
        assert_good_was_checked(&named);
    }

    #[test]
    fn apply_through_a_symbolic_link_fixes_the_target_and_keeps_the_link() {
        let dir = project(&[("real/model.py", model("\n", "    ").as_bytes())]);
        symlink("real/model.py", dir.path().join("link.py")).unwrap();
        let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "link.py", "real/model.py"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(stderr(&output).contains("Fixed 1 hazard in 1 file."), "one file, named twice: {}", stderr(&output));
        assert!(fs::symlink_metadata(dir.path().join("link.py")).unwrap().file_type().is_symlink());
        assert_eq!(text(dir.path(), "real/model.py"), fixed("\n", "    "));
        assert_no_leftovers(dir.path());
    }

    #[test]
    fn a_fifo_or_device_is_never_read() {
        let dir = project(&[("good.py", model("\n", "    ").as_bytes())]);
        let made = Command::new("mkfifo").arg(dir.path().join("pipe.py")).status();
        if !made.is_ok_and(|status| status.success()) {
            eprintln!("no mkfifo here: skipping the FIFO case");
            return;
        }
        // Reading a FIFO with no writer blocks forever: a walk skips it, a name is an error.
        let walk = tcfix(dir.path(), &["."]);
        assert_eq!(walk.status.code(), Some(1), "{}", stderr(&walk));
        assert_good_was_checked(&walk);
        let named = tcfix(dir.path(), &["pipe.py", "/dev/null", "good.py"]);
        assert_eq!(named.status.code(), Some(2));
        assert!(
            stderr(&named).contains("pipe.py: error: not a regular file or directory (a FIFO)"),
            "{}",
            stderr(&named)
        );
        assert!(stderr(&named).contains("/dev/null: error: not a regular file or directory (a device)"));
        assert_good_was_checked(&named);
    }

    #[test]
    fn the_same_file_named_twice_is_fixed_once() {
        let dir = project(&[("model.py", model("\n", "    ").as_bytes())]);
        let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "model.py", "./model.py", "."]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(stderr(&output).contains("Fixed 1 hazard in 1 file."), "{}", stderr(&output));
        assert_eq!(text(dir.path(), "model.py"), fixed("\n", "    "));
    }

    /// Kills `tcfix --apply` while it writes, at several moments, and checks every file is
    /// exactly the old text or exactly the new one. A temporary file can outlive a SIGKILL (it
    /// is written and flushed before the rename); the test counts them, checks they are never
    /// Python files, and that the next run removes them once stale.
    #[test]
    fn killed_during_apply_every_file_is_wholly_old_or_wholly_new() {
        const FILES: usize = 200;
        let padding: String =
            (0..1500).map(|i| format!("# padding line {i} to make the write take a while\n")).collect();
        let old = format!("{}{padding}", model("\n", "    "));
        let new = format!("{}{padding}", fixed("\n", "    "));
        let names: Vec<String> = (0..FILES).map(|i| format!("m{i:04}.py")).collect();
        let mut stray_total = 0;
        for delay_ms in [0u64, 2, 10, 40] {
            let dir = tempfile::tempdir().unwrap();
            for name in &names {
                fs::write(dir.path().join(name), &old).unwrap();
            }
            let mut child = Command::new(env!("CARGO_BIN_EXE_tcfix"))
                .args(["--apply", "--allow-no-vcs", "--quiet", "."])
                .current_dir(dir.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            // Files are written in path order: once the first one changes, the writing has begun.
            let first = dir.path().join(&names[0]);
            let started = std::time::Instant::now();
            while fs::read(&first).is_ok_and(|bytes| bytes == old.as_bytes()) {
                if child.try_wait().unwrap().is_some() || started.elapsed().as_secs() > 120 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();

            let mut fixed_count = 0;
            for name in &names {
                let now = fs::read(dir.path().join(name)).unwrap();
                assert!(
                    now == old.as_bytes() || now == new.as_bytes(),
                    "{name} is neither the old nor the new text after a kill at +{delay_ms} ms ({} bytes)",
                    now.len()
                );
                fixed_count += usize::from(now == new.as_bytes());
            }
            let strays = leftovers(dir.path());
            for stray in &strays {
                let name = stray.file_name().unwrap().to_string_lossy().into_owned();
                assert!(name.ends_with(".tmp") && name.contains(".py."), "a leftover is never a .py: {name}");
            }
            eprintln!(
                "killed at +{delay_ms} ms into the writes: {fixed_count}/{FILES} files new, the rest old, {} leftover",
                strays.len()
            );
            stray_total += strays.len();

            // The next run finishes the job and removes the (now stale) leftovers.
            let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
            for stray in &strays {
                fs::File::options().write(true).open(stray).unwrap().set_modified(long_ago).unwrap();
            }
            let rerun = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "--quiet", "."]);
            assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
            for name in &names {
                assert_eq!(fs::read(dir.path().join(name)).unwrap(), new.as_bytes(), "{name} after the rerun");
            }
            assert_no_leftovers(dir.path());
        }
        eprintln!("{stray_total} leftover temporary files over 4 kills, all removed by the next run");
    }
}
