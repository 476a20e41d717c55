//! `cargo xtask import-cycles`: files of the workspace that import each
//! other, directly or round a longer circle.
//!
//! A file imports another when it names an item (through `use`, or a path
//! such as `crate::metrics::ms(..)`) that the other file defines. Re-exports
//! are followed to the file that defines the item, so `use crate::ReplayError`
//! is an import of `error.rs`, not of `lib.rs`; declaring `mod x;` is not an
//! import. Test modules count: they are part of their file. The scan is
//! lexical (comments and literals dropped, `use` trees expanded), which is
//! enough for this workspace's plain `use` and path style.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A module path within one crate (`["runtime", "pool"]`).
type ModPath = Vec<String>;

/// What one file says about names.
#[derive(Default, Debug)]
struct FileFacts {
    /// Items it defines (fn, struct, enum, trait, type, const, static, mod, macro).
    defines: BTreeSet<String>,
    /// Names it brings in with `use`, to the absolute path they stand for.
    bindings: HashMap<String, ModPath>,
    /// The names of `bindings` it imports for its own code (not `pub use`).
    imported: BTreeSet<String>,
    /// Names it brings in from other crates (`use aisim_core::number::float`).
    external: BTreeSet<String>,
    /// Globs it brings in (`use x::*`), as absolute paths.
    globs: Vec<ModPath>,
    /// Every absolute path it names.
    paths: Vec<ModPath>,
}

/// One crate's files by module path.
struct Crate {
    files: BTreeMap<ModPath, (PathBuf, FileFacts)>,
}

/// One circle: its files, and for each import within it, the importing
/// file, the imported one and a path the first names.
pub type Circle = (Vec<PathBuf>, Vec<(PathBuf, PathBuf, String)>);

/// The circles of imports among the files under each `src` folder of `roots`
/// (each a crate folder); empty when there are none.
pub fn cycles(roots: &[PathBuf]) -> std::io::Result<Vec<Circle>> {
    let mut found = Vec::new();
    for root in roots {
        let src = root.join("src");
        if !src.is_dir() {
            continue;
        }
        let krate = read_crate(&src)?;
        let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        let mut why: BTreeMap<(ModPath, ModPath), String> = BTreeMap::new();
        for (m, (_, facts)) in &krate.files {
            for p in &facts.paths {
                let target = krate.resolve(p, 0);
                if &target != m && krate.files.contains_key(&target) {
                    edges.entry(m.clone()).or_default().insert(target.clone());
                    why.entry((m.clone(), target))
                        .or_insert_with(|| p.join("::"));
                }
            }
        }
        let file = |m: &ModPath| krate.files[m].0.clone();
        for comp in strongly_connected(&edges) {
            let inside: Vec<_> = why
                .iter()
                .filter(|((a, b), _)| comp.contains(a) && comp.contains(b))
                .map(|((a, b), p)| (file(a), file(b), p.clone()))
                .collect();
            found.push((comp.iter().map(file).collect(), inside));
        }
    }
    Ok(found)
}

fn read_crate(src: &Path) -> std::io::Result<Crate> {
    let mut files = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = module_path(src, &path);
                let text = std::fs::read_to_string(&path)?;
                let facts = facts(&tokens(&text), &module);
                files.insert(module, (path, facts));
            }
        }
    }
    Ok(Crate { files })
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` the root.
fn module_path(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) && (parts.len() > 1 || parts[0] != "mod")
    {
        parts.pop();
    }
    parts
}

impl Crate {
    /// The file (module path) that defines what `path` names; for a name
    /// another crate defines, the module that brings it in.
    fn resolve(&self, path: &[String], depth: usize) -> ModPath {
        let mut module: ModPath = Vec::new();
        for (i, seg) in path.iter().enumerate() {
            let mut child = module.clone();
            child.push(seg.clone());
            if self.files.contains_key(&child) {
                module = child;
                continue;
            }
            let Some((_, facts)) = self.files.get(&module) else {
                return module;
            };
            if facts.defines.contains(seg) || depth > 16 {
                return module;
            }
            if facts.external.contains(seg) {
                return vec![format!("extern {seg}")];
            }
            let rest = &path[i + 1..];
            if let Some(bound) = facts.bindings.get(seg) {
                if bound.as_slice() != path {
                    return self.resolve(&[bound.as_slice(), rest].concat(), depth + 1);
                }
            }
            for glob in &facts.globs {
                let mut via = glob.clone();
                via.push(seg.clone());
                let target = self.resolve(&via, depth + 1);
                if target != *glob || self.defines(&target, seg) {
                    return self.resolve(&[via.as_slice(), rest].concat(), depth + 1);
                }
            }
            return module;
        }
        module
    }

    fn defines(&self, module: &ModPath, name: &str) -> bool {
        self.files
            .get(module)
            .is_some_and(|(_, f)| f.defines.contains(name))
    }
}

/// Tarjan's strongly connected components of more than one file.
fn strongly_connected(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: HashMap<&'a ModPath, usize>,
        low: HashMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(ws) = s.edges.get(v) {
            for w in ws {
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Identifiers and punctuation of Rust source, comments and literals dropped
/// (`::` is one token; `$crate` stays one token so macros' paths are skipped).
fn tokens(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == 'r' && matches!(c.get(i + 1), Some('"' | '#')) && raw_string_at(&c, i) {
            i += 1;
            let mut hashes = 0;
            while c[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1; // the opening quote
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push("\"\"".into());
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push("\"\"".into());
        } else if ch == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else if ch.is_alphanumeric() || ch == '_' || ch == '$' {
            let start = i;
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else {
            if !ch.is_whitespace() {
                out.push(ch.to_string());
            }
            i += 1;
        }
    }
    out
}

/// Whether `r` at `i` opens a raw string (`r"`, `r#"`), not an identifier.
fn raw_string_at(c: &[char], i: usize) -> bool {
    let before_ok = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let mut j = i + 1;
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    before_ok && c.get(j) == Some(&'"')
}

const DEFINING: [&str; 10] = [
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "mod",
    "union",
    "macro_rules",
];

/// The facts of one file at `module`.
fn facts(t: &[String], module: &ModPath) -> FileFacts {
    let mut f = FileFacts::default();
    // Child modules declared here (`mod x;`): a relative path may start with one.
    let children: BTreeSet<&str> = t
        .windows(3)
        .filter(|w| w[0] == "mod" && w[2] == ";")
        .map(|w| w[1].as_str())
        .collect();
    // Inline modules (`mod tests {`) nest below the file's module.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let here = |inline: &[(String, usize)]| -> ModPath {
        let mut m = module.clone();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    let mut i = 0;
    while i < t.len() {
        let tok = t[i].as_str();
        match tok {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        if DEFINING.contains(&tok) {
            let name_at = if tok == "macro_rules" { i + 2 } else { i + 1 };
            if let Some(name) = t.get(name_at) {
                if inline.is_empty() {
                    f.defines.insert(name.clone());
                }
                if tok == "mod" && t.get(i + 2).is_some_and(|n| n == "{") {
                    inline.push((name.clone(), depth));
                }
            }
        }
        let cur = here(&inline);
        if tok == "use" {
            // `pub use` (any visibility) re-exports: the module's interface,
            // not a use of the item by this file's own code.
            let re_export = t[..i].last().is_some_and(|p| p == "pub" || p == ")");
            let end = t[i..]
                .iter()
                .position(|x| x == ";")
                .map_or(t.len(), |p| i + p);
            let mut leaves = Vec::new();
            use_tree(&t[i + 1..end], &mut Vec::new(), &mut leaves);
            for (path, alias) in leaves {
                let Some(abs) = absolute(&path, &cur, &children, inline.is_empty()) else {
                    if let Some(a) = alias.filter(|a| a != "*" && inline.is_empty()) {
                        f.external.insert(a);
                    }
                    continue;
                };
                match alias.as_deref() {
                    Some("*") if inline.is_empty() => f.globs.push(abs.clone()),
                    Some("*") => {}
                    Some("_") => {}
                    Some(a) if inline.is_empty() => {
                        f.bindings.insert(a.to_string(), abs.clone());
                        if !re_export {
                            f.imported.insert(a.to_string());
                        }
                    }
                    _ => {}
                }
                if !re_export {
                    f.paths.push(abs);
                }
            }
            i = end + 1;
            continue;
        }
        // A path in code: `crate::a::b`, `super::x`, `self::x`, or one that
        // starts with a child module or a name this file brought in.
        let starts_path = t.get(i + 1).is_some_and(|n| n == "::")
            && (i == 0 || t[i - 1] != "::")
            && (matches!(tok, "crate" | "super" | "self")
                || children.contains(tok)
                || f.imported.contains(tok));
        if starts_path {
            let mut path = vec![tok.to_string()];
            let mut j = i + 1;
            while t.get(j).is_some_and(|x| x == "::") && t.get(j + 1).is_some_and(|x| is_ident(x)) {
                path.push(t[j + 1].clone());
                j += 2;
            }
            let abs = match f.bindings.get(tok).filter(|_| f.imported.contains(tok)) {
                Some(bound) if !matches!(tok, "crate" | "super" | "self") => {
                    Some([bound.as_slice(), &path[1..]].concat())
                }
                _ => absolute(&path, &cur, &children, inline.is_empty()),
            };
            if let Some(abs) = abs {
                f.paths.push(abs);
            }
            i = j;
            continue;
        }
        i += 1;
    }
    // A name the file re-exports and also uses itself is imported for its
    // own code too: a use of the defining file.
    let mut uses: BTreeMap<&str, usize> = BTreeMap::new();
    for tok in t {
        *uses.entry(tok.as_str()).or_default() += 1;
    }
    for (name, path) in &f.bindings {
        if !f.imported.contains(name) && uses.get(name.as_str()).copied().unwrap_or(0) > 1 {
            f.paths.push(path.clone());
        }
    }
    f
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// A path as written at `cur` made absolute within the crate; `None` when it
/// leaves the crate (another crate, std).
fn absolute(
    path: &[String],
    cur: &ModPath,
    children: &BTreeSet<&str>,
    at_file_level: bool,
) -> Option<ModPath> {
    let first = path.first()?.as_str();
    let mut base = match first {
        "crate" => Vec::new(),
        "self" => cur.clone(),
        "super" => {
            let mut b = cur.clone();
            let mut k = 0;
            while path.get(k).is_some_and(|s| s == "super") {
                b.pop();
                k += 1;
            }
            let mut out = b;
            out.extend(path[k..].iter().cloned());
            return Some(out);
        }
        _ if at_file_level && children.contains(first) => {
            let mut b = cur.clone();
            b.push(first.to_string());
            b
        }
        _ => return None,
    };
    base.extend(path[1..].iter().cloned());
    Some(base)
}

/// Expands a `use` tree into its leaves: the path and the name it binds
/// (`*` for a glob, `_` for none).
fn use_tree(t: &[String], prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut i = 0;
    let start_len = prefix.len();
    while i < t.len() {
        let tok = t[i].as_str();
        match tok {
            "::" => {}
            "{" => {
                // The group's items, split at top-level commas.
                let mut depth = 0;
                let mut item_start = i + 1;
                let mut j = i + 1;
                while j < t.len() {
                    match t[j].as_str() {
                        "{" => depth += 1,
                        "}" if depth == 0 => break,
                        "}" => depth -= 1,
                        "," if depth == 0 => {
                            use_tree(&t[item_start..j], prefix, out);
                            item_start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                use_tree(&t[item_start..j.min(t.len())], prefix, out);
                prefix.truncate(start_len);
                return;
            }
            "*" => {
                out.push((prefix.clone(), Some("*".into())));
                prefix.truncate(start_len);
                return;
            }
            "as" => {
                let alias = t.get(i + 1).cloned();
                out.push((prefix.clone(), alias));
                prefix.truncate(start_len);
                return;
            }
            "self" if i > 0 || !prefix.is_empty() => {
                // `a::{self, b}` binds `a`.
                let name = prefix.last().cloned();
                out.push((prefix.clone(), name));
                prefix.truncate(start_len);
                return;
            }
            "pub" | "(" | ")" | "in" => {}
            _ => prefix.push(tok.to_string()),
        }
        i += 1;
    }
    if prefix.len() > start_len {
        let name = prefix.last().cloned();
        out.push((prefix.clone(), name));
    }
    prefix.truncate(start_len);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace_crates() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut roots: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        roots.push(root.join("xtask"));
        roots.sort();
        roots
    }

    #[test]
    fn no_file_of_the_workspace_imports_a_file_that_imports_it_back() {
        let found = cycles(&workspace_crates()).unwrap();
        assert!(found.is_empty(), "import circles: {found:#?}");
    }

    /// A crate written to a scratch folder under the target directory.
    fn scratch_crate(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/tmp/import_cycles")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let p = dir.join("src").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_circle_through_a_re_export_is_found_and_one_through_the_root_alone_is_not() {
        // a uses b's item through lib.rs's re-export; b uses a's: a circle.
        let dir = scratch_crate(
            "circle",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use b::Bee;\n"),
                ("a.rs", "use crate::Bee;\npub struct Ay(Bee);\n"),
                (
                    "b.rs",
                    "pub struct Bee;\nfn f() -> crate::a::Ay { todo!() }\n",
                ),
            ],
        );
        let found = cycles(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        let names: Vec<_> = found[0]
            .0
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.rs", "b.rs"]);
        // Both naming lib.rs's own item, and lib.rs declaring them: no circle.
        let dir = scratch_crate(
            "root",
            &[
                (
                    "lib.rs",
                    "mod a;\nmod b;\npub struct Root;\n// crate::a::Ay\n",
                ),
                (
                    "a.rs",
                    "use crate::Root;\npub struct Ay;\nconst S: &str = \"crate::b::Bee\";\n",
                ),
                ("b.rs", "use crate::{Root, a::Ay};\npub struct Bee;\n"),
            ],
        );
        assert!(cycles(&[dir]).unwrap().is_empty());
    }

    #[test]
    fn a_re_export_the_module_uses_itself_is_an_import() {
        // mod.rs re-exports and calls a child's item; the child uses mod.rs's.
        let files = |call: &str| {
            [
                ("lib.rs".to_string(), "pub mod m;\n".to_string()),
                (
                    "m/mod.rs".to_string(),
                    format!("mod kid;\npub use kid::Kid;\npub struct Shape;\n{call}\n"),
                ),
                (
                    "m/kid.rs".to_string(),
                    "use super::Shape;\npub struct Kid(Shape);\n".to_string(),
                ),
            ]
        };
        let write = |name: &str, call: &str| {
            let f = files(call);
            let refs: Vec<(&str, &str)> = f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            scratch_crate(name, &refs)
        };
        let used = write("re-export-used", "fn f(k: Kid) {}");
        assert_eq!(cycles(&[used]).unwrap().len(), 1);
        let only_exported = write("re-export-only", "");
        assert!(cycles(&[only_exported]).unwrap().is_empty());
    }

    #[test]
    fn use_trees_expand_to_their_leaves() {
        let t = tokens("a::{b, c::{d as e, self}, f::*}");
        let mut out = Vec::new();
        use_tree(&t, &mut Vec::new(), &mut out);
        let want: Vec<(Vec<String>, Option<String>)> = vec![
            (vec!["a".into(), "b".into()], Some("b".into())),
            (vec!["a".into(), "c".into(), "d".into()], Some("e".into())),
            (vec!["a".into(), "c".into()], Some("c".into())),
            (vec!["a".into(), "f".into()], Some("*".into())),
        ];
        assert_eq!(out, want);
    }
}
