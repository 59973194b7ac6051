//! Robustness table: the real `rtfprof` binary against bad and extreme inputs.
//!
//! Each row of [`CASES`] names one input file, the flag it is given as, its
//! bytes (inline, generated, a cut or real fixture, or a regression input
//! under `testdata/bad/`), any other arguments, and the expected outcome. A
//! case runs `rtfprof <view> <flag>=<file> <extra…> --output=file:outfile=OUT`
//! in a fresh temporary directory and checks that
//! - nothing panicked or overflowed its stack (no "panicked", no backtrace,
//!   no "overflow" on stderr, no death by signal);
//! - an error exits 2 for flag/usage errors and 1 for input errors
//!   (`Error::exit_code`), prints exactly one stderr line that starts with
//!   `rtfprof: ` and names the flag and file, and leaves no `OUT` behind;
//! - a success exits 0 and writes `OUT` (or, for `--output` rows, whatever
//!   the row says).
//!
//! Fuzz crashers live in `testdata/bad/<target>.<what>` (see `fuzz/README.md`)
//! and have rows here too. `broken_pipe_exits_quietly` covers `rtfprof … | head -1`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common;

use common::{rtfprof, testdata};

/// Where the bad file's bytes come from.
enum Src {
    /// Literal bytes (text-format protos are written as text).
    Bytes(&'static [u8]),
    /// Bytes made by a function (too big or too repetitive to write out).
    Gen(fn() -> Vec<u8>),
    /// A real fixture under `testdata/`, as is.
    Fixture(&'static str),
    /// The first half of a real fixture.
    FirstHalf(&'static str),
    /// A committed regression input under `testdata/bad/`.
    Bad(&'static str),
    /// A real fixture, gzipped.
    Gzipped(&'static str),
    /// The first half of a gzipped real fixture.
    GzippedFirstHalf(&'static str),
    /// A checkpoint prefix whose `.index` is the first half of the ckpt
    /// fixture's (its data shard intact).
    CheckpointIndexFirstHalf,
    /// A checkpoint prefix whose `.index` is a 0-byte file.
    CheckpointIndexEmpty,
    /// A path that does not exist.
    Missing,
    /// A directory.
    Dir,
}

/// What must happen.
enum Expect {
    /// Exit 0; stdout must contain every listed string, and must not contain
    /// the `absent` ones.
    Ok { contains: &'static [&'static str], absent: &'static [&'static str] },
    /// Exit `code`, one stderr line naming the flag (and the file, for input
    /// errors) and containing `says`.
    Err { code: i32, says: &'static str },
}

struct Case {
    name: &'static str,
    view: &'static str,
    /// The flag the bad file is given as; `None` when the row is about flags only.
    flag: Option<&'static str>,
    src: Src,
    /// Other arguments; `@x` is the path of `testdata/x`.
    extra: &'static [&'static str],
    expect: Expect,
}

const fn ok() -> Expect {
    Expect::Ok { contains: &[], absent: &[] }
}

const MLP_GRAPH: &str = "--graph_path=@mlp/graph.pb";

const CASES: &[Case] = &[
    // Three MatMuls of i64::MAX us each: the op row's exec micros and the
    // input-shape block's per-signature sum wrap as tfprof's int64 does.
    Case {
        name: "op_input_shapes_exec_overflow",
        view: "op",
        flag: Some("--run_meta_path"),
        src: Src::Bad("run_meta.exec_micros_overflow.pbtxt"),
        extra: &["--graph_path=@bad/graph.three_matmuls.pbtxt", "--select=micros,input_shapes"],
        expect: Expect::Ok { contains: &["MatMul"], absent: &[] },
    },
    // --- files that cannot be read -------------------------------------------
    Case {
        name: "graph_missing",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Missing,
        extra: &[],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case { name: "graph_is_dir", view: "scope", flag: Some("--graph_path"), src: Src::Dir, extra: &[], expect: Expect::Err { code: 1, says: "directory" } },
    Case {
        name: "run_meta_missing",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Missing,
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case {
        name: "run_meta_is_dir",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Dir,
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "directory" },
    },
    Case {
        name: "op_log_missing",
        view: "code",
        flag: Some("--op_log_path"),
        src: Src::Missing,
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case {
        name: "profile_missing",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Missing,
        extra: &[],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case { name: "profile_is_dir", view: "op", flag: Some("--profile_path"), src: Src::Dir, extra: &[], expect: Expect::Err { code: 1, says: "directory" } },
    // --- truncated binaries --------------------------------------------------
    Case {
        name: "graph_truncated",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::FirstHalf("mlp/graph.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a GraphDef" },
    },
    Case {
        name: "graph_text_truncated",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::FirstHalf("mlp/graph.pbtxt"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a GraphDef" },
    },
    Case {
        name: "run_meta_truncated",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::FirstHalf("mlp/run_meta_0"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "op_log_truncated",
        view: "code",
        flag: Some("--op_log_path"),
        src: Src::FirstHalf("mlp/tfprof_log"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a OpLogProto" },
    },
    Case {
        name: "profile_truncated",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::FirstHalf("mlp/profile"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a ProfileProto" },
    },
    // --- the wrong kind of file ----------------------------------------------
    Case {
        name: "run_meta_as_graph",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "the file looks like a RunMetadata: use --run_meta_path" },
    },
    Case {
        name: "profile_as_graph",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Fixture("mlp/profile"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "the file looks like a ProfileProto: use --profile_path" },
    },
    Case {
        name: "graph_as_run_meta",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "the file looks like a GraphDef: use --graph_path" },
    },
    Case {
        name: "graph_text_as_run_meta",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/graph.pbtxt"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "the file looks like a GraphDef in text format: use --graph_path" },
    },
    Case {
        name: "graph_as_op_log",
        view: "code",
        flag: Some("--op_log_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "looks like a GraphDef: use --graph_path" },
    },
    Case {
        name: "graph_as_profile",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a GraphDef: use --graph_path" },
    },
    Case {
        name: "run_meta_as_profile",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a RunMetadata: use --run_meta_path" },
    },
    // --- random bytes ----------------------------------------------------------
    Case {
        name: "graph_random",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(random_bytes),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a GraphDef" },
    },
    Case {
        name: "run_meta_random",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Gen(random_bytes),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "op_log_random",
        view: "code",
        flag: Some("--op_log_path"),
        src: Src::Gen(random_bytes),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a OpLogProto" },
    },
    Case {
        name: "profile_random",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Gen(random_bytes),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a ProfileProto" },
    },
    // --- empty files -----------------------------------------------------------
    // A 0-byte file would decode as an empty message (a valid empty graph, op
    // log or profile); every input flag refuses it instead.
    Case {
        name: "graph_empty",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bytes(b""),
        extra: &[],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "graph_empty_with_run_meta",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bytes(b""),
        extra: &["--run_meta_path=@mlp/run_meta_0"],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "run_meta_empty",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Bytes(b""),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "op_log_empty",
        view: "scope",
        flag: Some("--op_log_path"),
        src: Src::Bytes(b""),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "op_log_empty_code_view",
        view: "code",
        flag: Some("--op_log_path"),
        src: Src::Bytes(b""),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "profile_empty",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Bytes(b""),
        extra: &[],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    // --- declared lengths and nesting ------------------------------------------
    // Field 1 (node) declares 1000 bytes but 3 follow.
    Case {
        name: "graph_length_past_end",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bytes(b"\x0a\xe8\x07abc"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a GraphDef" },
    },
    // Field 1 declares 2^63 - 1 bytes: must fail without trying to allocate it.
    Case {
        name: "graph_length_huge",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bytes(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7fabc"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a GraphDef" },
    },
    Case {
        name: "run_meta_length_huge",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Bytes(b"\x0a\xff\xff\xff\xff\x0f\x0a\x01"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "graph_text_nested_too_deep",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| nested_text(10_000)),
        extra: &[],
        expect: Expect::Err { code: 1, says: "nested more than 100 deep" },
    },
    // Over 1 MiB, text graphs parse in parallel chunks: the limit holds there too.
    Case {
        name: "graph_text_large_nested_too_deep",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| [many_nodes(40_000), nested_text(10_000)].concat()),
        extra: &[],
        expect: Expect::Err { code: 1, says: "nested more than 100 deep" },
    },
    Case {
        name: "graph_text_large_ok",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| [many_nodes(40_000), nested_text(32)].concat()),
        extra: &[],
        expect: Expect::Ok { contains: &["  a (", "  n39999 ("], absent: &[] },
    },
    Case {
        name: "graph_text_nested_at_limit",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| nested_text(32)),
        extra: &[],
        expect: Expect::Ok { contains: &["  a ("], absent: &[] },
    },
    // The nesting is inside an attribute: decoded (and refused) where
    // attributes are read; a view that reads none skips it unparsed.
    Case {
        name: "graph_binary_nested_too_deep",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| nested_binary(10_000)),
        extra: &["--estimate_flops"],
        expect: Expect::Err { code: 1, says: "recursion limit reached" },
    },
    Case {
        name: "graph_binary_nested_too_deep_advise",
        view: "advise",
        flag: Some("--graph_path"),
        src: Src::Gen(|| nested_binary(10_000)),
        extra: &[],
        expect: Expect::Err { code: 1, says: "recursion limit reached" },
    },
    Case {
        name: "graph_binary_nested_too_deep_unread",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| nested_binary(10_000)),
        extra: &[],
        expect: Expect::Ok { contains: &["  a ("], absent: &[] },
    },
    Case {
        name: "graph_binary_nested_below_limit",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(|| nested_binary(31)),
        extra: &[],
        expect: Expect::Ok { contains: &["  a ("], absent: &[] },
    },
    // --- absurd values -----------------------------------------------------------
    // params overflow i64: products and sums wrap as tfprof's int64 does on
    // every real machine: 2^32 * (2^32 + 1) wraps to 2^32, and max/a + max/b
    // = (2^63 - 1) + (3 * (2^63 - 1) wrapped) wraps to -4.
    Case {
        name: "graph_absurd_shapes",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bytes(ABSURD_SHAPES),
        extra: &["--select=params"],
        expect: Expect::Ok {
            contains: &["  wrap (4294967296x4294967297, 4.29b/4.29b params)", "  max (0/-4 params)", "_TFProfRoot (--/4.29b params)"],
            absent: &[],
        },
    },
    Case {
        name: "graph_absurd_shapes_op",
        view: "op",
        flag: Some("--graph_path"),
        src: Src::Bytes(ABSURD_SHAPES),
        extra: &["--select=params", "--order_by=params"],
        expect: ok(),
    },
    Case {
        name: "run_meta_absurd_values",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Bytes(ABSURD_RUN_META),
        extra: &[
            "--graph_path=@mlp/graph.pbtxt",
            "--select=micros,bytes,peak_bytes,residual_bytes,output_bytes,accelerator_micros,cpu_micros,occurrence",
            "--order_by=bytes",
        ],
        expect: ok(),
    },
    Case {
        name: "run_meta_absurd_values_op",
        view: "op",
        flag: Some("--run_meta_path"),
        src: Src::Bytes(ABSURD_RUN_META),
        extra: &["--graph_path=@mlp/graph.pbtxt", "--select=micros,bytes,peak_bytes,output_bytes,occurrence,input_shapes", "--order_by=micros"],
        expect: ok(),
    },
    // --estimate_flops on shapes whose float ops do not fit an int64: no
    // estimate instead of a multiply overflow.
    Case {
        name: "graph_flops_overflow",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bad("graph.flops_overflow.pbtxt"),
        extra: &["--estimate_flops", "--select=float_ops"],
        expect: Expect::Ok { contains: &["  mm (0/0 flops)", "  l2 (0/0 flops)"], absent: &[] },
    },
    // One node with 100k inputs: input_shapes must stay linear (it was
    // quadratic: 18 s in release).
    Case {
        name: "graph_many_inputs",
        view: "op",
        flag: Some("--graph_path"),
        src: Src::Gen(many_inputs),
        extra: &["--select=input_shapes,occurrence"],
        expect: Expect::Ok { contains: &["99999:unknown"], absent: &[] },
    },
    Case {
        name: "graph_many_inputs_scope",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gen(many_inputs),
        extra: &["--select=input_shapes"],
        expect: Expect::Ok { contains: &["99999:unknown"], absent: &[] },
    },
    // --- graph and run_meta disagree ------------------------------------------------
    // A name defined twice keeps its first definition.
    Case {
        name: "graph_duplicate_names",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Bytes(b"node { name: \"a\" op: \"First\" }\nnode { name: \"a\" op: \"Second\" }\n"),
        extra: &["--select=op_types"],
        expect: Expect::Ok { contains: &["  a (First)"], absent: &["Second"] },
    },
    // A node only the run knows shows up (its op is its name); a graph node
    // that never ran shows with zero time.
    Case {
        name: "run_meta_unknown_node",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Bytes(RUN_META_GHOST),
        extra: &["--graph_path=@bad/graph.two_nodes.pbtxt"],
        expect: Expect::Ok {
            contains: &[
                "run graph coverage: 0.33",
                "  ghost (5us/5us, 0us/0us, 5us/5us)",
                "  idle (0us/0us, 0us/0us, 0us/0us)",
                "  ran (7us/7us, 0us/0us, 7us/7us)",
            ],
            absent: &[],
        },
    },
    // --- steps ---------------------------------------------------------------------
    Case {
        name: "zero_steps_default",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[],
        expect: Expect::Ok { contains: &["_TFProfRoot (--/0us"], absent: &["run graph coverage"] },
    },
    Case {
        name: "zero_steps_step0",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &["--step=0"],
        expect: Expect::Err { code: 1, says: "--step=0: step not found" },
    },
    Case {
        name: "step_not_recorded",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH, "--step=7"],
        expect: Expect::Err { code: 1, says: "--step=7: step not found (available steps: 0)" },
    },
    Case {
        name: "profile_step_not_recorded",
        view: "op",
        flag: Some("--profile_path"),
        src: Src::Fixture("mlp/profile"),
        extra: &["--step=9"],
        expect: Expect::Err { code: 1, says: "--step=9: step not found" },
    },
    // --- flags -------------------------------------------------------------------------
    Case {
        name: "invalid_regex",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--hide_name_regexes=a,(b"],
        expect: Expect::Err { code: 2, says: "--hide_name_regexes: invalid regex '(b'" },
    },
    Case {
        name: "invalid_start_regex",
        view: "graph",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--start_name_regexes=[z-a]"],
        expect: Expect::Err { code: 2, says: "--start_name_regexes: invalid regex" },
    },
    Case {
        name: "unknown_select",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--select=micros,bogus"],
        expect: Expect::Err { code: 2, says: "--select: unknown value 'bogus'" },
    },
    Case {
        name: "unknown_order_by",
        view: "op",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--order_by=size"],
        expect: Expect::Err { code: 2, says: "--order_by: unknown value 'size'" },
    },
    Case {
        name: "bad_output_type",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=svg:outfile=x"],
        expect: Expect::Err { code: 2, says: "--output: unknown output type 'svg'" },
    },
    Case {
        name: "html_output_of_a_view",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=html:outfile=x"],
        expect: Expect::Err { code: 2, says: "--output: html output is written by 'rtfprof report' and 'rtfprof diff'" },
    },
    Case {
        name: "report_without_html",
        view: "report",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=file:outfile=x"],
        expect: Expect::Err { code: 2, says: "--output: report writes one HTML file" },
    },
    Case {
        name: "bad_output_no_outfile",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=file"],
        expect: Expect::Err { code: 2, says: "--output: output type file needs outfile" },
    },
    Case {
        name: "bad_output_key",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=file:path=x"],
        expect: Expect::Err { code: 2, says: "--output: unrecognized option 'path'" },
    },
    // The output directory does not exist: nothing is written, one line.
    Case {
        name: "output_dir_missing",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=file:outfile=no/such/dir/out.txt"],
        expect: Expect::Err { code: 1, says: "--output no/such/dir/out.txt" },
    },
    Case {
        name: "profile_with_graph",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Fixture("mlp/profile"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 2, says: "--profile_path: is set: do not set --graph_path" },
    },
    Case {
        name: "profile_with_run_meta",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Fixture("mlp/profile"),
        extra: &["--run_meta_path=@mlp/run_meta_0"],
        expect: Expect::Err { code: 2, says: "--profile_path: is set" },
    },
    // --- checkpoints -------------------------------------------------------------------
    Case {
        name: "checkpoint_missing",
        view: "scope",
        flag: Some("--checkpoint_path"),
        src: Src::Missing,
        extra: &["--graph_path=@ckpt/graph.pbtxt"],
        expect: Expect::Err { code: 1, says: "cannot read checkpoint index" },
    },
    // --- XPlane traces --------------------------------------------------------------
    // A file given as another kind gets the flag that reads it; gzip is read.
    Case {
        name: "xplane_as_profile",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Fixture("xplane/jax_gpu_mlp/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like an XPlane trace (*.xplane.pb): use --xplane_path" },
    },
    Case {
        name: "events_as_graph",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Fixture("events/tutorial/events.out.tfevents.1700000000.tutorial"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a TensorBoard event file: use --events_path" },
    },
    Case {
        name: "op_log_as_profile",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::Fixture("mlp/tfprof_log"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like an OpLogProto (tfprof_log): use --op_log_path" },
    },
    Case {
        name: "chrome_trace_as_xplane",
        view: "op",
        flag: Some("--xplane_path"),
        src: Src::Bytes(b" {\"schemaVersion\": 1, \"traceEvents\": []}"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a PyTorch (Chrome JSON) trace: use --pytorch_path" },
    },
    Case {
        name: "gzipped_xplane_as_graph",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gzipped("xplane/jax_gpu_mlp/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a gzipped XPlane trace (*.xplane.pb): use --xplane_path" },
    },
    Case {
        name: "gzipped_graph",
        view: "scope",
        flag: Some("--graph_path"),
        src: Src::Gzipped("mlp/graph.pb"),
        extra: &["--run_meta_path=@mlp/run_meta_0"],
        expect: Expect::Ok { contains: &["_TFProfRoot"], absent: &[] },
    },
    Case {
        name: "gzipped_profile",
        view: "op",
        flag: Some("--profile_path"),
        src: Src::Gzipped("mlp/profile"),
        extra: &[],
        expect: Expect::Ok { contains: &["MatMul"], absent: &[] },
    },
    Case {
        name: "gzipped_xplane",
        view: "op",
        flag: Some("--xplane_path"),
        src: Src::Gzipped("xplane/jax_gpu_mlp/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Ok { contains: &["dot_general"], absent: &[] },
    },
    Case {
        name: "gzipped_steps",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Gzipped("xplane/jax_gpu_mlp/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: ok(),
    },
    Case {
        name: "gzipped_truncated",
        view: "scope",
        flag: Some("--profile_path"),
        src: Src::GzippedFirstHalf("mlp/profile"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "is gzipped but cannot be decompressed" },
    },
    Case {
        name: "pytorch_ok",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &[],
        expect: Expect::Ok { contains: &["forward"], absent: &[] },
    },
    Case {
        name: "pytorch_truncated",
        view: "op",
        flag: Some("--pytorch_path"),
        src: Src::FirstHalf("pytorch/shapes_merges.pt.trace.json"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a Kineto trace" },
    },
    Case {
        name: "pytorch_gzip_truncated",
        view: "op",
        flag: Some("--pytorch_path"),
        src: Src::GzippedFirstHalf("pytorch/shapes_merges.pt.trace.json"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "--pytorch_path" },
    },
    Case {
        name: "pytorch_empty",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Bytes(b""),
        extra: &[],
        expect: Expect::Err { code: 1, says: "--pytorch_path" },
    },
    Case {
        name: "xplane_as_pytorch",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("xplane/jax_gpu_mlp/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "use --xplane_path" },
    },
    Case {
        name: "pytorch_missing",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Missing,
        extra: &[],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case {
        name: "pytorch_windows_truncated",
        view: "steps",
        flag: Some("--pytorch_path"),
        src: Src::FirstHalf("pytorch/h200_tx.steps2-3.pt.trace.json.gz"),
        extra: &["--window_steps=1"],
        expect: Expect::Err { code: 1, says: "--pytorch_path" },
    },
    Case {
        name: "pytorch_windows_gzip_truncated",
        view: "steps",
        flag: Some("--pytorch_path"),
        src: Src::GzippedFirstHalf("pytorch/shapes_merges.pt.trace.json"),
        extra: &["--window_mb=1"],
        expect: Expect::Err { code: 1, says: "--pytorch_path" },
    },
    Case {
        name: "window_steps_elsewhere",
        view: "advise",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--window_steps=1"],
        expect: Expect::Err {
            code: 2,
            says: "--window_steps: applies to 'rtfprof steps', 'kernels', 'ranks', 'scope', 'op', 'code', 'memory', 'partial' and 'report'",
        },
    },
    Case {
        name: "pytorch_windows_truncated_memory",
        view: "memory",
        flag: Some("--pytorch_path"),
        src: Src::FirstHalf("pytorch/h200_tx.steps2-3.pt.trace.json.gz"),
        extra: &["--window_steps=1"],
        expect: Expect::Err { code: 1, says: "--pytorch_path" },
    },
    Case {
        name: "pytorch_windows_truncated_view",
        view: "op",
        flag: Some("--pytorch_path"),
        src: Src::FirstHalf("pytorch/h200_tx.steps2-3.pt.trace.json.gz"),
        extra: &["--window_steps=1"],
        expect: Expect::Err { code: 1, says: "--pytorch_path" },
    },
    Case {
        name: "window_mb_not_a_number",
        view: "steps",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--window_mb=lots"],
        expect: Expect::Err { code: 2, says: "--window_mb" },
    },
    Case {
        name: "pytorch_dir_without_traces",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Dir,
        extra: &[],
        expect: Expect::Err { code: 1, says: "holds no *.pt.trace.json" },
    },
    Case {
        name: "pytorch_with_graph",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 2, says: "--pytorch_path: is set" },
    },
    Case {
        name: "xplane_run_meta",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a RunMetadata: use --run_meta_path" },
    },
    Case {
        name: "xplane_graph",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a GraphDef: use --graph_path" },
    },
    Case {
        name: "xplane_graph_text",
        view: "op",
        flag: Some("--xplane_path"),
        src: Src::Fixture("mlp/graph.pbtxt"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "looks like a GraphDef in text format: use --graph_path" },
    },
    Case {
        name: "xplane_truncated",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::FirstHalf("xplane/keras_fit/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an XSpace" },
    },
    Case {
        name: "xplane_no_planes",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Bytes(b"\x12\x03err"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "no planes" },
    },
    Case {
        name: "xplane_empty",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Bytes(b""),
        extra: &[],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case { name: "xplane_missing", view: "scope", flag: Some("--xplane_path"), src: Src::Missing, extra: &[], expect: Expect::Err { code: 1, says: "" } },
    Case {
        name: "xplane_dir_without_traces",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Dir,
        extra: &[],
        expect: Expect::Err { code: 1, says: "holds no *.xplane.pb trace" },
    },
    Case {
        name: "xplane_unknown_run",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/tf_loop"),
        extra: &["--xplane_run=nope"],
        expect: Expect::Err { code: 2, says: "--xplane_run" },
    },
    Case {
        name: "xplane_graph_view_without_graph",
        view: "graph",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/tf_loop"),
        extra: &[],
        expect: Expect::Err { code: 2, says: "--graph_path" },
    },
    Case {
        name: "xplane_code_view",
        view: "code",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/tf_loop"),
        extra: &[],
        expect: Expect::Err { code: 2, says: "no Python call stacks" },
    },
    Case {
        name: "xplane_with_run_meta",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/tf_loop"),
        extra: &["--run_meta_path=@mlp/run_meta_0"],
        expect: Expect::Err { code: 2, says: "--xplane_path" },
    },
    Case {
        name: "xplane_ok",
        view: "op",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/jax_jit"),
        extra: &[],
        expect: Expect::Ok { contains: &["dot_general"], absent: &[] },
    },
    Case {
        name: "checkpoint_index_empty",
        view: "scope",
        flag: Some("--checkpoint_path"),
        src: Src::CheckpointIndexEmpty,
        extra: &["--graph_path=@ckpt/graph.pbtxt"],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "diff_left_text_empty",
        view: "diff",
        flag: Some("--left_text"),
        src: Src::Bytes(b""),
        extra: &["--right_text=@golden/cnn.scope.diff_side.out"],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "checkpoint_index_truncated",
        view: "scope",
        flag: Some("--checkpoint_path"),
        src: Src::CheckpointIndexFirstHalf,
        extra: &["--graph_path=@ckpt/graph.pbtxt", "--select=params,tensor_value"],
        expect: Expect::Err { code: 1, says: "checkpoint index" },
    },
    // --- event files (--events_path) ------------------------------------------------------
    Case {
        name: "events_missing",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Missing,
        extra: &[],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case {
        name: "events_empty",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Bytes(b""),
        extra: &[],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    Case {
        name: "events_empty_dir",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Dir,
        extra: &[],
        expect: Expect::Err { code: 1, says: "no event files" },
    },
    Case {
        name: "graph_as_events",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an event file (no TFRecord at byte 0" },
    },
    Case {
        name: "events_random",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Gen(random_bytes),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an event file" },
    },
    Case {
        name: "events_too_short",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Bytes(b"abc"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an event file (3 bytes, no complete TFRecord)" },
    },
    // TFRecords, but not of Events (a tf.data file, say).
    Case {
        name: "events_other_records",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Gen(|| [tfrecord(b"\x0a\x03abc"), tfrecord(b"")].concat()),
        extra: &[],
        expect: Expect::Err { code: 1, says: "its first record is not an Event with a file_version" },
    },
    Case {
        name: "events_bad_checksum",
        view: "op",
        flag: Some("--events_path"),
        src: Src::Gen(|| flipped(TUTORIAL_EVENTS, 60_000)),
        extra: &[],
        expect: Expect::Err { code: 1, says: "record at byte 34295: data checksum mismatch" },
    },
    // A log still being written: the complete records are read.
    Case {
        name: "events_partial_record",
        view: "op",
        flag: Some("--events_path"),
        src: Src::Gen(|| cut(TUTORIAL_EVENTS, 50)),
        extra: &[],
        expect: Expect::Ok { contains: &["step 0: \"step0\"", "step 1: \"step2\"", "Conv2D"], absent: &[] },
    },
    // Cut before its first run metadata is complete: a graph, no steps.
    Case {
        name: "events_first_half",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::FirstHalf(TUTORIAL_EVENTS),
        extra: &[],
        expect: Expect::Err { code: 1, says: "no step stats: it holds no run metadata" },
    },
    Case {
        name: "events_tf2_trace",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture("events/tf2_trace/events.out.tfevents.1700000000.trace.v2"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "no step stats: its 2 run metadata hold graphs only" },
    },
    Case {
        name: "events_runs",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture("events"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "holds 3 runs: summary_run_metadata, tf2_trace, tutorial; pick one with --events_run NAME" },
    },
    Case {
        name: "events_run_unknown",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture("events"),
        extra: &["--events_run=train"],
        expect: Expect::Err { code: 1, says: "has no run 'train'" },
    },
    Case {
        name: "events_run_of_file",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture(TUTORIAL_EVENTS),
        extra: &["--events_run=train"],
        expect: Expect::Err { code: 2, says: "--events_run: picks run 'train' of a log directory" },
    },
    Case {
        name: "events_tags_none_match",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture("events/tutorial"),
        extra: &["--events_tags=step1"],
        expect: Expect::Err { code: 1, says: "no run metadata tag matches --events_tags 'step1' (its tags: \"step0\", \"step2\", \"step4\")" },
    },
    Case {
        name: "events_tags_invalid",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &["--events_path=@events/tutorial", "--events_tags=step(0"],
        expect: Expect::Err { code: 2, says: "--events_tags: invalid regex 'step(0'" },
    },
    Case {
        name: "events_tags_without_events",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--events_tags=step0"],
        expect: Expect::Err { code: 2, says: "--events_tags: needs --events_path" },
    },
    Case {
        name: "events_with_graph",
        view: "scope",
        flag: Some("--events_path"),
        src: Src::Fixture("events/tutorial"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 2, says: "--events_path: is set: do not set --graph_path" },
    },
    // --- folded output -----------------------------------------------------------
    Case {
        name: "folded_ok",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH, "--select=bytes", "--output=folded:outfile=out.txt"],
        expect: ok(),
    },
    Case {
        name: "folded_two_metrics",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--select=micros,bytes", "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--select: folded output needs exactly one" },
    },
    Case {
        name: "folded_count_metric",
        view: "code",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--select=params", "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--select: folded output needs a time or bytes metric, not 'params'" },
    },
    Case {
        name: "folded_op_view",
        view: "op",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--output: folded output is only available for the scope and code views" },
    },
    Case {
        name: "folded_graph_view",
        view: "graph",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "not graph" },
    },
    Case {
        name: "folded_no_outfile",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=folded"],
        expect: Expect::Err { code: 2, says: "--output: output type folded needs outfile" },
    },
    Case {
        name: "folded_dir_missing",
        view: "scope",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=folded:outfile=no/such/dir/out.txt"],
        expect: Expect::Err { code: 1, says: "--output no/such/dir/out.txt" },
    },
    Case {
        name: "folded_bad_run_meta",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::FirstHalf("mlp/run_meta_0"),
        extra: &[MLP_GRAPH, "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "diff_folded_ok",
        view: "diff",
        flag: Some("--left_profile_path"),
        src: Src::Fixture("cnn_b8/profile"),
        extra: &["--right_profile_path=@cnn/profile", "--output=folded:outfile=out.txt"],
        expect: ok(),
    },
    Case {
        name: "diff_csv_output",
        view: "diff",
        flag: Some("--left_profile_path"),
        src: Src::Fixture("cnn_b8/profile"),
        extra: &["--right_profile_path=@cnn/profile", "--output=csv:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--output: diff writes text" },
    },
    Case {
        name: "diff_partial_truncated",
        view: "diff",
        flag: Some("--left_partial_path"),
        src: Src::FirstHalf("pytorch/shapes_merges.pt.trace.json"),
        extra: &["--right_profile_path=@cnn/profile"],
        expect: Expect::Err { code: 1, says: "partial" },
    },
    Case {
        name: "diff_folded_bad_side",
        view: "diff",
        flag: Some("--profile_path"),
        src: Src::FirstHalf("cnn_b8/profile"),
        extra: &["--left_step=0", "--right_step=1", "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 1, says: "not a ProfileProto" },
    },
    // --- rtfprof memory ------------------------------------------------------------------
    Case {
        name: "memory_ok",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH],
        expect: Expect::Ok { contains: &["step 0, allocator cpu: peak"], absent: &[] },
    },
    Case {
        name: "memory_json_ok",
        view: "memory",
        flag: Some("--profile_path"),
        src: Src::Fixture("gpu_synth/profile"),
        extra: &["--output=json:outfile=out.txt"],
        expect: ok(),
    },
    Case {
        name: "memory_no_records",
        view: "memory",
        flag: Some("--graph_path"),
        src: Src::Fixture("mlp/graph.pb"),
        extra: &[],
        expect: Expect::Ok { contains: &["No allocation records"], absent: &[] },
    },
    Case {
        name: "memory_run_meta_truncated",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::FirstHalf("mlp/run_meta_0"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "memory_run_meta_random",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::Gen(random_bytes),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "memory_run_meta_empty",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::Bytes(b""),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "is empty" },
    },
    // Allocation records of the wrong wire type: read (and refused) only here.
    Case {
        name: "memory_run_meta_bad_record",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::Gen(run_meta_bad_record),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "memory_run_meta_bad_record_unread",
        view: "scope",
        flag: Some("--run_meta_path"),
        src: Src::Gen(run_meta_bad_record),
        extra: &[MLP_GRAPH],
        expect: ok(),
    },
    Case {
        name: "memory_profile_truncated",
        view: "memory",
        flag: Some("--profile_path"),
        src: Src::FirstHalf("gpu_synth/profile"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a ProfileProto" },
    },
    Case {
        name: "memory_profile_random",
        view: "memory",
        flag: Some("--profile_path"),
        src: Src::Gen(random_bytes),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a ProfileProto" },
    },
    Case {
        name: "memory_xplane_truncated",
        view: "memory",
        flag: Some("--xplane_path"),
        src: Src::FirstHalf("xplane/keras_fit/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an XSpace" },
    },
    Case {
        name: "memory_step_missing",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH, "--step=9"],
        expect: Expect::Err { code: 1, says: "--step=9: step not found (available steps: 0)" },
    },
    Case {
        name: "memory_timeline_output",
        view: "memory",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=timeline:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--output: memory writes text" },
    },
    Case {
        name: "memory_folded_output",
        view: "memory",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=folded:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--output: memory writes text" },
    },
    Case {
        name: "memory_json_dir_missing",
        view: "memory",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH, "--output=json:outfile=no/such/dir/m.json"],
        expect: Expect::Err { code: 1, says: "--output no/such/dir/m.json" },
    },
    Case {
        name: "memory_events_ok",
        view: "memory",
        flag: Some("--events_path"),
        src: Src::Fixture("events/tutorial"),
        extra: &[],
        expect: Expect::Ok { contains: &["step 2, allocator cpu: peak"], absent: &[] },
    },
    Case {
        name: "memory_events_bad_checksum",
        view: "memory",
        flag: Some("--events_path"),
        src: Src::Gen(|| flipped(TUTORIAL_EVENTS, 60_000)),
        extra: &[],
        expect: Expect::Err { code: 1, says: "data checksum mismatch" },
    },
    Case {
        name: "memory_bad_regex",
        view: "memory",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--hide_name_regexes=(x"],
        expect: Expect::Err { code: 2, says: "--hide_name_regexes: invalid regex" },
    },
    // --- rtfprof steps -------------------------------------------------------------------
    Case {
        name: "steps_xplane_ok",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/tf_loop"),
        extra: &[],
        expect: Expect::Ok { contains: &["train 0", "Host compute", "CV"], absent: &[] },
    },
    Case {
        name: "steps_json_ok",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/jax_jit"),
        extra: &["--output=json:outfile=out.txt"],
        expect: ok(),
    },
    Case {
        name: "steps_csv_ok",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/two_hosts"),
        extra: &["--output=csv:outfile=out.txt"],
        expect: ok(),
    },
    Case {
        name: "steps_no_markers",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/keras_fit"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "the trace has no steps" },
    },
    Case {
        name: "steps_tf_loop_groups",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/while_loop"),
        extra: &["--output=json:outfile=out.txt"],
        expect: Expect::Err { code: 1, says: "the trace has no steps" },
    },
    Case {
        name: "steps_gpu_no_groups",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/gpu_synth"),
        extra: &["--output=csv:outfile=out.txt"],
        expect: Expect::Err { code: 1, says: "no device events are grouped" },
    },
    Case {
        name: "steps_xplane_truncated",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::FirstHalf("xplane/tf_loop/plugins/profile/run0/host0.xplane.pb"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an XSpace" },
    },
    Case {
        name: "steps_xplane_random",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Gen(random_bytes),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not an XSpace" },
    },
    Case {
        name: "steps_timeline_output",
        view: "steps",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH, "--output=timeline:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--output: steps writes text" },
    },
    Case {
        name: "steps_json_dir_missing",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/tf_loop"),
        extra: &["--output=json:outfile=no/such/dir/s.json"],
        expect: Expect::Err { code: 1, says: "--output no/such/dir/s.json" },
    },
    Case {
        name: "steps_run_meta_ok",
        view: "steps",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH],
        expect: Expect::Ok { contains: &["from run metadata", "Host compute"], absent: &[] },
    },
    Case {
        name: "steps_events_ok",
        view: "steps",
        flag: Some("--events_path"),
        src: Src::Fixture("events/tutorial"),
        extra: &["--output=json:outfile=out.txt"],
        expect: ok(),
    },
    Case {
        name: "steps_run_meta_truncated",
        view: "steps",
        flag: Some("--run_meta_path"),
        src: Src::FirstHalf("mlp/run_meta_0"),
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "not a RunMetadata" },
    },
    Case {
        name: "steps_graph_only",
        view: "steps",
        flag: None,
        src: Src::Missing,
        extra: &[MLP_GRAPH],
        expect: Expect::Err { code: 1, says: "no step of the profile has op executions" },
    },
    // --- fuzz crashers: testdata/bad/<target>.* rows go here (see fuzz/README.md)
    Case {
        name: "pytorch_gzip_corrupt_checksum",
        view: "steps",
        flag: Some("--pytorch_path"),
        src: Src::Bad("pytorch.corrupt_gzip_checksum"),
        extra: &[],
        expect: Expect::Err { code: 1, says: "not a valid gzip stream" },
    },
    // --- rtfprof cut ------------------------------------------------------------
    Case {
        name: "cut_truncated",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::FirstHalf("pytorch/shapes_merges.pt.trace.json"),
        extra: &["--steps=1", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "not a Kineto trace" },
    },
    Case {
        name: "cut_missing",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Missing,
        extra: &["--steps=1", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case {
        name: "cut_is_dir",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Dir,
        extra: &["--steps=1", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "directory" },
    },
    Case {
        name: "cut_bad_steps",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=5..x", "-o=out.txt"],
        expect: Expect::Err { code: 2, says: "--steps" },
    },
    Case {
        name: "cut_no_such_step",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=9", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "no ProfilerStep#9: its ProfilerSteps are #2 to #3" },
    },
    Case {
        name: "cut_bad_time",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--time_ms=5..1", "-o=out.txt"],
        expect: Expect::Err { code: 2, says: "--time_ms" },
    },
    Case {
        name: "cut_steps_and_time",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=2", "--time_ms=0..1", "-o=out.txt"],
        expect: Expect::Err { code: 2, says: "not both" },
    },
    Case {
        name: "cut_time_after_the_end",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--time_ms=1e9..2e9", "-o=out.txt"],
        expect: Expect::Err { code: 2, says: "starts after the trace ends" },
    },
    Case {
        name: "cut_bad_devices",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=2", "--devices=0,gpu1", "-o=out.txt"],
        expect: Expect::Err { code: 2, says: "--devices" },
    },
    Case {
        name: "cut_bad_min_dur",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=2", "--min_dur_us=-1", "-o=out.txt"],
        expect: Expect::Err { code: 2, says: "--min_dur_us" },
    },
    Case {
        name: "cut_a_time",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--time_ms=0..1", "--min_dur_us=1", "-o=out.txt"],
        expect: Expect::Ok { contains: &["0.000..1.000 ms of the trace (", "\"traceEvents\""], absent: &[] },
    },
    Case {
        name: "cut_a_step",
        view: "cut",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=2", "-o=out.txt"],
        expect: Expect::Ok { contains: &["ProfilerStep#2 (", "\"traceEvents\""], absent: &["\"ProfilerStep#3\""] },
    },
    // --- rtfprof cut of XPlane traces ------------------------------------------
    Case {
        name: "xplane_cut_truncated",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::FirstHalf(TF_LOOP_TRACE),
        extra: &["--steps=1", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "not an XSpace trace (a length runs past the end of the file" },
    },
    Case {
        name: "xplane_cut_missing",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Missing,
        extra: &["--steps=1", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "No such file" },
    },
    Case {
        name: "xplane_cut_wrong_kind",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=1", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "not an XSpace trace" },
    },
    Case {
        name: "xplane_cut_no_such_step",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=9", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "no step 9: its steps are train 0 to train 3" },
    },
    Case {
        name: "xplane_cut_no_steps",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/gpu_synth/plugins/profile/run0/host0.xplane.pb"),
        extra: &["--steps=0", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "the trace has no steps" },
    },
    Case {
        name: "xplane_cut_several_hosts",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Fixture("xplane/two_hosts/plugins/profile/run0"),
        extra: &["--steps=0", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "holds 2 hosts' traces (host0, host1): cut reads one host's file" },
    },
    Case {
        name: "xplane_cut_empty_dir",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Dir,
        extra: &["--steps=0", "-o=out.txt"],
        expect: Expect::Err { code: 1, says: "holds no *.xplane.pb trace" },
    },
    Case {
        name: "xplane_cut_gzipped_output",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=1", "-o=out.xplane.pb.gz"],
        expect: Expect::Err { code: 2, says: "-o: an XPlane cut (--xplane_path) is written plain" },
    },
    Case {
        name: "xplane_cut_two_steps",
        view: "cut",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=1..2", "-o=out.txt"],
        expect: Expect::Ok { contains: &["steps train 1 to train 2 ("], absent: &[] },
    },
    // --- selection flags of a timeline ----------------------------------------
    Case {
        name: "timeline_steps_of_a_step",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=1..2", "--output=timeline:outfile=out.json"],
        expect: Expect::Ok { contains: &["Timeline file is written to"], absent: &[] },
    },
    Case {
        name: "timeline_no_such_step",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=9", "--output=timeline:outfile=out.json"],
        expect: Expect::Err { code: 1, says: "no step 9: its steps are train 0 to train 3" },
    },
    Case {
        name: "timeline_bad_steps",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=2..1", "--output=timeline:outfile=out.json"],
        expect: Expect::Err { code: 2, says: "--steps: '2..1' is empty" },
    },
    Case {
        name: "timeline_steps_and_step",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--steps=1", "--step=1", "--output=timeline:outfile=out.json"],
        expect: Expect::Err { code: 2, says: "--steps: selects from the whole trace: give it or --step N, not both" },
    },
    Case {
        name: "timeline_bad_min_dur",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--min_dur_us=five", "--output=timeline:outfile=out.json"],
        expect: Expect::Err { code: 2, says: "--min_dur_us: 'five' is not a duration" },
    },
    Case {
        name: "timeline_steps_of_a_pytorch_trace",
        view: "scope",
        flag: Some("--pytorch_path"),
        src: Src::Fixture("pytorch/schedule.pt.trace.json.gz"),
        extra: &["--steps=2", "--output=timeline:outfile=out.json"],
        expect: Expect::Err { code: 2, says: "--steps: selects a trace's events, and a PyTorch trace's timeline is its scope or code tree" },
    },
    Case {
        name: "timeline_devices_of_run_metadata",
        view: "graph",
        flag: Some("--run_meta_path"),
        src: Src::Fixture("mlp/run_meta_0"),
        extra: &[MLP_GRAPH, "--devices=0", "--output=timeline:outfile=out.json"],
        expect: Expect::Err { code: 2, says: "--devices: selects the events of a TF2 or JAX trace's timeline" },
    },
    Case {
        name: "selection_of_a_text_view",
        view: "scope",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--time_ms=0..1"],
        expect: Expect::Err { code: 2, says: "--time_ms: selects the events of a trace's timeline (--output timeline:outfile=PATH) or of a cut" },
    },
    Case {
        name: "selection_of_steps",
        view: "steps",
        flag: Some("--xplane_path"),
        src: Src::Fixture(TF_LOOP_TRACE),
        extra: &["--min_dur_us=5", "--output=stdout"],
        expect: Expect::Err { code: 2, says: "--min_dur_us: selects the events of a trace's timeline" },
    },
    Case {
        name: "selection_of_check",
        view: "check",
        flag: Some("--left_xplane_path"),
        src: Src::Fixture("check/base_a"),
        extra: &["--right_xplane_path=@check/base_b", "--steps=1"],
        expect: Expect::Err { code: 2, says: "--steps: selects the events of a trace's timeline" },
    },
    // --- rtfprof check: every error exits 2 (1 is a regression) ------------------
    Case {
        name: "check_baseline_missing",
        view: "check",
        flag: Some("--left_xplane_path"),
        src: Src::Missing,
        extra: &["--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "No such file" },
    },
    Case {
        name: "check_new_truncated",
        view: "check",
        flag: Some("--right_xplane_path"),
        src: Src::FirstHalf("check/base_b/plugins/profile/run0/host0.xplane.pb"),
        extra: &["--left_xplane_path=@check/base_a"],
        expect: Expect::Err { code: 2, says: "not an XSpace trace" },
    },
    Case {
        name: "check_wrong_kind",
        view: "check",
        flag: Some("--left_pytorch_path"),
        src: Src::Fixture("check/base_a/plugins/profile/run0/host0.xplane.pb"),
        extra: &["--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "--left_pytorch_path" },
    },
    Case {
        name: "check_bad_max_regression",
        view: "check",
        flag: None,
        src: Src::Missing,
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b", "--max_regression=5 percent"],
        expect: Expect::Err { code: 2, says: "--max_regression: '5 percent' is not a relative amount" },
    },
    Case {
        name: "check_bad_output",
        view: "check",
        flag: None,
        src: Src::Missing,
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b", "--output=xml:outfile=out.txt"],
        expect: Expect::Err { code: 2, says: "--output: unknown output type 'xml' for check" },
    },
    Case {
        name: "check_rules_missing",
        view: "check",
        flag: Some("--rules"),
        src: Src::Missing,
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "No such file" },
    },
    Case {
        name: "check_rules_is_dir",
        view: "check",
        flag: Some("--rules"),
        src: Src::Dir,
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "directory" },
    },
    Case {
        name: "check_rules_binary",
        view: "check",
        flag: Some("--rules"),
        src: Src::Gen(random_bytes),
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "not UTF-8 text" },
    },
    Case {
        name: "check_rules_unknown_table",
        view: "check",
        flag: Some("--rules"),
        src: Src::Bytes(b"[[budgets]]\nmetric = 'step_time'\nmax = '1ms'\n"),
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "line 1: unknown field `budgets`" },
    },
    Case {
        name: "check_rules_bad_fraction",
        view: "check",
        flag: Some("--rules"),
        src: Src::Bytes(b"[defaults]\nmax_op_regression = '-5%'\n"),
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "line 2: [defaults] max_op_regression: '-5%' is not a relative amount" },
    },
    Case {
        name: "check_rules_wrong_type",
        view: "check",
        flag: Some("--rules"),
        src: Src::Bytes(b"[[budget]]\nmetric = 'step_time'\nmax = 20\n"),
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Err { code: 2, says: "line 3: invalid type: integer `20`, expected a string" },
    },
    Case {
        name: "check_rules_empty_passes",
        view: "check",
        flag: Some("--rules"),
        src: Src::Bytes(b"# nothing\n"),
        extra: &["--left_xplane_path=@check/base_a", "--right_xplane_path=@check/base_b"],
        expect: Expect::Ok { contains: &["PASS: no regression", "Rules file"], absent: &["FAIL"] },
    },
    Case {
        name: "check_identical_runs",
        view: "check",
        flag: Some("--left_xplane_path"),
        src: Src::Fixture("check/base_a"),
        extra: &["--right_xplane_path=@check/base_b"],
        expect: Expect::Ok { contains: &["PASS: no regression"], absent: &["FAIL"] },
    },
];

/// Rows that fail today because of code outside issue 7's files (inputs and
/// stats); each says where. `pending_fixes` runs them when asked
/// (`cargo test -- --ignored`); move a row to [`CASES`] once it passes.
const PENDING: &[Case] = &[];

/// A TF CPU trace of four `train` steps (XProf's `train 0` to `train 3`).
const TF_LOOP_TRACE: &str = "xplane/tf_loop/plugins/profile/run0/host0.xplane.pb";

/// The tutorial log's first event file (graph, meta graph, steps 0 and 2).
const TUTORIAL_EVENTS: &str = "events/tutorial/events.out.tfevents.1700000000.tutorial";

/// A fixture with one bit of byte `at` flipped.
fn flipped(fixture: &str, at: usize) -> Vec<u8> {
    let mut bytes = std::fs::read(testdata().join(fixture)).expect("fixture");
    bytes[at] ^= 1;
    bytes
}

/// A fixture without its last `drop` bytes.
fn cut(fixture: &str, drop: usize) -> Vec<u8> {
    let bytes = std::fs::read(testdata().join(fixture)).expect("fixture");
    bytes[..bytes.len() - drop].to_vec()
}

/// One TFRecord (length, masked CRC32C of it, data, masked CRC32C of it).
fn tfrecord(data: &[u8]) -> Vec<u8> {
    let mask = |crc: u32| crc.rotate_right(15).wrapping_add(0xa282_ead8);
    let len = (data.len() as u64).to_le_bytes();
    [&len[..], &mask(crc32c::crc32c(&len)).to_le_bytes(), data, &mask(crc32c::crc32c(data)).to_le_bytes()].concat()
}

/// 4 KiB of fixed pseudo-random bytes (xorshift), the same on every run.
fn random_bytes() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A RunMetadata whose one allocator entry has an allocation record of
/// the wrong wire type (a varint where a message belongs).
fn run_meta_bad_record() -> Vec<u8> {
    fn ld(field: u8, payload: &[u8]) -> Vec<u8> {
        [vec![field << 3 | 2, payload.len() as u8], payload.to_vec()].concat()
    }
    let memory = [ld(1, b"cpu"), vec![6 << 3, 5]].concat(); // allocation_records: varint 5
    let stat = [ld(1, b"MatMul"), vec![2 << 3, 100], ld(6, &memory)].concat(); // all_start_micros 100
    let device = [ld(1, b"/job:localhost/replica:0/task:0/device:CPU:0"), ld(2, &stat)].concat();
    ld(1, &ld(1, &device))
}

/// A node with 100,000 inputs, each a different producer on slot 1.
fn many_inputs() -> Vec<u8> {
    let inputs: String = (0..100_000).map(|i| format!(" input: \"x{i}:1\"")).collect();
    format!("node {{ name: \"a\" op: \"Add\"{inputs} }}\n").into_bytes()
}

/// `count` plain nodes `n0`, `n1`, … in text format (about 35 bytes each).
fn many_nodes(count: usize) -> Vec<u8> {
    (0..count).map(|i| format!("node {{ name: \"n{i}\" op: \"NoOp\" }}\n")).collect::<String>().into_bytes()
}

/// A text GraphDef whose one node has an attr of `levels` nested functions:
/// three `{` per level plus three around them.
fn nested_text(levels: usize) -> Vec<u8> {
    let open = "func { name: \"f\" attr { key: \"k\" value { ".repeat(levels);
    let close = "} } } ".repeat(levels);
    format!("node {{ name: \"a\" op: \"b\" attr {{ key: \"k\" value {{ {open}{close}}} }} }}\n").into_bytes()
}

/// The binary form of [`nested_text`].
fn nested_binary(levels: usize) -> Vec<u8> {
    fn ld(field: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![field << 3 | 2];
        let mut n = payload.len();
        while n >= 0x80 {
            out.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(payload);
        out
    }
    let entry = |value: &[u8]| [ld(1, b"k"), ld(2, value)].concat();
    let mut attr_value = ld(2, b"x"); // AttrValue.s
    for _ in 0..levels {
        let name_attr_list = [ld(1, b"f"), ld(2, &entry(&attr_value))].concat();
        attr_value = ld(10, &name_attr_list); // AttrValue.func
    }
    let node = [ld(1, b"a"), ld(2, b"b"), ld(5, &entry(&attr_value))].concat();
    ld(1, &node)
}

const ABSURD_SHAPES: &[u8] = br#"
node { name: "wrap" op: "VariableV2" attr { key: "shape" value { shape { dim { size: 4294967296 } dim { size: 4294967297 } } } } }
node { name: "max/a" op: "VariableV2" attr { key: "shape" value { shape { dim { size: 9223372036854775807 } } } } }
node { name: "max/b" op: "VariableV2" attr { key: "shape" value { shape { dim { size: 9223372036854775807 } dim { size: 3 } } } } }
node { name: "neg" op: "VariableV2" attr { key: "shape" value { shape { dim { size: -1 } dim { size: 5 } } } } }
node { name: "shapes" op: "Identity" input: "max/a:99999999999999999999" input: "^wrap" attr { key: "_output_shapes" value { list { shape { dim { size: 9223372036854775807 } } } } } }
"#;

const RUN_META_GHOST: &[u8] = br#"step_stats { dev_stats { device: "/job:localhost/replica:0/task:0/device:CPU:0"
  node_stats { node_name: "ran" all_start_micros: 100 op_end_rel_micros: 7 }
  node_stats { node_name: "ghost" all_start_micros: 100 op_end_rel_micros: 5 } } }
"#;

const ABSURD_RUN_META: &[u8] = br#"step_stats {
  dev_stats { device: "/job:localhost/replica:0/task:0/device:CPU:0"
    node_stats { node_name: "MatMul" all_start_micros: 9223372036854775807 op_end_rel_micros: 9223372036854775807
      memory { allocator_name: "GPU_0_bfc" total_bytes: 9223372036854775807 peak_bytes: 9223372036854775807 live_bytes: 9223372036854775807 allocator_bytes_in_use: 9223372036854775807 }
      memory { allocator_name: "GPU_1_bfc" total_bytes: 9223372036854775807 peak_bytes: 9223372036854775807 live_bytes: 9223372036854775807 }
      output { slot: 0 tensor_description { allocation_description { requested_bytes: 9223372036854775807 allocated_bytes: 9223372036854775807 } } }
      output { slot: 1 tensor_description { allocation_description { requested_bytes: 9223372036854775807 } } }
      memory_stats { temp_memory_size: 9223372036854775807 persistent_memory_size: 9223372036854775807 } }
    node_stats { node_name: "MatMul" all_start_micros: 9223372036854775807 op_end_rel_micros: 9223372036854775807 }
    node_stats { node_name: "add" all_start_micros: 1 op_end_rel_micros: -9223372036854775808 }
    node_stats { node_name: "Relu" all_start_micros: -5 op_end_rel_micros: 9223372036854775807 } }
  dev_stats { device: "/job:localhost/replica:0/task:0/device:GPU:0/stream:all"
    node_stats { node_name: "MatMul:MatMul" all_start_micros: 9223372036854775807 op_end_rel_micros: 9223372036854775807 }
    node_stats { node_name: "MatMul:MatMul" all_start_micros: 9223372036854775807 op_end_rel_micros: 9223372036854775807 } } }
"#;

/// Writes the case's file into `dir` and returns its path (as given on the
/// command line).
fn materialize(src: &Src, dir: &Path) -> PathBuf {
    let path = dir.join("input");
    let bytes = match src {
        Src::Bytes(b) => b.to_vec(),
        Src::Gen(f) => f(),
        Src::Fixture(p) => return testdata().join(p),
        Src::FirstHalf(p) => {
            let all = std::fs::read(testdata().join(p)).expect("fixture");
            all[..all.len() / 2].to_vec()
        }
        Src::Bad(p) => return testdata().join("bad").join(p),
        Src::Gzipped(p) | Src::GzippedFirstHalf(p) => {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&std::fs::read(testdata().join(p)).expect("fixture")).unwrap();
            let all = gz.finish().unwrap();
            let keep = if matches!(src, Src::GzippedFirstHalf(_)) { all.len() / 2 } else { all.len() };
            all[..keep].to_vec()
        }
        Src::CheckpointIndexFirstHalf | Src::CheckpointIndexEmpty => {
            let fixture = testdata().join("ckpt/model.ckpt");
            let index = std::fs::read(fixture.with_extension("ckpt.index")).expect("ckpt index");
            let keep = if matches!(src, Src::CheckpointIndexEmpty) { 0 } else { index.len() / 2 };
            std::fs::write(dir.join("ckpt.index"), &index[..keep]).expect("write index");
            std::fs::copy(fixture.with_extension("ckpt.data-00000-of-00001"), dir.join("ckpt.data-00000-of-00001")).expect("copy data");
            return dir.join("ckpt");
        }
        Src::Missing => return dir.join("does-not-exist"),
        Src::Dir => {
            std::fs::create_dir(&path).expect("mkdir");
            return path;
        }
    };
    std::fs::write(&path, bytes).expect("write input");
    path
}

/// Problems with one case's run, or none.
fn check(case: &Case) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = materialize(&case.src, dir.path());
    let out_file = dir.path().join("out.txt");
    let mut args: Vec<String> = vec![case.view.to_owned()];
    if let Some(flag) = case.flag {
        args.push(format!("{flag}={}", input.display()));
    }
    for arg in case.extra {
        args.push(match arg.split_once("=@") {
            Some((flag, rel)) => format!("{flag}={}", testdata().join(rel).display()),
            None => (*arg).to_owned(),
        });
    }
    let sets_output = case.extra.iter().any(|a| a.starts_with("--output"));
    if !sets_output {
        args.push(format!("--output=file:outfile={}", out_file.display()));
    }
    let output = rtfprof(&args).current_dir(dir.path()).run();
    let stdout = output.stdout_lossy();
    let stderr = output.stderr_lossy();
    let mut problems = Vec::new();
    let mut bad = |p: String| problems.push(p);
    for sign in ["panicked", "backtrace", "overflow", "fatal runtime error"] {
        if stderr.contains(sign) {
            bad(format!("stderr has {sign:?}"));
        }
    }
    let Some(code) = output.code() else {
        bad(format!("killed by a signal: {}", output.status));
        return problems;
    };
    match &case.expect {
        Expect::Ok { contains, absent } => {
            if code != 0 {
                bad(format!("exit {code}, want 0"));
            }
            // With --output=file the text goes to the file; check that instead.
            let text = if sets_output { stdout.to_string() } else { std::fs::read_to_string(&out_file).unwrap_or_default() };
            if !sets_output && !out_file.exists() {
                bad("no output file".into());
            }
            for want in *contains {
                if !text.contains(want) && !stdout.contains(want) {
                    bad(format!("output lacks {want:?}"));
                }
            }
            for unwanted in *absent {
                if text.contains(unwanted) {
                    bad(format!("output has {unwanted:?}"));
                }
            }
        }
        Expect::Err { code: want, says } => {
            if code != *want {
                bad(format!("exit {code}, want {want}"));
            }
            if stderr.lines().count() != 1 || !stderr.ends_with('\n') {
                bad(format!("stderr is not exactly one line ({} lines)", stderr.lines().count()));
            }
            if !stderr.starts_with("rtfprof: ") {
                bad("stderr does not start with 'rtfprof: '".into());
            }
            if !stderr.contains(says) {
                bad(format!("stderr lacks {says:?}"));
            }
            // Every error names a flag; an input error names the file too.
            if !stderr.contains("--") {
                bad("stderr names no flag".into());
            }
            if let Some(flag) = case.flag.filter(|_| *want == 1 && !says.starts_with("--"))
                && !stderr.contains(&format!("{flag} {}", input.display()))
            {
                bad(format!("stderr does not name '{flag} {}'", input.display()));
            }
            if out_file.exists() {
                bad("an output file was written".into());
            }
            let leftovers: Vec<_> = std::fs::read_dir(dir.path())
                .expect("read tempdir")
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "input" && !n.starts_with("ckpt."))
                .collect();
            if !leftovers.is_empty() {
                bad(format!("files left behind: {leftovers:?}"));
            }
        }
    }
    if !problems.is_empty() {
        problems.push(format!("args: {args:?}\nstderr: {stderr}"));
    }
    problems
}

#[test]
fn bad_inputs_table() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|case| {
            let problems = check(case);
            (!problems.is_empty()).then(|| format!("{}:\n  {}", case.name, problems.join("\n  ")))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

#[test]
#[ignore = "fails until the code named in each PENDING row is fixed"]
fn pending_fixes() {
    let failures: Vec<String> = PENDING
        .iter()
        .filter_map(|case| {
            let problems = check(case);
            (!problems.is_empty()).then(|| format!("{}:\n  {}", case.name, problems.join("\n  ")))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), PENDING.len(), failures.join("\n"));
}

#[test]
fn case_names_are_unique() {
    let mut names: Vec<&str> = CASES.iter().chain(PENDING).map(|c| c.name).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "duplicate case names");
}

/// Every regression input under testdata/bad/ has a row.
#[test]
fn every_bad_file_has_a_case() {
    let Ok(entries) = std::fs::read_dir(testdata().join("bad")) else { return };
    let used: Vec<String> = CASES
        .iter()
        .chain(PENDING)
        .flat_map(|c| {
            let src = match c.src {
                Src::Bad(p) => Some(p.to_owned()),
                _ => None,
            };
            let extra = c.extra.iter().filter_map(|a| a.split_once("=@bad/").map(|(_, p)| p.to_owned()));
            src.into_iter().chain(extra).collect::<Vec<_>>()
        })
        .collect();
    for entry in entries {
        let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
        if name != "README.md" {
            assert!(used.contains(&name), "testdata/bad/{name} has no row in CASES");
        }
    }
}

/// `rtfprof scope … | head -1`: the reader goes away after one line; rtfprof
/// must exit 0 without a word on stderr.
#[test]
fn broken_pipe_exits_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Far more output than a pipe buffers, so the write hits the closed pipe.
    let graph: String = (0..4000).map(|i| format!("node {{ name: \"scope_{}/node_{i}\" op: \"NoOp\" }}\n", i % 50)).collect();
    let path = dir.path().join("big.pbtxt");
    std::fs::write(&path, graph).expect("write graph");
    let mut child = rtfprof(["scope", &format!("--graph_path={}", path.display()), "--max_depth=100"])
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rtfprof");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("read a line");
    assert_eq!(first, "Reading Files...\n");
    // The BufReader (and with it the pipe's read end) is dropped here.
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert_eq!(output.status.code(), Some(0), "status {}", output.status);
}

/// A single node named `a/a/…/a/x` with 200,000 scope levels (a 400 KB
/// file). A scope view that copied every prefix into its own `String` was
/// quadratic: 32,000 levels (64 KB) took 1 GB, this one tens of GB. The
/// prefixes now share the node's name (`views::Name`).
#[test]
fn deep_scope_name_stays_linear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("deep_name.pbtxt");
    std::fs::write(&path, format!("node {{ name: \"{}x\" op: \"NoOp\" }}\n", "a/".repeat(200_000))).expect("write");
    let mut child = rtfprof(["scope", &format!("--graph_path={}", path.display()), "--output=none"])
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rtfprof");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().expect("kill");
            panic!("scope view of a 400 KB graph still running after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "status {status}");
}
