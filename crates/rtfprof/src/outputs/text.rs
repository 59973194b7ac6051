//! What every text table of `steps`, `ranks`, `hlo` and `kernels` shares:
//! column layout and the escaping of names that come from the trace.

/// Appends `table` (its first row the header): columns two spaces apart,
/// each as wide as its widest cell, left-aligned where `left(column)` says
/// and right-aligned elsewhere; a blank line before row `gap` (the
/// statistics under a step table; `None` for none). Trailing spaces are
/// trimmed.
pub fn push_table(out: &mut String, table: &[Vec<String>], left: impl Fn(usize) -> bool, gap: Option<usize>) {
    let Some(first) = table.first() else { return };
    let widths: Vec<usize> = (0..first.len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let lefts: Vec<bool> = (0..first.len()).map(left).collect();
    for (i, r) in table.iter().enumerate() {
        if Some(i) == gap {
            out.push('\n');
        }
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            if lefts[c] {
                line.push_str(&format!("{cell:<w$}", w = widths[c]));
            } else {
                line.push_str(&format!("{cell:>w$}", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// A name from the trace in one text cell: control characters are escaped
/// so a row stays one line.
pub fn escape(name: &str) -> String {
    name.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
pub fn csv_field(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) { format!("\"{}\"", name.replace('"', "\"\"")) } else { name.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_the_gap_separates_the_statistics() {
        let table: Vec<Vec<String>> = [["step", "time"], ["a", "1"], ["bbb", "22"], ["mean", "11.5"]].iter().map(|r| r.map(String::from).to_vec()).collect();
        let mut out = String::new();
        push_table(&mut out, &table, |c| c == 0, Some(3));
        assert_eq!(out, "step  time\na        1\nbbb     22\n\nmean  11.5\n");
    }

    #[test]
    fn names_stay_on_one_line() {
        assert_eq!(escape("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(csv_field("x,\"y\""), "\"x,\"\"y\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
