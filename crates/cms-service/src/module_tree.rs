//! The crate's architecture invariant, checked: its top-level modules form a tree (no module
//! reaches, through the modules it names, back to itself; docs/ARCHITECTURE.md, cms-service).
//!
//! A module names another by a `crate::<module>` path, or by `crate::<Name>` where `lib.rs`
//! re-exports `Name` from that module (`pub use module::{Name, ..}`); every head of a
//! `use crate::{a::X, b::{..}}` group counts. Doc comments count too (their links are
//! dependencies for rustdoc); plain `//` comments don't. Items of `lib.rs` itself (`Inner`,
//! `Cms`, `Settings`) are the root, which every module may use, and `super::` stays inside a
//! module. `foo.rs` and everything under `foo/` are the module `foo`.

use std::collections::BTreeMap;
use std::path::Path;

/// For each module, the modules it names, each with the file and path that first names it
/// (`"alpha.rs: crate::beta::Thing"`).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The module a file of `src/` belongs to (`None` for `lib.rs`, the root).
fn module_of(file: &str) -> Option<&str> {
    match file.split_once('/') {
        Some((dir, _)) => Some(dir),
        None => file.strip_suffix(".rs").filter(|&name| name != "lib"),
    }
}

/// The text without plain `//` comments; doc comments (`///`, `//!`) stay.
fn without_comments(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    for line in text.lines() {
        let trimmed = line.trim_start();
        let code = if trimmed.starts_with("///") || trimmed.starts_with("//!") {
            line
        } else {
            // A comment starts a line or follows a space; `//` in `https://` does neither.
            let start = line
                .match_indices("//")
                .map(|(at, _)| at)
                .find(|&at| line[..at].trim().is_empty() || line[..at].ends_with(' '));
            start.map_or(line, |at| &line[..at])
        };
        kept.push_str(code);
        kept.push('\n');
    }
    kept
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The path at the start of `text` (`a::b::C`), without a trailing `::`.
fn leading_path(text: &str) -> &str {
    let end = text
        .find(|c: char| !is_ident_char(c) && c != ':')
        .unwrap_or(text.len());
    text[..end].trim_end_matches(':')
}

/// The items of the `{..}` group `text` starts with, split at its top-level commas.
fn group_items(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0, 1, Vec::new());
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                items.push(text[start..at].trim());
                start = at + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    items
}

/// Every path the text names from the crate root, without the `crate::` (`beta::Thing`, and
/// for `crate::{a::X, B}` both `a::X` and `B`).
fn crate_paths(text: &str) -> Vec<&str> {
    let mut paths = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        if text[..at].ends_with(|c: char| is_ident_char(c) || c == '$' || c == ':') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if rest.starts_with('{') {
            paths.extend(group_items(rest).into_iter().map(leading_path));
        } else {
            paths.push(leading_path(rest));
        }
    }
    paths.retain(|p| !p.is_empty());
    paths
}

/// The modules `lib.rs` declares, and the names its `use` lines bring into the root from them
/// (`Registry` -> `jobs`).
fn root_names(lib: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let lib = without_comments(lib);
    let modules: Vec<String> = lib
        .lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [ref visibility @ .., "mod", name]
                    if visibility.iter().all(|w| w.starts_with("pub")) =>
                {
                    Some(name.strip_suffix(';')?.to_string())
                }
                _ => None,
            },
        )
        .collect();
    let mut reexported = BTreeMap::new();
    for (at, _) in lib.match_indices("use ") {
        if !lib[..at].is_empty() && !lib[..at].ends_with(char::is_whitespace) {
            continue;
        }
        let statement = &lib[at + "use ".len()..];
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        let head = leading_path(statement)
            .split("::")
            .next()
            .unwrap_or_default();
        if !modules.iter().any(|m| m == head) {
            continue;
        }
        for leaf in statement.split(['{', '}', ',']) {
            let leaf = leaf.rsplit(" as ").next().unwrap_or(leaf);
            let name = leaf.trim().rsplit("::").next().unwrap_or_default();
            if !name.is_empty() && name != "self" {
                reexported.insert(name.to_string(), head.to_string());
            }
        }
    }
    (modules, reexported)
}

/// The graph of the top-level modules, from `lib.rs` and every other file of `src/` (paths
/// relative to `src/`, with `/` separators).
fn graph(lib: &str, files: &[(String, String)]) -> Graph {
    let (modules, reexported) = root_names(lib);
    let mut graph = Graph::new();
    for (file, text) in files {
        let Some(from) = module_of(file) else {
            continue;
        };
        let edges = graph.entry(from.to_string()).or_default();
        for path in crate_paths(&without_comments(text)) {
            let head = path.split("::").next().unwrap_or_default();
            let to = match modules.iter().find(|m| *m == head) {
                Some(module) => module,
                None => match reexported.get(head) {
                    Some(module) => module,
                    None => continue,
                },
            };
            if to != from {
                edges
                    .entry(to.clone())
                    .or_insert_with(|| format!("{file}: crate::{path}"));
            }
        }
    }
    graph
}

/// The cycles a depth-first walk meets, one per edge back into the walk's path, each spelled
/// from its first module back to it (`["a", "b", "a"]`).
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    fn walk<'a>(
        graph: &'a Graph,
        module: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut Vec<&'a str>,
        found: &mut Vec<Vec<String>>,
    ) {
        path.push(module);
        for next in graph.get(module).into_iter().flat_map(|edges| edges.keys()) {
            if let Some(at) = path.iter().position(|m| *m == next.as_str()) {
                let mut cycle: Vec<String> = path[at..].iter().map(|m| m.to_string()).collect();
                cycle.push(next.clone());
                found.push(cycle);
            } else if !done.contains(&next.as_str()) {
                walk(graph, next, path, done, found);
            }
        }
        path.pop();
        done.push(module);
    }
    let (mut done, mut found) = (Vec::new(), Vec::new());
    for module in graph.keys() {
        if !done.contains(&module.as_str()) {
            walk(graph, module, &mut Vec::new(), &mut done, &mut found);
        }
    }
    found
}

/// Each cycle on a line, followed by the path that makes each of its steps.
fn report(graph: &Graph, cycles: &[Vec<String>]) -> String {
    let mut report = String::new();
    for cycle in cycles {
        report.push_str(&format!("  {}\n", cycle.join(" -> ")));
        for step in cycle.windows(2) {
            let named_by = &graph[&step[0]][&step[1]];
            report.push_str(&format!("      {} -> {}: {named_by}\n", step[0], step[1]));
        }
    }
    report
}

/// Every `.rs` file under `dir`, with its path relative to `root`.
fn read_sources(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_sources(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy();
            let text = std::fs::read_to_string(&path).unwrap();
            files.push((relative.replace('\\', "/"), text));
        }
    }
}

#[test]
fn the_modules_form_a_tree() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_sources(&src, &src, &mut files);
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let graph = graph(&lib, &files);
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "the top-level modules of cms-service must form a tree, but they import each other in \
         a circle (move what both need into a module below both):\n{}",
        report(&graph, &cycles)
    );
}

mod tests {
    use super::*;

    fn example(alpha: &str, beta: &str) -> Graph {
        let lib = "mod alpha;\npub mod beta;\n\npub use beta::{Thing, other::{Other as Renamed}};\n\
                   pub struct Inner;\n";
        let files = [
            ("alpha.rs".to_string(), alpha.to_string()),
            ("beta/mod.rs".to_string(), beta.to_string()),
            (
                "beta/deep.rs".to_string(),
                "use super::Thing;\n".to_string(),
            ),
        ];
        graph(lib, &files)
    }

    #[test]
    fn a_cycle_is_found_through_a_root_reexport_and_a_doc_link() {
        let graph = example(
            "use crate::{Inner, Renamed};\n",
            "/// Made by [`crate::alpha::make`].\npub struct Thing;\n",
        );
        let cycles = cycles(&graph);
        assert_eq!(cycles, [["alpha", "beta", "alpha"]]);
        assert_eq!(
            report(&graph, &cycles),
            "  alpha -> beta -> alpha\n      alpha -> beta: alpha.rs: crate::Renamed\n      \
             beta -> alpha: beta/mod.rs: crate::alpha::make\n"
        );
    }

    #[test]
    fn a_tree_passes() {
        let graph = example(
            "use crate::{Inner, beta::{Thing}};\nfn f(_thing: crate::Thing) {}\n",
            "// Made by crate::alpha::make (a plain comment).\n\
             pub fn g() {} // crate::alpha\n\
             pub struct Thing(crate::Inner);\n",
        );
        assert_eq!(graph["alpha"].keys().collect::<Vec<_>>(), ["beta"]);
        assert!(graph["beta"].is_empty());
        assert!(cycles(&graph).is_empty());
    }

    #[test]
    fn groups_name_each_of_their_heads() {
        let text = "use crate::{\n    a::X,\n    b::{c::D, E}, // crate::z\n    F as G,\n};\n";
        assert_eq!(crate_paths(&without_comments(text)), ["a::X", "b", "F"]);
    }
}
