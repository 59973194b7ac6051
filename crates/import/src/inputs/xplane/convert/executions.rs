//! Op executions as the pieces of lines hold them before steps are known
//! (40 bytes each: a large trace holds millions), on the heap or, a large
//! piece's, in pages of their own; and a line's executions, piece by
//! piece.

/// One op execution, before steps are known: 40 bytes, since a large trace
/// holds millions. Times are relative to the line's timestamp.
#[derive(Clone, Copy, Debug)]
pub(super) struct Execution {
    pub(super) op: u32,
    pub(super) offset_ps: i64,
    /// Never negative.
    pub(super) duration_ps: i64,
    /// Time that counts (self time on the host, device time on devices).
    pub(super) time_ps: i64,
    pub(super) runs: i64,
}

impl Execution {
    pub(super) fn end_ps(&self) -> i128 {
        i128::from(self.offset_ps) + i128::from(self.duration_ps)
    }
}

/// A piece's executions. Large ones live in pages of their own (an
/// anonymous map): dropped once they are summed, their pages go back to the
/// OS, for the node model's records to take. (mimalloc keeps freed memory
/// for blocks of the same sizes, which those records' are not: on the
/// 1.08 GB trace, the 0.9 GB of executions stayed in the peak.)
pub(super) enum Executions {
    Heap(Vec<Execution>),
    Mapped { map: memmap2::MmapMut, len: usize },
}

impl Executions {
    /// Pieces at least this large are mapped (a full piece is 640 KiB).
    const MAPPED_BYTES: usize = 256 << 10;
    /// And only in traces at least this large: fresh pages cost more than reused
    /// heap, which small traces have room enough for (x1, 10.6 MB: 0.04 s
    /// more system time of 0.15 s when mapped).
    pub(super) const MAPPED_FROM_TRACE_BYTES: usize = 64 << 20;

    /// Room for the executions of `events` events, where they will stay:
    /// a large piece's are written into its map as they are read (were
    /// gathered in a vector, then copied there: `scope`'s CPU time on the
    /// 272 MB jax_lstm x91 trace went from 0.55 to 0.53 s, bench/README.md).
    /// A map's pages past the executions written are never touched, so
    /// they take no memory.
    pub(super) fn with_room(events: usize, trace_bytes: usize) -> Executions {
        let bytes = events * std::mem::size_of::<Execution>();
        if bytes >= Self::MAPPED_BYTES
            && trace_bytes >= Self::MAPPED_FROM_TRACE_BYTES
            && let Ok(map) = memmap2::MmapOptions::new().len(bytes).map_anon()
        {
            return Executions::Mapped { map, len: 0 };
        }
        Executions::Heap(Vec::with_capacity(events))
    }

    #[inline]
    pub(super) fn push(&mut self, execution: Execution) {
        match self {
            Executions::Heap(executions) => executions.push(execution),
            Executions::Mapped { map, len } if *len < map.len() / std::mem::size_of::<Execution>() => {
                // SAFETY: record `len` is within the page-aligned map (just
                // checked), which holds plain-integer records only.
                unsafe { map.as_mut_ptr().cast::<Execution>().add(*len).write(execution) };
                *len += 1;
            }
            // (Never: a piece has no more executions than events.)
            Executions::Mapped { .. } => {
                let mut executions = self.to_vec();
                executions.push(execution);
                *self = Executions::Heap(executions);
            }
        }
    }

    /// The executions as kept: a vector's with its room given back.
    pub(super) fn finished(self) -> Executions {
        match self {
            // Not every event is an op (half of a TF trace's are runtime
            // TraceMes): copied to their size (`shrink_to_fit` keeps a
            // block that shrinks by less than half), the room is used by
            // the next piece.
            Executions::Heap(executions) if executions.len() < executions.capacity() => Executions::Heap(executions.to_vec()),
            kept => kept,
        }
    }
}

impl std::ops::Deref for Executions {
    type Target = [Execution];

    fn deref(&self) -> &[Execution] {
        match self {
            Executions::Heap(executions) => executions,
            // SAFETY: `push` wrote `len` records into the map.
            Executions::Mapped { map, len } => unsafe { std::slice::from_raw_parts(map.as_ptr().cast::<Execution>(), *len) },
        }
    }
}

impl std::ops::DerefMut for Executions {
    fn deref_mut(&mut self) -> &mut [Execution] {
        match self {
            Executions::Heap(executions) => executions,
            // SAFETY: as in `deref`; the map is this value's alone.
            Executions::Mapped { map, len } => unsafe { std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<Execution>(), *len) },
        }
    }
}

/// A line's executions, with self times.
pub(super) struct LineRead {
    /// Index of the plane.
    pub(super) plane: usize,
    /// The line's timestamp, in ps.
    pub(super) base_ps: i128,
    /// Its executions, as its pieces were read.
    pub(super) pieces: Vec<Executions>,
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// An execution of op 0 from `start` to `end` with no nested time (the
    /// convert tests' shorthand).
    pub(in super::super) fn exec(start: i64, end: i64) -> Execution {
        Execution { op: 0, offset_ps: start, duration_ps: end - start, time_ps: end - start, runs: 1 }
    }

    #[test]
    fn executions_written_in_place_read_back_as_pushed() {
        let records: Vec<Execution> = (0..20_000).map(|i| Execution { op: i as u32 * 7, runs: i % 3, ..exec(i, 2 * i + 1) }).collect();
        let fields = |e: &[Execution]| e.iter().map(|e| (e.op, e.offset_ps, e.duration_ps, e.time_ps, e.runs)).collect::<Vec<_>>();
        // A large trace's piece is mapped, with room for every event; an
        // event past the room (never, by the framing) moves it to the heap.
        let mut mapped = Executions::with_room(records.len(), 1 << 30);
        assert!(matches!(mapped, Executions::Mapped { .. }));
        records.iter().for_each(|&e| mapped.push(e));
        assert_eq!(fields(&mapped.finished()), fields(&records));
        let mut full = Executions::with_room(records.len(), 1 << 30);
        records.iter().chain(&records[..2]).for_each(|&e| full.push(e));
        assert!(matches!(full, Executions::Heap(_)));
        assert_eq!(fields(&full), fields(&[&records[..], &records[..2]].concat()));
        // A small trace's stays on the heap, cut to its executions.
        let mut heap = Executions::with_room(records.len(), 1 << 20);
        records[..5].iter().for_each(|&e| heap.push(e));
        match heap.finished() {
            Executions::Heap(kept) => assert_eq!((fields(&kept), kept.capacity()), (fields(&records[..5]), 5)),
            Executions::Mapped { .. } => panic!("a small trace's executions are mapped"),
        }
    }
}
