//! `Options`: what one tfprof command shows, validated once before any file is
//! read. `Default` is the tfprof CLI's defaults (`profiler.cc`), and the CLI's
//! `--help` reads the same [`defaults`], so the two cannot drift apart.

use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::inputs::selection::EventSelection;
pub use crate::patterns::RegexList;
use crate::patterns::split_list;

/// tfprof CLI defaults, shared by [`Options::default`] and the clap flags.
pub mod defaults {
    pub const MAX_DEPTH: i64 = 10;
    pub const MIN: i64 = 0;
    pub const STEP: i64 = -1;
    pub const ORDER_BY: &str = "name";
    pub const ACCOUNT_TYPE_REGEXES: &str = ".*";
    pub const START_NAME_REGEXES: &str = ".*";
    pub const TRIM_NAME_REGEXES: &str = "";
    pub const SHOW_NAME_REGEXES: &str = ".*";
    pub const HIDE_NAME_REGEXES: &str = "";
    pub const ACCOUNT_DISPLAYED_OP_ONLY: bool = false;
    pub const SELECT: &str = "micros";
    pub const OUTPUT: &str = "stdout";
}

macro_rules! keyword_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// tfprof's `StringToBool` (`tfprof_utils.cc`): the words its prompt takes
/// for `-account_displayed_op_only`, in any case.
pub fn parse_tfprof_bool(value: &str) -> std::result::Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" => Ok(true),
        "false" | "f" | "no" | "n" | "0" => Ok(false),
        _ => Err(format!("'{value}' is not a boolean (true/t/yes/y/1 or false/f/no/n/0)")),
    }
}

keyword_enum! {
    /// Valid `-order_by` values: tfprof's `kOrderBy`, in its order, plus
    /// `depth`, which tfprof's options docs and CLI help list and its engine
    /// accepts but never branches on: it sorts by name; and rtfprof's
    /// `natural`: by name, numbers in names compared as numbers.
    OrderBy {
        Name = "name",
        Depth = "depth",
        Bytes = "bytes",
        PeakBytes = "peak_bytes",
        ResidualBytes = "residual_bytes",
        OutputBytes = "output_bytes",
        Micros = "micros",
        AcceleratorMicros = "accelerator_micros",
        CpuMicros = "cpu_micros",
        Params = "params",
        FloatOps = "float_ops",
        Occurrence = "occurrence",
        Natural = "natural",
    }
}

keyword_enum! {
    /// Valid `-select` values. Declared in alphabetical order so that a sorted
    /// set iterates the way tfprof's `std::set<string>` does.
    Shown {
        AcceleratorMicros = "accelerator_micros",
        Bytes = "bytes",
        CpuMicros = "cpu_micros",
        Device = "device",
        FloatOps = "float_ops",
        InputShapes = "input_shapes",
        Micros = "micros",
        Occurrence = "occurrence",
        OpTypes = "op_types",
        OutputBytes = "output_bytes",
        Params = "params",
        PeakBytes = "peak_bytes",
        ResidualBytes = "residual_bytes",
        TensorValue = "tensor_value",
    }
}

/// The `-select` set (sorted, duplicates removed, as tfprof stores it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Select(BTreeSet<Shown>);

impl Select {
    pub fn parse(value: &str) -> Result<Self> {
        let mut set = BTreeSet::new();
        for item in split_list(value) {
            let shown = Shown::parse(item).ok_or_else(|| {
                let valid: Vec<&str> = Shown::ALL.iter().map(|s| s.as_str()).collect();
                Error::flag("--select", format!("unknown value '{item}' (valid: {})", valid.join(", ")))
            })?;
            set.insert(shown);
        }
        Ok(Select(set))
    }

    pub fn has(&self, shown: Shown) -> bool {
        self.0.contains(&shown)
    }

    pub fn iter(&self) -> impl Iterator<Item = Shown> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<&str> = self.iter().map(Shown::as_str).collect();
        f.write_str(&items.join(","))
    }
}

/// Where a command's result goes (`-output type:outfile=PATH`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    Stdout,
    None,
    File(PathBuf),
    Timeline(PathBuf),
    Pprof(PathBuf),
    /// rtfprof's own: raw numbers per displayed node (and per step).
    Csv(PathBuf),
    Json(PathBuf),
    /// rtfprof's own: collapsed stacks for flame-graph tools.
    Folded(PathBuf),
    /// rtfprof's own: the page of `rtfprof report` or `rtfprof diff`.
    Html(PathBuf),
}

impl Output {
    /// Parses tfprof's `-output` syntax (`ParseOutput` in `tfprof_options.cc`).
    pub fn parse(value: &str) -> Result<Self> {
        const TYPES: &[&str] = &["csv", "file", "folded", "html", "json", "none", "pprof", "stdout", "timeline"];
        let bad = |msg: String| Error::flag("--output", msg);
        let (kind, rest) = match value.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (value, None),
        };
        let kind = if kind.is_empty() && rest.is_none() { "stdout" } else { kind };
        if !TYPES.contains(&kind) {
            return Err(bad(format!("unknown output type '{kind}' (valid: {})", TYPES.join(", "))));
        }
        let mut outfile: Option<String> = None;
        for piece in split_list(rest.unwrap_or("")) {
            let parts: Vec<&str> = piece.split('=').filter(|s| !s.is_empty()).collect();
            if parts.len() < 2 {
                return Err(bad(format!("'{piece}' is not key=value (e.g. -output timeline:outfile=PATH)")));
            }
            if parts[0] != "outfile" || matches!(kind, "stdout" | "none") {
                return Err(bad(format!("unrecognized option '{}' for output type {kind}", parts[0])));
            }
            outfile = Some(parts[1..].join("="));
        }
        let need = |o: Option<String>| o.map(PathBuf::from).ok_or_else(|| bad(format!("output type {kind} needs outfile (e.g. -output {kind}:outfile=PATH)")));
        Ok(match kind {
            "stdout" => Output::Stdout,
            "none" => Output::None,
            "file" => Output::File(need(outfile)?),
            "timeline" => Output::Timeline(need(outfile)?),
            "csv" => Output::Csv(need(outfile)?),
            "json" => Output::Json(need(outfile)?),
            "folded" => Output::Folded(need(outfile)?),
            "html" => Output::Html(need(outfile)?),
            _ => Output::Pprof(need(outfile)?),
        })
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Output::Stdout => f.write_str("stdout:"),
            Output::None => f.write_str("none:"),
            Output::File(p) => write!(f, "file:outfile={}", p.display()),
            Output::Timeline(p) => write!(f, "timeline:outfile={}", p.display()),
            Output::Pprof(p) => write!(f, "pprof:outfile={}", p.display()),
            Output::Csv(p) => write!(f, "csv:outfile={}", p.display()),
            Output::Json(p) => write!(f, "json:outfile={}", p.display()),
            Output::Folded(p) => write!(f, "folded:outfile={}", p.display()),
            Output::Html(p) => write!(f, "html:outfile={}", p.display()),
        }
    }
}

/// Everything one tfprof command needs to decide what to show and how.
#[derive(Clone, Debug)]
pub struct Options {
    pub max_depth: i64,
    pub min_bytes: i64,
    pub min_peak_bytes: i64,
    pub min_residual_bytes: i64,
    pub min_output_bytes: i64,
    pub min_micros: i64,
    pub min_accelerator_micros: i64,
    pub min_cpu_micros: i64,
    pub min_params: i64,
    pub min_float_ops: i64,
    pub min_occurrence: i64,
    pub step: i64,
    pub order_by: OrderBy,
    pub account_type_regexes: RegexList,
    pub start_name_regexes: RegexList,
    pub trim_name_regexes: RegexList,
    pub show_name_regexes: RegexList,
    pub hide_name_regexes: RegexList,
    pub account_displayed_op_only: bool,
    pub select: Select,
    pub output: Output,
    /// `--steps`, `--time_ms`, `--devices`, `--min_dur_us`: which of a
    /// trace's events a timeline writes (and `rtfprof cut` keeps); none by
    /// default. Not a tfprof option.
    pub events: EventSelection,
}

impl Default for Options {
    fn default() -> Self {
        use defaults::*;
        let list = |flag, v| RegexList::parse(flag, v).expect("default regexes are valid");
        Options {
            max_depth: MAX_DEPTH,
            min_bytes: MIN,
            min_peak_bytes: MIN,
            min_residual_bytes: MIN,
            min_output_bytes: MIN,
            min_micros: MIN,
            min_accelerator_micros: MIN,
            min_cpu_micros: MIN,
            min_params: MIN,
            min_float_ops: MIN,
            min_occurrence: MIN,
            step: STEP,
            order_by: OrderBy::parse(ORDER_BY).expect("default order_by is valid"),
            account_type_regexes: list("account_type_regexes", ACCOUNT_TYPE_REGEXES),
            start_name_regexes: list("start_name_regexes", START_NAME_REGEXES),
            trim_name_regexes: list("trim_name_regexes", TRIM_NAME_REGEXES),
            show_name_regexes: list("show_name_regexes", SHOW_NAME_REGEXES),
            hide_name_regexes: list("hide_name_regexes", HIDE_NAME_REGEXES),
            account_displayed_op_only: ACCOUNT_DISPLAYED_OP_ONLY,
            select: Select::parse(SELECT).expect("default select is valid"),
            output: Output::parse(OUTPUT).expect("default output is valid"),
            events: EventSelection::default(),
        }
    }
}

impl Options {
    /// The option listing tfprof prints for an empty line in interactive mode
    /// (`Options::ToString`): one `%-28s value` line per option.
    pub fn listing(&self) -> String {
        let lines: [(&str, String); 21] = [
            ("-max_depth", self.max_depth.to_string()),
            ("-min_bytes", self.min_bytes.to_string()),
            ("-min_peak_bytes", self.min_peak_bytes.to_string()),
            ("-min_residual_bytes", self.min_residual_bytes.to_string()),
            ("-min_output_bytes", self.min_output_bytes.to_string()),
            ("-min_micros", self.min_micros.to_string()),
            ("-min_accelerator_micros", self.min_accelerator_micros.to_string()),
            ("-min_cpu_micros", self.min_cpu_micros.to_string()),
            ("-min_params", self.min_params.to_string()),
            ("-min_float_ops", self.min_float_ops.to_string()),
            ("-min_occurrence", self.min_occurrence.to_string()),
            ("-step", self.step.to_string()),
            ("-order_by", self.order_by.to_string()),
            ("-account_type_regexes", self.account_type_regexes.to_string()),
            ("-start_name_regexes", self.start_name_regexes.to_string()),
            ("-trim_name_regexes", self.trim_name_regexes.to_string()),
            ("-show_name_regexes", self.show_name_regexes.to_string()),
            ("-hide_name_regexes", self.hide_name_regexes.to_string()),
            ("-account_displayed_op_only", self.account_displayed_op_only.to_string()),
            ("-select", self.select.to_string()),
            ("-output", self.output.to_string()),
        ];
        lines.iter().map(|(name, value)| format!("{name:<28}{value}\n")).collect()
    }

    /// Parses `-order_by`; unlike tfprof's one-shot CLI (which silently sorts
    /// by name), an unknown value is an error.
    pub fn parse_order_by(value: &str) -> Result<OrderBy> {
        OrderBy::parse(value).ok_or_else(|| {
            let valid: Vec<&str> = OrderBy::ALL.iter().map(|o| o.as_str()).collect();
            Error::flag("--order_by", format!("unknown value '{value}' (valid: {})", valid.join(", ")))
        })
    }
}

/// A value of a tf.profiler option dict, as a caller (the Python module)
/// hands it over: Python's `int`, `bool`, `str`, a list or tuple of `str`,
/// or anything else, kept for the error message.
#[derive(Clone, Debug, PartialEq)]
pub enum DictValue {
    Int(i64),
    Bool(bool),
    Str(String),
    List(Vec<String>),
    Other { repr: String, type_name: String },
}

impl fmt::Display for DictValue {
    /// As Python's `repr`, with the type: `'10' (str)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
        match self {
            DictValue::Int(v) => write!(f, "{v} (int)"),
            DictValue::Bool(v) => write!(f, "{} (bool)", if *v { "True" } else { "False" }),
            DictValue::Str(s) => write!(f, "{} (str)", quoted(s)),
            DictValue::List(items) => write!(f, "[{}] (list)", items.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(", ")),
            DictValue::Other { repr, type_name } => write!(f, "{repr} ({type_name})"),
        }
    }
}

/// Every view option, as a flag (`--max_depth`) and as a key of
/// tf.profiler's option dicts (`ProfileOptionBuilder(...).build()` makes
/// these; the deprecated `dump_to_file`, which `tf.profiler`'s
/// `_build_options` also reads, is a dict key only).
pub const VIEW_OPTIONS: [&str; 21] = [
    "max_depth",
    "min_bytes",
    "min_peak_bytes",
    "min_residual_bytes",
    "min_output_bytes",
    "min_micros",
    "min_accelerator_micros",
    "min_cpu_micros",
    "min_params",
    "min_float_ops",
    "min_occurrence",
    "step",
    "order_by",
    "account_type_regexes",
    "start_name_regexes",
    "trim_name_regexes",
    "show_name_regexes",
    "hide_name_regexes",
    "account_displayed_op_only",
    "select",
    "output",
];

impl Options {
    /// Options from a tf.profiler option dict, so that dicts written for
    /// `tf.compat.v1.profiler.profile` work unchanged. Values are checked as
    /// the CLI checks its flags, and errors name the key as the flag
    /// (`--select: unknown value 'x' (…)`); unknown keys are an error.
    /// Lists take Python lists of strings, kept as given (a regex may hold a
    /// comma), or one comma-separated string as on the command line. Keys
    /// left out keep `base`'s value: tf.profiler's own fallbacks are empty
    /// regex and select lists, which show nothing. A non-empty
    /// `dump_to_file` replaces `output` with a file output, as in tfprof.
    pub fn from_tf_dict(base: Options, entries: impl IntoIterator<Item = (String, DictValue)>) -> Result<Options> {
        let mut opts = base;
        let mut unknown = Vec::new();
        let mut dump_to_file = None;
        for (key, value) in entries {
            let k = key.as_str();
            let expected = |what: &str| Error::flag(format!("--{k}"), format!("expected {what}, got {value}"));
            let int = || match value {
                DictValue::Int(v) => Ok(v),
                _ => Err(expected("an integer")),
            };
            let string = || match &value {
                DictValue::Str(s) => Ok(s.clone()),
                _ => Err(expected("a string")),
            };
            let regexes = || match &value {
                DictValue::List(items) => RegexList::from_patterns(k, items.clone()),
                DictValue::Str(s) => RegexList::parse(k, s),
                _ => Err(expected("a list of strings")),
            };
            match k {
                "max_depth" => opts.max_depth = int()?,
                "min_bytes" => opts.min_bytes = int()?,
                "min_peak_bytes" => opts.min_peak_bytes = int()?,
                "min_residual_bytes" => opts.min_residual_bytes = int()?,
                "min_output_bytes" => opts.min_output_bytes = int()?,
                "min_micros" => opts.min_micros = int()?,
                "min_accelerator_micros" => opts.min_accelerator_micros = int()?,
                "min_cpu_micros" => opts.min_cpu_micros = int()?,
                "min_params" => opts.min_params = int()?,
                "min_float_ops" => opts.min_float_ops = int()?,
                "min_occurrence" => opts.min_occurrence = int()?,
                "step" => opts.step = int()?,
                "order_by" => opts.order_by = Options::parse_order_by(&string()?)?,
                "account_type_regexes" => opts.account_type_regexes = regexes()?,
                "start_name_regexes" => opts.start_name_regexes = regexes()?,
                "trim_name_regexes" => opts.trim_name_regexes = regexes()?,
                "show_name_regexes" => opts.show_name_regexes = regexes()?,
                "hide_name_regexes" => opts.hide_name_regexes = regexes()?,
                "account_displayed_op_only" => {
                    opts.account_displayed_op_only = match &value {
                        DictValue::Bool(b) => *b,
                        DictValue::Int(0) => false,
                        DictValue::Int(1) => true,
                        DictValue::Str(s) => parse_tfprof_bool(s).map_err(|message| Error::flag(format!("--{k}"), message))?,
                        _ => return Err(expected("True or False")),
                    }
                }
                "select" => {
                    opts.select = match &value {
                        DictValue::List(items) => Select::parse(&items.join(","))?,
                        DictValue::Str(s) => Select::parse(s)?,
                        _ => return Err(expected("a list of strings")),
                    }
                }
                "output" => opts.output = Output::parse(&string()?)?,
                "dump_to_file" => dump_to_file = Some(string()?),
                _ => unknown.push(format!("'{key}'")),
            }
        }
        if !unknown.is_empty() {
            let s = if unknown.len() > 1 { "s" } else { "" };
            return Err(Error::flag("options", format!("unknown key{s} {} (valid: {}, dump_to_file)", unknown.join(", "), VIEW_OPTIONS.join(", "))));
        }
        if let Some(path) = dump_to_file.filter(|p| !p.is_empty()) {
            opts.output = Output::File(PathBuf::from(path));
        }
        Ok(opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_match_whole_names_only() {
        let list = RegexList::parse("show_name_regexes", "conv.*,dense").unwrap();
        assert!(list.matches("conv1/Conv2D"));
        assert!(list.matches("dense"));
        assert!(!list.matches("dense/kernel"));
        assert!(!list.matches("x/conv1"));
        let alternation = RegexList::parse("x", "a|b").unwrap();
        assert!(!alternation.matches("ab"), "alternation must be anchored as a whole");
    }

    #[test]
    fn empty_list_pieces_are_dropped() {
        let list = RegexList::parse("hide_name_regexes", ",,a,").unwrap();
        assert_eq!(list.patterns(), ["a"]);
        assert!(RegexList::parse("hide_name_regexes", "").unwrap().is_empty());
        assert!(RegexList::parse("account_type_regexes", ".*").unwrap().is_match_all());
    }

    #[test]
    fn invalid_regex_names_the_flag() {
        let err = RegexList::parse("hide_name_regexes", "(").unwrap_err().to_string();
        assert!(err.starts_with("--hide_name_regexes: invalid regex '('"), "{err}");
    }

    #[test]
    fn select_is_a_sorted_set() {
        let s = Select::parse("micros,bytes,micros").unwrap();
        assert_eq!(s.to_string(), "bytes,micros");
        assert!(Select::parse("bogus").unwrap_err().to_string().contains("--select"));
    }

    #[test]
    fn output_syntax() {
        assert_eq!(Output::parse("").unwrap(), Output::Stdout);
        assert_eq!(Output::parse("stdout").unwrap(), Output::Stdout);
        assert_eq!(Output::parse("file:outfile=a=b").unwrap(), Output::File("a=b".into()));
        assert_eq!(Output::parse("timeline:outfile=/t").unwrap(), Output::Timeline("/t".into()));
        assert_eq!(Output::parse("folded:outfile=f.txt").unwrap(), Output::Folded("f.txt".into()));
        assert!(Output::parse("folded").is_err());
        assert!(Output::parse("file").is_err());
        assert_eq!(Output::parse("html:outfile=x").unwrap(), Output::Html("x".into()));
        assert!(Output::parse("svg:outfile=x").is_err());
        assert!(Output::parse("file:path=x").is_err());
        assert!(Output::parse("stdout:outfile=x").is_err());
    }

    #[test]
    fn listing_matches_tfprofs_empty_line_output() {
        let listing = Options::default().listing();
        assert!(listing.starts_with("-max_depth                  10\n-min_bytes                  0\n"));
        assert!(listing.contains("\n-trim_name_regexes          \n"));
        assert!(listing.ends_with("-select                     micros\n-output                     stdout:\n"));
        assert_eq!(listing.lines().count(), 21);
    }

    #[test]
    fn tf_option_dicts() {
        let dict = |pairs: Vec<(&str, DictValue)>| Options::from_tf_dict(Options::default(), pairs.into_iter().map(|(k, v)| (k.to_owned(), v)));
        let list = |items: &[&str]| DictValue::List(items.iter().map(|s| s.to_string()).collect());
        let o = dict(vec![
            ("max_depth", DictValue::Int(3)),
            ("select", list(&["micros", "bytes"])),
            ("account_type_regexes", list(&["a{1,2}"])),
            ("hide_name_regexes", DictValue::Str("x,y".into())),
            ("account_displayed_op_only", DictValue::Bool(true)),
        ])
        .unwrap();
        assert_eq!((o.max_depth, o.select.to_string(), o.account_displayed_op_only), (3, "bytes,micros".into(), true));
        assert_eq!(o.account_type_regexes.patterns(), ["a{1,2}"], "list items are not split at commas");
        assert_eq!(o.hide_name_regexes.patterns(), ["x", "y"]);
        assert_eq!(o.step, -1, "keys left out keep their defaults");
        let err = |pairs| dict(pairs).unwrap_err().to_string();
        assert_eq!(
            err(vec![("max_depht", DictValue::Int(1)), ("x", DictValue::Int(1))]).split(" (valid").next().unwrap(),
            "options: unknown keys 'max_depht', 'x'"
        );
        assert_eq!(err(vec![("max_depth", DictValue::Str("10".into()))]), "--max_depth: expected an integer, got '10' (str)");
        assert!(err(vec![("select", list(&["bogus"]))]).starts_with("--select: unknown value 'bogus'"));
        assert!(err(vec![("order_by", DictValue::Str("x".into()))]).starts_with("--order_by: unknown value 'x'"));
        let dumped = dict(vec![("output", DictValue::Str("none".into())), ("dump_to_file", DictValue::Str("f.txt".into()))]).unwrap();
        assert_eq!(dumped.output, Output::File("f.txt".into()));
    }

    #[test]
    fn defaults_are_tfprofs() {
        let o = Options::default();
        assert_eq!(o.max_depth, 10);
        assert_eq!(o.step, -1);
        assert_eq!(o.order_by, OrderBy::Name);
        assert_eq!(o.select.to_string(), "micros");
        assert!(o.account_type_regexes.is_match_all());
        assert!(o.trim_name_regexes.is_empty());
        assert_eq!(o.output, Output::Stdout);
    }
}
