//! Reading tfprof's own text output (a saved `scope`/`graph`/`code` view)
//! back into a tree of numbers, so saved outputs can be diffed.
//!
//! The legend line names the columns; each node line is `<indent><name>
//! (<items>)` with two spaces per level, where an item is `own/total` (or
//! `--/total`), and the `params` column may be preceded by a shape item.
//! Numbers come back from tfprof's units (`B`/`KB`/`MB`, `us`/`ms`/`sec`,
//! `k`/`m`/`b`), so they carry the precision tfprof printed.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

/// One node of a saved view: its name, the totals of its columns by legend
/// name (e.g. `requested bytes`), and its children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TextNode {
    pub name: String,
    pub totals: BTreeMap<String, i64>,
    pub children: Vec<TextNode>,
}

/// Parses a number as tfprof prints it: `1.28KB`, `4.54ms`, `10.44k`, `7`.
pub fn parse_quantity(text: &str) -> Option<i64> {
    const UNITS: [(&str, f64); 10] =
        [("MB", 1e6), ("KB", 1e3), ("GB", 1e9), ("B", 1.0), ("sec", 1e6), ("ms", 1e3), ("us", 1.0), ("k", 1e3), ("m", 1e6), ("b", 1e9)];
    let text = text.trim();
    let (number, scale) = UNITS.iter().find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, *scale))).unwrap_or((text, 1.0));
    let value: f64 = number.trim().parse().ok()?;
    value.is_finite().then(|| (value * scale).round() as i64)
}

/// Parses a whole tfprof text output; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<TextNode> {
    const KIND: &str = "tfprof text";
    let bad = |line: usize, msg: &str| Error::input(KIND, path, format!("line {line}: {msg}"));
    let mut lines = text.lines().enumerate().skip_while(|(_, l)| !l.starts_with("node name | "));
    let (_, legend) = lines.next().ok_or_else(|| Error::input(KIND, path, "no 'node name | …' legend line (not tfprof output?)"))?;
    let columns: Vec<String> = legend["node name | ".len()..].split(" | ").filter(|c| !c.is_empty()).map(str::to_owned).collect();
    let has_params = columns.iter().any(|c| c == "# parameters");

    // Stack of (depth, node) while reading; children are attached on pop.
    let mut stack: Vec<(usize, TextNode)> = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let depth = (line.len() - line.trim_start_matches(' ').len()) / 2;
        let body = line.trim_start_matches(' ');
        let (name, items) = body.strip_suffix(')').and_then(|b| b.rsplit_once(" (")).ok_or_else(|| bad(i + 1, "expected 'name (values)'"))?;
        let mut items: Vec<&str> = if items.is_empty() { Vec::new() } else { items.split(", ").collect() };
        if has_params && items.first().is_some_and(|first| !first.contains('/')) {
            items.remove(0); // the variable's shape
        }
        let mut totals = BTreeMap::new();
        for (column, item) in columns.iter().zip(&items) {
            // Occurrence items are `runs/total_runs|1/total_definitions`.
            let item = item.split('|').next().unwrap_or(item);
            let total = item.rsplit('/').next().unwrap_or(item);
            let number = total.split(' ').next().unwrap_or(total);
            if let Some(value) = parse_quantity(number) {
                totals.insert(column.clone(), value);
            }
        }
        let node = TextNode { name: name.to_owned(), totals, children: Vec::new() };
        if stack.is_empty() && depth != 0 {
            return Err(bad(i + 1, "the first node line must be the root"));
        }
        while stack.last().is_some_and(|(d, _)| *d >= depth) && stack.len() > 1 {
            let (_, done) = stack.pop().expect("non-empty");
            stack.last_mut().expect("has parent").1.children.push(done);
        }
        if !stack.is_empty() && depth == 0 {
            return Err(bad(i + 1, "a second root"));
        }
        stack.push((depth, node));
    }
    while stack.len() > 1 {
        let (_, done) = stack.pop().expect("non-empty");
        stack.last_mut().expect("has parent").1.children.push(done);
    }
    stack.pop().map(|(_, root)| root).ok_or_else(|| Error::input(KIND, path, "no node lines after the legend"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_in_tfprof_units() {
        assert_eq!(parse_quantity("1.28KB"), Some(1280));
        assert_eq!(parse_quantity("2844.73MB"), Some(2_844_730_000));
        assert_eq!(parse_quantity("0B"), Some(0));
        assert_eq!(parse_quantity("4.54ms"), Some(4540));
        assert_eq!(parse_quantity("1.37sec"), Some(1_370_000));
        assert_eq!(parse_quantity("13us"), Some(13));
        assert_eq!(parse_quantity("10.44k"), Some(10_440));
        assert_eq!(parse_quantity("451"), Some(451));
        assert_eq!(parse_quantity("--"), None);
    }

    #[test]
    fn tree_from_indentation() {
        let text = "Profile:\nnode name | # parameters | requested bytes\n_TFProfRoot (--/451 params, --/2.56KB)\n  DW (3x3x3x6, 162/162 params, 1.28KB/1.28KB)\n    DW/Assign (0/0 params, 0B/0B)\n  x (gradient) (0/289 params, 0B/1.28KB)\n";
        let root = parse(text, Path::new("t")).unwrap();
        assert_eq!(root.name, "_TFProfRoot");
        assert_eq!(root.totals["requested bytes"], 2560);
        assert_eq!(root.children.len(), 2);
        assert_eq!(root.children[0].totals["# parameters"], 162);
        assert_eq!(root.children[0].children[0].name, "DW/Assign");
        assert_eq!(root.children[1].name, "x (gradient)");
        assert!(parse("no legend", Path::new("t")).is_err());
    }
}
