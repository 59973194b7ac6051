//! Baseline file bytes (`rtfprof check --save_baseline`) → `baseline::parse`
//! → the file rendered back (the same runs) → `check::decide` of the runs
//! against themselves and against their first → every output of `check`.
//! Bad bytes must give an error, never a panic; any samples the file can
//! hold must be judged and printed.
#![no_main]

use rtfprof::check::{Options, decide};
use rtfprof::outputs::check::{baseline, benchmark, github, json, junit, markdown, text};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(runs) = baseline::parse(data) else { return };
    let again = baseline::parse(&baseline::render(&runs)).expect("a baseline's own bytes read back");
    assert!(again == runs);
    for check in [decide(&runs, &runs, &Options::default()), decide(&runs[..1], &runs, &Options::default())] {
        let _ = (text::render(&check), json::render(&check), junit::render(&check), github::render(&check));
        let _ = (markdown::render(&check), benchmark::render(&check));
    }
});
