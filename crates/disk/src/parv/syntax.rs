//! libparam syntax, as DiskSim 4.0 writes its parameter files: a tree of blocks, lists and
//! scalars, every node tagged with the file and line it came from.
//!
//! ```text
//! # comment to end of line
//! TYPE NAME { Key words = VALUE, Key = VALUE, ... }      top-level block
//! source FILE                                           include FILE (relative to this file)
//! instantiate [ name, ... ] as NAME                     top-level
//! topology TYPE NAME [ TYPE NAME [ ... ], ... ]         top-level (kept as a tree of names)
//! VALUE := NUMBER | WORD | [ VALUE, ... ] | TYPE { ... } | source FILE
//! ```
//! `source FILE` as a value reads FILE, which must hold exactly one block (DiskSim's
//! `Model = source x.model`). Keys are everything before `=` with runs of blanks folded to
//! one space, so `Read hit over. after read` and `Segment size (in blks)` are keys.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a node came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pos {
    pub file: Arc<PathBuf>,
    pub line: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A syntax or include error, with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub at: Pos,
    pub msg: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.msg)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number as written (DiskSim writes integers and decimals).
    Num(f64, Pos),
    Word(String, Pos),
    List(Vec<Value>, Pos),
    Block(Block),
}

impl Value {
    pub fn pos(&self) -> &Pos {
        match self {
            Value::Num(_, p) | Value::Word(_, p) | Value::List(_, p) => p,
            Value::Block(b) => &b.at,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub value: Value,
    pub at: Pos,
}

/// `TYPE [NAME] { entries }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub ty: String,
    pub name: Option<String>,
    pub entries: Vec<Entry>,
    pub at: Pos,
}

/// A whole file with its includes expanded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    pub blocks: Vec<Block>,
    /// `instantiate [ names ] as TYPE_NAME`: (names, block name, position).
    pub instances: Vec<(Vec<String>, String, Pos)>,
    /// `topology TYPE NAME [ ... ]`, flattened: every component with the index of the one
    /// it hangs under (the importer finds the bus a drive is attached to).
    pub topology: Vec<TopologyNode>,
}

/// One component of a `topology` tree: `disksim_bus bus1 [ ... ]`.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyNode {
    pub ty: String,
    /// The instance name (`instantiate [ bus1 ] as BUS1` gives its block).
    pub name: String,
    pub parent: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Open(char),
    Close(char),
    Eq,
    Comma,
}

struct Lexer {
    toks: Vec<(Tok, u32)>,
    i: usize,
    file: Arc<PathBuf>,
    dir: PathBuf,
    depth: u32,
}

/// Deepest chain of `source` includes (a cycle stops here with an error).
const MAX_INCLUDE_DEPTH: u32 = 16;

fn lex(text: &str) -> Vec<(Tok, u32)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n as u32 + 1;
        let line = line.split('#').next().unwrap_or("");
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut Vec<(Tok, u32)>| {
            if !word.is_empty() {
                out.push((Tok::Word(std::mem::take(word)), line_no));
            }
        };
        for c in line.chars() {
            let t = match c {
                '{' | '[' => Some(Tok::Open(c)),
                '}' | ']' => Some(Tok::Close(c)),
                '=' => Some(Tok::Eq),
                ',' => Some(Tok::Comma),
                c if c.is_whitespace() => None,
                c => {
                    word.push(c);
                    continue;
                }
            };
            flush(&mut word, &mut out);
            if let Some(t) = t {
                out.push((t, line_no));
            }
        }
        flush(&mut word, &mut out);
    }
    out
}

/// Parse `path` and every file it sources.
pub fn parse_file(path: &Path) -> Result<Document, SyntaxError> {
    parse_at(path, 0, None)
}

fn read(path: &Path, from: Option<&Pos>) -> Result<String, SyntaxError> {
    std::fs::read_to_string(path).map_err(|e| SyntaxError {
        at: from.cloned().unwrap_or(Pos { file: Arc::new(path.to_path_buf()), line: 0 }),
        msg: format!("cannot read {}: {e}", path.display()),
    })
}

fn parse_at(path: &Path, depth: u32, from: Option<&Pos>) -> Result<Document, SyntaxError> {
    let text = read(path, from)?;
    parse_str(&text, path, depth)
}

/// Parse `text` as if read from `path` (includes resolve relative to `path`'s directory).
pub fn parse_str(text: &str, path: &Path, depth: u32) -> Result<Document, SyntaxError> {
    let mut lx = Lexer::new(text, path, depth);
    let mut doc = Document::default();
    while let Some(tok) = lx.peek().cloned() {
        let at = lx.pos();
        match tok {
            Tok::Word(w) if w == "source" => {
                lx.next();
                let f = lx.word("a file name after `source`")?;
                let inc = lx.include_path(&f, &at)?;
                let sub = parse_at(&inc, depth + 1, Some(&at))?;
                doc.blocks.extend(sub.blocks);
                doc.instances.extend(sub.instances);
                let base = doc.topology.len();
                doc.topology.extend(sub.topology.into_iter().map(|mut n| {
                    n.parent = n.parent.map(|p| p + base);
                    n
                }));
            }
            Tok::Word(w) if w == "instantiate" => {
                lx.next();
                let Value::List(items, _) = lx.value()? else {
                    return Err(lx.err_at(&at, "`instantiate` needs a [ list ] of names"));
                };
                let names = items
                    .into_iter()
                    .map(|v| match v {
                        Value::Word(w, _) => Ok(w),
                        Value::Num(x, _) => Ok(x.to_string()),
                        other => Err(lx.err_at(other.pos(), "instance names must be words")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                match lx.word("`as`")?.as_str() {
                    "as" => {}
                    other => return Err(lx.err_at(&at, &format!("expected `as`, found `{other}`"))),
                }
                let ty = lx.word("a block name after `as`")?;
                doc.instances.push((names, ty, at));
            }
            Tok::Word(w) if w == "topology" => {
                // `topology TYPE NAME [ TYPE NAME [ ... ], ... ]`: the bus/controller wiring.
                lx.next();
                topology_node(&mut lx, None, &mut doc.topology)?;
            }
            Tok::Word(ty) => {
                lx.next();
                let name = lx.word("a block name")?;
                match lx.next() {
                    Some(Tok::Open('{')) => {}
                    _ => return Err(lx.err_at(&at, &format!("expected `{{` after `{ty} {name}`"))),
                }
                doc.blocks.push(lx.block_body(ty, Some(name), at)?);
            }
            other => return Err(lx.err_at(&at, &format!("unexpected {}", describe(&other)))),
        }
    }
    Ok(doc)
}

/// A list's `NAMEm .. NAMEn` items become NAMEm, NAME(m+1), ..., NAMEn: both ends the same
/// prefix followed by a decimal number, `m <= n`, the numbers written without padding
/// (libparam's ranges, valid in every list: `instantiate`, `devices = [...]`).
fn expand_ranges(items: Vec<Value>) -> Result<Vec<Value>, SyntaxError> {
    if !items.iter().any(|v| matches!(v, Value::Word(w, _) if w == "..")) {
        return Ok(items);
    }
    let split = |w: &str| {
        let digits = w.len() - w.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, n) = w.split_at(digits);
        n.parse::<u64>().ok().map(|n| (prefix.to_string(), n))
    };
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    let mut it = items.into_iter();
    while let Some(v) = it.next() {
        let Value::Word(w, at) = &v else {
            out.push(v);
            continue;
        };
        if w != ".." {
            out.push(v);
            continue;
        }
        let bad = |msg: String| SyntaxError { at: at.clone(), msg };
        let from = match out.pop() {
            Some(Value::Word(f, _)) => f,
            _ => return Err(bad("`..` needs a name before it (NAMEm .. NAMEn)".into())),
        };
        let to = match it.next() {
            Some(Value::Word(t, _)) => t,
            _ => return Err(bad(format!("`{from} ..` needs a name after it (NAMEm .. NAMEn)"))),
        };
        let (Some((p, m)), Some((q, n))) = (split(&from), split(&to)) else {
            return Err(bad(format!("range `{from} .. {to}`: both ends must end in a number")));
        };
        if p != q || m > n {
            return Err(bad(format!(
                "range `{from} .. {to}`: both ends need the same prefix, the first number not above the second"
            )));
        }
        out.extend((m..=n).map(|k| Value::Word(format!("{p}{k}"), at.clone())));
    }
    Ok(out)
}

/// `TYPE NAME [ child, child, ... ]` (a child is a node of the same shape).
fn topology_node(
    lx: &mut Lexer,
    parent: Option<usize>,
    out: &mut Vec<TopologyNode>,
) -> Result<(), SyntaxError> {
    let ty = lx.word("a component type in `topology`")?;
    let name = lx.word("a component name in `topology`")?;
    let me = out.len();
    out.push(TopologyNode { ty, name, parent });
    let at = lx.pos();
    match lx.next() {
        Some(Tok::Open('[')) => {}
        _ => return Err(lx.err_at(&at, "expected `[` in `topology`")),
    }
    loop {
        match lx.peek() {
            Some(Tok::Close(']')) => {
                lx.next();
                return Ok(());
            }
            Some(Tok::Comma) => {
                lx.next();
            }
            Some(Tok::Word(_)) => topology_node(lx, Some(me), out)?,
            _ => {
                let at = lx.pos();
                return Err(lx.err_at(&at, "expected a component or `]` in `topology`"));
            }
        }
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Open(c) | Tok::Close(c) => format!("`{c}`"),
        Tok::Eq => "`=`".into(),
        Tok::Comma => "`,`".into(),
    }
}

impl Lexer {
    fn new(text: &str, path: &Path, depth: u32) -> Lexer {
        Lexer {
            toks: lex(text),
            i: 0,
            file: Arc::new(path.to_path_buf()),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            depth,
        }
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.i).map(|t| t.0.clone());
        self.i += 1;
        t
    }
    fn pos(&self) -> Pos {
        let line = self.toks.get(self.i).or(self.toks.last()).map_or(1, |t| t.1);
        Pos { file: self.file.clone(), line }
    }
    fn err_at(&self, at: &Pos, msg: &str) -> SyntaxError {
        SyntaxError { at: at.clone(), msg: msg.to_string() }
    }
    fn err(&self, msg: &str) -> SyntaxError {
        self.err_at(&self.pos(), msg)
    }
    fn word(&mut self, what: &str) -> Result<String, SyntaxError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            Some(t) => {
                self.i -= 1;
                Err(self.err(&format!("expected {what}, found {}", describe(&t))))
            }
            None => Err(self.err(&format!("expected {what}, found the end of the file"))),
        }
    }
    fn include_path(&self, f: &str, at: &Pos) -> Result<PathBuf, SyntaxError> {
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(
                self.err_at(at, &format!("`source {f}`: includes nested deeper than {MAX_INCLUDE_DEPTH}"))
            );
        }
        Ok(self.dir.join(f))
    }
    /// Entries up to the closing `}` (the `{` is consumed).
    fn block_body(&mut self, ty: String, name: Option<String>, at: Pos) -> Result<Block, SyntaxError> {
        let mut entries = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Close('}')) => {
                    self.next();
                    return Ok(Block { ty, name, entries, at });
                }
                Some(Tok::Comma) => {
                    self.next();
                }
                None => return Err(self.err_at(&at, &format!("block `{ty}` is not closed with `}}`"))),
                Some(Tok::Word(_)) => {
                    let kat = self.pos();
                    let mut words = Vec::new();
                    while let Some(Tok::Word(w)) = self.peek() {
                        words.push(w.clone());
                        self.next();
                    }
                    match self.next() {
                        Some(Tok::Eq) => {}
                        Some(t) => {
                            return Err(self.err_at(
                                &kat,
                                &format!("expected `=` after `{}`, found {}", words.join(" "), describe(&t)),
                            ));
                        }
                        None => return Err(self.err_at(&kat, "expected `=`, found the end of the file")),
                    }
                    let value = self.value()?;
                    entries.push(Entry { key: words.join(" "), value, at: kat });
                    match self.peek() {
                        Some(Tok::Comma) | Some(Tok::Close('}')) => {}
                        Some(t) => {
                            let t = t.clone();
                            return Err(self.err(&format!("expected `,` or `}}`, found {}", describe(&t))));
                        }
                        None => {}
                    }
                }
                Some(t) => {
                    let t = t.clone();
                    return Err(self.err(&format!("expected a key, found {}", describe(&t))));
                }
            }
        }
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        let at = self.pos();
        match self.next() {
            Some(Tok::Open('[')) => {
                let mut items = Vec::new();
                loop {
                    match self.peek() {
                        Some(Tok::Close(']')) => {
                            self.next();
                            return Ok(Value::List(expand_ranges(items)?, at));
                        }
                        Some(Tok::Comma) => {
                            self.next();
                        }
                        None => return Err(self.err_at(&at, "list is not closed with `]`")),
                        _ => items.push(self.value()?),
                    }
                }
            }
            Some(Tok::Word(w)) if w == "source" => {
                let f = self.word("a file name after `source`")?;
                let inc = self.include_path(&f, &at)?;
                let mut sub = parse_at(&inc, self.depth + 1, Some(&at))?;
                if sub.blocks.len() != 1 || !sub.instances.is_empty() {
                    return Err(self.err_at(
                        &at,
                        &format!("`source {f}` as a value: the file must hold exactly one block"),
                    ));
                }
                Ok(Value::Block(sub.blocks.remove(0)))
            }
            Some(Tok::Word(w)) => {
                if let Some(Tok::Open('{')) = self.peek() {
                    self.next();
                    return Ok(Value::Block(self.block_body(w, None, at)?));
                }
                match w.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(Value::Num(x, at)),
                    _ => Ok(Value::Word(w, at)),
                }
            }
            Some(t) => Err(self.err_at(&at, &format!("expected a value, found {}", describe(&t)))),
            None => Err(self.err_at(&at, "expected a value, found the end of the file")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Document, SyntaxError> {
        parse_str(text, Path::new("/nonexistent/t.parv"), 0)
    }

    #[test]
    fn blocks_lists_numbers_and_multiword_keys() {
        let d = p("# hi\ndisksim_disk D {\n  Read hit over. after read = 0.066, # c\n  Segment size (in blks) = 561,\n  \
                   Sched = disksim_ioqueue { Scheduling policy = 1 },\n  L = [ 1, 2.5, x ],\n}\n\
                   instantiate [ disk0 ] as D\ntopology disksim_iodriver d0 [ disksim_bus b [ ] ]\n")
        .unwrap();
        assert_eq!(d.blocks.len(), 1);
        let b = &d.blocks[0];
        assert_eq!((b.ty.as_str(), b.name.as_deref()), ("disksim_disk", Some("D")));
        assert_eq!(b.entries[0].key, "Read hit over. after read");
        assert!(matches!(b.entries[0].value, Value::Num(x, _) if x == 0.066));
        assert_eq!(b.entries[1].key, "Segment size (in blks)");
        assert_eq!(b.entries[1].at.line, 4);
        let Value::Block(q) = &b.entries[2].value else { panic!() };
        assert_eq!(q.ty, "disksim_ioqueue");
        assert_eq!(q.entries[0].key, "Scheduling policy");
        let Value::List(l, _) = &b.entries[3].value else { panic!() };
        assert_eq!(l.len(), 3);
        assert!(matches!(&l[2], Value::Word(w, _) if w == "x"));
        assert_eq!(d.instances, vec![(vec!["disk0".to_string()], "D".to_string(), d.instances[0].2.clone())]);
        let names: Vec<(&str, Option<usize>)> =
            d.topology.iter().map(|n| (n.name.as_str(), n.parent)).collect();
        assert_eq!(names, vec![("d0", None), ("b", Some(0))]);
    }

    #[test]
    fn topology_is_kept_as_a_tree() {
        let d = p("topology disksim_iodriver driver0 [
 disksim_bus bus0 [ disksim_ctlr ctlr0 [
                     disksim_bus bus1 [ disksim_disk disk0 [], disksim_disk disk1 [] ] ] ] ]
")
        .unwrap();
        let t: Vec<(&str, &str, Option<usize>)> =
            d.topology.iter().map(|n| (n.ty.as_str(), n.name.as_str(), n.parent)).collect();
        assert_eq!(
            t,
            vec![
                ("disksim_iodriver", "driver0", None),
                ("disksim_bus", "bus0", Some(0)),
                ("disksim_ctlr", "ctlr0", Some(1)),
                ("disksim_bus", "bus1", Some(2)),
                ("disksim_disk", "disk0", Some(3)),
                ("disksim_disk", "disk1", Some(3)),
            ]
        );
        let e = p("topology disksim_iodriver d0 [ disksim_bus ]\n").unwrap_err();
        assert!(e.msg.contains("topology"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = p("disksim_disk D {\n  A = 1,\n  B 2\n}\n").unwrap_err();
        assert_eq!(e.at.line, 3);
        assert!(e.to_string().starts_with("/nonexistent/t.parv:3: "), "{e}");
        assert!(e.msg.contains("expected `=` after `B 2`"), "{e}");
        let e = p("disksim_disk D {\n A = 1,\n").unwrap_err();
        assert!(e.msg.contains("not closed"), "{e}");
        let e = p("disksim_disk D {\n A = [ 1, 2\n}").unwrap_err();
        assert!(e.msg.contains("not closed") || e.msg.contains("expected"), "{e}");
        let e = p("\n\nsource missing.diskspecs\n").unwrap_err();
        assert_eq!(e.at.line, 3);
        assert!(e.msg.contains("cannot read /nonexistent/missing.diskspecs"), "{e}");
    }

    #[test]
    fn includes_resolve_relative_to_the_including_file() {
        let dir = std::env::temp_dir().join(format!("headway-parv-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("top.parv"), "source sub/d.diskspecs\n").unwrap();
        std::fs::write(dir.join("sub/d.diskspecs"), "disksim_disk D {\n Model = source m.model\n}\n")
            .unwrap();
        std::fs::write(dir.join("sub/m.model"), "dm_disk M { Number of data surfaces = 4 }").unwrap();
        std::fs::write(dir.join("loop.parv"), "source loop.parv\n").unwrap();
        let d = parse_file(&dir.join("top.parv")).unwrap();
        let Value::Block(m) = &d.blocks[0].entries[0].value else { panic!() };
        assert_eq!(m.ty, "dm_disk");
        assert!(m.at.file.ends_with("sub/m.model"));
        let e = parse_file(&dir.join("loop.parv")).unwrap_err();
        assert!(e.msg.contains("nested deeper"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
