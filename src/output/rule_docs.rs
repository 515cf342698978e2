//! What the SARIF and Markdown reports say about a rule besides its findings and its README
//! (`Rule::explanation`): a one-line description of the hazard and why it hurts. One entry per
//! rule in [`crate::rules::RULES`]; a test checks that none is missing.

use crate::rules::Rule;

pub(crate) struct RuleDoc {
    pub code: &'static str,
    /// What the rule finds, in one line (SARIF `shortDescription`).
    pub summary: &'static str,
    /// Why the hazard hurts, in one sentence (the Markdown report).
    pub why: &'static str,
}

static DOCS: &[RuleDoc] = &[
    RuleDoc {
        code: "TCF101",
        summary: "A print, logging or warnings.warn call in compiled code breaks the graph.",
        why: "Every call splits the compiled code into separate graphs with a Python round trip between them, and \
              inside a loop Dynamo gives up on the whole frame and runs it eagerly.",
    },
    RuleDoc {
        code: "TCF102",
        summary: "A tokenizer or processor lookup in compiled code breaks the graph.",
        why: "Dynamo cannot trace the tokenizer, so the graph breaks on every call to fetch a value that never \
              changes, and inside a loop the whole frame runs eagerly.",
    },
    RuleDoc {
        code: "TCF201",
        summary: "A buffer registered empty and grown in compiled code recompiles at every growth.",
        why: "Dynamo guards on the buffer's shape, so every growth costs a full recompile, and after the recompile \
              limit the frame silently runs eagerly.",
    },
    RuleDoc {
        code: "TCF202",
        summary: "A forward hook that reads mutable state recompiles whenever the state changes.",
        why: "Dynamo guards on every outside value the hook reads, so each new value costs a recompile of the frame, \
              and state that changes on every call reaches the recompile limit and leaves the frame eager.",
    },
];

pub(crate) fn doc(rule: &Rule) -> Option<&'static RuleDoc> {
    DOCS.iter().find(|doc| doc.code == rule.code)
}

/// The first paragraph after the README's title, its lines joined: what the rule finds.
pub(crate) fn first_paragraph(readme: &str) -> String {
    readme
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty() || line.starts_with('#'))
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RULES;

    #[test]
    fn every_rule_has_docs() {
        for rule in RULES {
            let doc = doc(rule).unwrap_or_else(|| panic!("{rule:?} has no entry in src/output/rule_docs.rs"));
            assert!(doc.summary.ends_with('.') && doc.why.ends_with('.'));
        }
        for doc in DOCS {
            assert!(RULES.iter().any(|rule| rule.code == doc.code), "{} is in no rule", doc.code);
        }
    }

    #[test]
    fn first_paragraph_is_the_text_under_the_title() {
        let readme = "# TCF999 a-rule\n\nA `print()` in\ncompiled code.\n\n## What Dynamo does\n\nMore.\n";
        assert_eq!(first_paragraph(readme), "A `print()` in compiled code.");
        let paragraph = first_paragraph(RULES[0].explanation);
        assert!(paragraph.len() > 80 && !paragraph.contains('\n') && !paragraph.starts_with('#'), "{paragraph}");
    }
}
