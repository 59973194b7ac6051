//! `rtfprof memory`'s outputs: the tfprof-style text ([`text`]) and the
//! JSON ([`json`]).

pub mod json;
pub mod text;

use std::io::{self, Write};

use super::Report;
use crate::memory::MemoryProfile;
use crate::show::options::Options;

/// A memory profile as `rtfprof memory` writes it: the text takes the view
/// options (depth, name filters), and says why there is nothing to replay
/// when the inputs had no allocation records.
pub struct MemoryReport<'a> {
    pub profile: &'a MemoryProfile,
    pub opts: &'a Options,
    /// [`crate::memory::no_records_note`], where the inputs had no
    /// allocation records.
    pub no_records: Option<&'static str>,
}

impl Report for MemoryReport<'_> {
    fn text(&self) -> String {
        let mut text = text::render(self.profile, self.opts);
        if let Some(note) = self.no_records {
            text.push_str(note);
            text.push('\n');
        }
        text.push_str(&text::render_programs(&self.profile.programs, self.no_records.is_none(), self.opts));
        text
    }

    fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        json::write(self.profile, out).map(drop)
    }
}
