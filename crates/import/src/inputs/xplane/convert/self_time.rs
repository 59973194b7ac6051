//! Host self time: an op event's duration minus the op events nested in
//! it on the same line, the line walked piece by piece on all cores.

use rayon::prelude::*;

use super::executions::Execution;

/// Makes each host execution's time its self time: minus the executions
/// nested in it (same line, contained in time). The line comes in pieces.
pub(super) fn subtract_nested<P: std::ops::DerefMut<Target = [Execution]> + Send + Sync>(line: &mut [P]) {
    // By start, the longest first; equal spans in line order. The profiler
    // writes lines in that order already: then the pieces are walked on all
    // cores (see `subtract_nested_in_order`).
    let before = |a: &Execution, b: &Execution| (a.offset_ps, std::cmp::Reverse(a.end_ps())) <= (b.offset_ps, std::cmp::Reverse(b.end_ps()));
    let in_order = line.par_iter().all(|piece| piece.windows(2).all(|w| before(&w[0], &w[1])))
        && line.iter().filter(|piece| !piece.is_empty()).collect::<Vec<_>>().windows(2).all(|w| before(&w[0][w[0].len() - 1], &w[1][0]));
    if in_order {
        subtract_nested_in_order(line);
    } else {
        let key = |(p, i): (usize, usize)| {
            let e = &line[p][i];
            (e.offset_ps, std::cmp::Reverse(e.end_ps()), p, i)
        };
        let mut order: Vec<(usize, usize)> = line.iter().enumerate().flat_map(|(p, piece)| (0..piece.len()).map(move |i| (p, i))).collect();
        order.sort_unstable_by_key(|&at| key(at));
        let mut open: Vec<(usize, usize)> = Vec::new();
        for (p, i) in order {
            nest(line, &mut open, (p, i));
        }
    }
    line.par_iter_mut().for_each(|piece| piece.iter_mut().for_each(|e| e.time_ps = e.time_ps.max(0)));
}

/// One execution, in order, with the stack of those still open: the
/// innermost open one that contains it loses its time; then it is open.
fn nest<P: std::ops::DerefMut<Target = [Execution]>>(line: &mut [P], open: &mut Vec<(usize, usize)>, at: (usize, usize)) {
    give_to_parent(line, open, at);
    open.push(at);
}

/// Closes the open executions that end before `(p, i)` starts; the
/// innermost one left, if it contains `(p, i)`, loses its time. Whether
/// one was left open.
fn give_to_parent<P: std::ops::DerefMut<Target = [Execution]>>(line: &mut [P], open: &mut Vec<(usize, usize)>, (p, i): (usize, usize)) -> bool {
    let (start, end) = (i128::from(line[p][i].offset_ps), line[p][i].end_ps());
    while open.last().is_some_and(|&(tp, ti)| line[tp][ti].end_ps() <= start) {
        open.pop();
    }
    if let Some(&(pp, pi)) = open.last()
        && end <= line[pp][pi].end_ps()
    {
        let child = line[p][i].duration_ps;
        line[pp][pi].time_ps = line[pp][pi].time_ps.saturating_sub(child);
    }
    !open.is_empty()
}

/// [`subtract_nested`] of a line in order. Each piece is walked on its
/// own, with the executions open in it; those that find none open in their
/// piece are then walked in order with the ones left open by the pieces
/// before (the same stack the walk of the whole line has: the piece's own
/// open executions lie above the earlier ones). Subtracting saturates
/// towards zero, in any order to the same result. (One thread's line holds
/// most of a TF trace: walked whole, it kept a core idle for 85 ms of the
/// 270 MB bench trace's 1.5 s.)
fn subtract_nested_in_order<P: std::ops::DerefMut<Target = [Execution]> + Send + Sync>(line: &mut [P]) {
    // Per piece: its executions that found no open one, and those left open.
    let walked: Vec<(Vec<usize>, Vec<usize>)> = line
        .par_iter_mut()
        .map(|piece| {
            let mut piece: &mut [Execution] = piece;
            let mut open: Vec<(usize, usize)> = Vec::new();
            let mut outermost = Vec::new();
            for i in 0..piece.len() {
                if !give_to_parent(std::slice::from_mut(&mut piece), &mut open, (0, i)) {
                    outermost.push(i);
                }
                open.push((0, i));
            }
            (outermost, open.into_iter().map(|(_, i)| i).collect())
        })
        .collect();
    let mut open: Vec<(usize, usize)> = Vec::new();
    for (p, (outermost, left_open)) in walked.into_iter().enumerate() {
        for i in outermost {
            if !give_to_parent(line, &mut open, (p, i)) {
                // (Nothing is opened here: the rest find none either.)
                break;
            }
        }
        open.extend(left_open.into_iter().map(|i| (p, i)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::executions::tests::exec;
    use super::*;

    /// Random lines in time order (nested, overlapping, equal and empty
    /// spans), cut into random pieces: the pieces' walk on all cores gives
    /// the times the walk of the whole line, sorted, gives.
    #[test]
    fn lines_in_pieces_nest_as_whole_lines() {
        let mut rng = crate::test_random::XorShift::new(0x5e1f);
        for round in 0..300 {
            let count = 1 + rng.below(60) as usize;
            let mut spans: Vec<(i64, i64)> = (0..count)
                .map(|_| {
                    let start = rng.below(200) as i64;
                    (start, start + rng.below(if round % 3 == 0 { 8 } else { 120 }) as i64)
                })
                .collect();
            spans.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
            let whole: Vec<Execution> = spans.iter().map(|&(a, b)| exec(a, b)).collect();
            // The reference: the walk over an order sorted by position.
            let mut expected = vec![whole.clone()];
            let mut open = Vec::new();
            for i in 0..count {
                nest(&mut expected, &mut open, (0, i));
            }
            let expected: Vec<i64> = expected[0].iter().map(|e| e.time_ps.max(0)).collect();
            let mut pieces: Vec<Vec<Execution>> = Vec::new();
            let mut rest = whole.as_slice();
            while !rest.is_empty() {
                let (piece, after) = rest.split_at((rng.below(rest.len() as u64) as usize + 1).min(rest.len()));
                pieces.push(piece.to_vec());
                if rng.below(4) == 0 {
                    pieces.push(Vec::new());
                }
                rest = after;
            }
            subtract_nested(&mut pieces);
            assert_eq!(pieces.concat().iter().map(|e| e.time_ps).collect::<Vec<_>>(), expected, "spans {spans:?}");
        }
    }

    #[test]
    fn nested_executions_leave_their_parents_self_time() {
        // A call [0, 100) holding two ops and, inside the second, a third.
        let mut e = vec![exec(0, 100), exec(10, 30), exec(40, 90), exec(50, 60), exec(100, 120)];
        subtract_nested(std::slice::from_mut(&mut e));
        let times: Vec<i64> = e.iter().map(|e| e.time_ps).collect();
        assert_eq!(times, vec![100 - 20 - 50, 20, 50 - 10, 10, 20]);
    }

    #[test]
    fn self_times_do_not_depend_on_pieces_or_event_order() {
        let spans = [(0, 100), (10, 30), (40, 90), (50, 60), (100, 120), (100, 120), (110, 115)];
        let expected: Vec<i64> = {
            let mut line = vec![spans.iter().map(|&(a, b)| exec(a, b)).collect::<Vec<_>>()];
            subtract_nested(&mut line);
            line[0].iter().map(|e| e.time_ps).collect()
        };
        // Of two equal spans the first in the line holds the second.
        assert_eq!(expected, vec![30, 20, 40, 10, 0, 15, 5]);
        // In pieces of every size.
        for size in 1..spans.len() {
            let mut line: Vec<Vec<Execution>> = spans.chunks(size).map(|c| c.iter().map(|&(a, b)| exec(a, b)).collect()).collect();
            subtract_nested(&mut line);
            assert_eq!(line.concat().iter().map(|e| e.time_ps).collect::<Vec<_>>(), expected, "pieces of {size}");
        }
        // Out of time order (equal spans kept in line order): the same.
        let order = [4, 0, 6, 2, 1, 5, 3];
        let mut line = vec![order.iter().map(|&i| exec(spans[i].0, spans[i].1)).collect::<Vec<_>>()];
        subtract_nested(&mut line);
        let mut times = vec![0; spans.len()];
        order.iter().zip(&line[0]).for_each(|(&i, e)| times[i] = e.time_ps);
        assert_eq!(times, expected);
    }
}
