//! `EventList.table()` of PyTorch 2.11 (`profiler_util._build_table`),
//! byte for byte, for [`key_averages`](mod@crate::key_averages) rows.

use crate::key_averages::{DeviceType, KeyAverage};

/// `table()`'s arguments; `Default` is torch's defaults.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TableOptions {
    /// A row attribute to sort by, descending (`cuda`/`xpu` in it mean
    /// `device`, as in torch); `None` keeps the rows' order.
    pub sort_by: Option<String>,
    /// At most this many rows; `None` for all (torch's `-1`).
    pub row_limit: Option<usize>,
    pub max_name_column_width: Option<usize>,
    pub max_shapes_column_width: Option<usize>,
    pub header: Option<String>,
    pub top_level_events_only: bool,
    /// `"s"`, `"ms"` or `"us"` for every time; `None` picks each time's unit.
    pub time_unit: Option<String>,
    /// The profile's `profile_memory` (the memory columns).
    pub profile_memory: bool,
    /// The profiler's `use_device` (`"cuda"`), or `None` for a CPU-only
    /// profile.
    pub use_device: Option<String>,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            sort_by: None,
            row_limit: Some(100),
            max_name_column_width: Some(55),
            max_shapes_column_width: Some(80),
            header: None,
            top_level_events_only: false,
            time_unit: None,
            profile_memory: false,
            use_device: None,
        }
    }
}

impl TableOptions {
    /// torch's defaults for a profile read from `trace`: its
    /// `profile_memory`, and `use_device = "cuda"` where it has device events.
    pub fn for_trace(trace: &crate::inputs::pytorch::Trace) -> Self {
        TableOptions {
            profile_memory: trace.profile_memory,
            use_device: trace.events.iter().any(|e| e.category.on_device()).then(|| "cuda".to_owned()),
            ..TableOptions::default()
        }
    }
}

/// The value of `attribute` (as `sort_by` names it) of a row.
pub fn attribute(row: &KeyAverage, attribute: &str) -> Option<f64> {
    let name = attribute.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device");
    Some(match name.as_str() {
        "cpu_time_total" => row.cpu_time_total,
        "self_cpu_time_total" => row.self_cpu_time_total,
        "device_time_total" => row.device_time_total,
        "self_device_time_total" => row.self_device_time_total,
        "cpu_time" => row.cpu_time(),
        "device_time" => row.device_time(),
        "cpu_memory_usage" => row.cpu_memory_usage as f64,
        "self_cpu_memory_usage" => row.self_cpu_memory_usage as f64,
        "device_memory_usage" => row.device_memory_usage as f64,
        "self_device_memory_usage" => row.self_device_memory_usage as f64,
        "count" => row.count as f64,
        _ => return None,
    })
}

/// The attributes `sort_by` may name.
pub const SORT_KEYS: [&str; 11] = [
    "cpu_time_total",
    "self_cpu_time_total",
    "device_time_total",
    "self_device_time_total",
    "cpu_time",
    "device_time",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "device_memory_usage",
    "self_device_memory_usage",
    "count",
];

/// The table torch prints for `rows`; an error for a `sort_by` that is no
/// row attribute, or device times without a `use_device` (torch raises on
/// both).
pub fn table(rows: &[KeyAverage], options: &TableOptions) -> Result<String, String> {
    if rows.is_empty() {
        return Ok(String::new());
    }
    let has_device_time = rows.iter().any(|r| r.self_device_time_total > 0.0);
    let has_device_mem = rows.iter().any(|r| r.self_device_memory_usage > 0);
    let use_device = options.use_device.as_deref().filter(|d| !d.is_empty());
    if use_device.is_none() && has_device_time {
        return Err("use_device is None, but there is device performance data.".into());
    }
    // A row's shapes are a list: empty is `[]`; ungrouped rows have "".
    let has_input_shapes = rows.iter().any(|r| !r.input_shapes.is_empty() && r.input_shapes != "[]");

    let mut sorted: Vec<&KeyAverage> = rows.iter().collect();
    if let Some(sort_by) = &options.sort_by {
        if attribute(&rows[0], sort_by).is_none() {
            return Err(format!("'FunctionEventAvg' object has no attribute '{sort_by}' (sort_by takes {})", SORT_KEYS.join(", ")));
        }
        // Python's sorted(reverse=True) keeps equal rows in their order.
        sorted.sort_by(|a, b| {
            let (a, b) = (attribute(a, sort_by).unwrap_or(0.0), attribute(b, sort_by).unwrap_or(0.0));
            b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal)
        });
    }

    let chars = |s: &str| s.chars().count();
    let mut name_width = sorted.iter().map(|r| chars(&r.key)).max().unwrap_or(0) + 4;
    if let Some(max) = options.max_name_column_width {
        name_width = name_width.min(max);
    }
    let mut shapes_width = sorted.iter().map(|r| chars(&r.input_shapes)).max().unwrap_or(0) + 4;
    if let Some(max) = options.max_shapes_column_width {
        shapes_width = shapes_width.min(max);
    }
    const WIDTH: usize = 12;

    let device_name = use_device.map_or("None".to_owned(), |d| d.to_uppercase());
    let mut headers: Vec<String> = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"].map(String::from).to_vec();
    if has_device_time {
        headers.extend([format!("Self {device_name}"), format!("Self {device_name} %"), format!("{device_name} total"), format!("{device_name} time avg")]);
    }
    let device_mem_columns = options.profile_memory && use_device.is_some() && has_device_mem;
    if options.profile_memory {
        headers.extend(["CPU Mem".to_owned(), "Self CPU Mem".to_owned()]);
        if device_mem_columns {
            headers.extend([format!("{device_name} Mem"), format!("Self {device_name} Mem")]);
        }
    }
    headers.push("# of Calls".to_owned());
    let mut widths = vec![name_width];
    widths.resize(headers.len(), WIDTH);
    if has_input_shapes {
        headers.push("Input Shapes".to_owned());
        widths.push(shapes_width);
    }
    let line_length = widths.iter().map(|w| w + 2).sum::<usize>() - 2;
    let mut header_sep = String::new();
    for &w in &widths {
        header_sep.push_str(&"-".repeat(w));
        header_sep.push_str("  ");
    }
    let format_row = |cells: &[String]| {
        let mut line = String::new();
        for (cell, &w) in cells.iter().zip(&widths) {
            line.push_str(&format!("{cell:>w$}  "));
        }
        line
    };

    // Summed in the printed order, as torch does.
    let mut sum_self_cpu = 0.0;
    let mut sum_self_device = 0.0;
    for r in &sorted {
        sum_self_cpu += r.self_cpu_time_total;
        if r.device_type != DeviceType::Cpu && !r.is_user_annotation {
            sum_self_device += r.self_device_time_total;
        }
    }

    let unit = options.time_unit.as_deref();
    let time = |us: f64| override_time_unit(us, unit);
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    if let Some(header) = &options.header {
        line(&"=".repeat(line_length));
        line(header);
    }
    if options.top_level_events_only {
        line(&"=".repeat(line_length));
        line("This report only display top-level ops statistics");
    }
    line(&header_sep);
    line(&format_row(&headers));
    line(&header_sep);

    let mut shown = 0;
    for r in &sorted {
        if Some(shown) == options.row_limit {
            break;
        }
        if options.top_level_events_only && !r.top_level {
            continue;
        }
        shown += 1;
        let mut name = r.key.clone();
        if let Some(max) = options.max_name_column_width
            && chars(&name) >= max.saturating_sub(3)
        {
            name = name.chars().take(max.saturating_sub(3)).collect::<String>() + "...";
        }
        let mut cells = vec![
            name,
            time_share(r.self_cpu_time_total, sum_self_cpu),
            time(r.self_cpu_time_total),
            // torch writes the int 0 for an async row's share
            if r.is_async { "0".to_owned() } else { time_share(r.cpu_time_total, sum_self_cpu) },
            time(r.cpu_time_total),
            time(r.cpu_time()),
        ];
        if has_device_time {
            cells.extend([
                time(r.self_device_time_total),
                time_share(r.self_device_time_total, sum_self_device),
                time(r.device_time_total),
                time(r.device_time()),
            ]);
        }
        if options.profile_memory {
            cells.extend([memory(r.cpu_memory_usage), memory(r.self_cpu_memory_usage)]);
            if device_mem_columns {
                cells.extend([memory(r.device_memory_usage), memory(r.self_device_memory_usage)]);
            }
        }
        cells.push(r.count.to_string());
        if has_input_shapes {
            cells.push(r.input_shapes.chars().take(shapes_width).collect());
        }
        line(&format_row(&cells));
    }
    line(&header_sep);
    line(&format!("Self CPU time total: {}", time(sum_self_cpu)));
    if has_device_time {
        line(&format!("Self {device_name} time total: {}", time(sum_self_device)));
    }
    Ok(out)
}

/// `_format_time`: µs, ms or s with 3 decimals.
pub fn format_time(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3}ms", us / 1e3)
    } else {
        format!("{us:.3}us")
    }
}

fn override_time_unit(us: f64, unit: Option<&str>) -> String {
    match unit {
        Some("s") => format!("{:.3}s", us / (1000.0 * 1000.0)),
        Some("ms") => format!("{:.3}ms", us / 1000.0),
        Some("us") => format!("{us:.3}us"),
        _ => format_time(us),
    }
}

/// `_format_time_share`.
fn time_share(us: f64, total: f64) -> String {
    if total == 0.0 { "NaN".to_owned() } else { format!("{:.2}%", us * 100.0 / total) }
}

/// `_format_memory`.
pub fn format_memory(bytes: i64) -> String {
    const KB: i64 = 1024;
    const MB: i64 = 1024 * KB;
    const GB: i64 = 1024 * MB;
    let b = bytes as f64;
    if bytes.unsigned_abs() >= GB as u64 {
        format!("{:.2} GB", b / GB as f64)
    } else if bytes.unsigned_abs() >= MB as u64 {
        format!("{:.2} MB", b / MB as f64)
    } else if bytes.unsigned_abs() >= KB as u64 {
        format!("{:.2} KB", b / KB as f64)
    } else {
        format!("{bytes} B")
    }
}

fn memory(bytes: i64) -> String {
    format_memory(bytes)
}
