//! The command line: input bytes split on ASCII whitespace into argv words
//! (not necessarily UTF-8), then `normalize_args`, clap, and
//! `ShowArgs::to_options`. Nothing may panic; no file is read.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use clap::Parser;
use rtfprof_cli::cli::{Cli, normalize_args};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let words = data.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
    let argv = std::iter::once(OsString::from("rtfprof")).chain(words.map(|w| OsString::from_vec(w.to_vec())));
    let args = normalize_args(argv);
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // main prints clap's message: render it too.
        Err(e) => return drop(e.render().to_string()),
    };
    let _ = cli.inputs.paths();
    if let Ok(opts) = cli.show.to_options() {
        // Options print themselves in tfprof's option dump.
        let _ = (opts.select.to_string(), opts.output.to_string(), opts.hide_name_regexes.to_string());
    }
});
