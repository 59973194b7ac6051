//! Lookups by metadata id, made once per plane and asked once per event or
//! stat.

use rustc_hash::FxHashMap;

/// Values by metadata id: a vector indexed by id where ids are small (the
/// profiler numbers metadata from 1), a hash map for the rest. (Hashing
/// every event's id was 5% of reading the 270 MB bench trace.)
#[derive(Debug)]
pub struct IdMap<V> {
    dense: Vec<Option<V>>,
    sparse: FxHashMap<i64, V>,
}

impl<V: Copy> IdMap<V> {
    /// The map of `entries`; of equal ids, the last is kept.
    pub fn new(entries: impl IntoIterator<Item = (i64, V)>) -> IdMap<V> {
        let entries: Vec<(i64, V)> = entries.into_iter().collect();
        // Room for ids up to a few times the entries: a plane's ids are
        // dense, and a stray large one must not make a huge vector.
        let bound = 4 * entries.len() as i64 + 4096;
        let dense_len = entries.iter().map(|&(id, _)| id).filter(|id| (0..bound).contains(id)).max().map_or(0, |max| max as usize + 1);
        let mut map = IdMap { dense: vec![None; dense_len], sparse: FxHashMap::default() };
        for (id, value) in entries {
            match usize::try_from(id) {
                Ok(at) if at < dense_len => map.dense[at] = Some(value),
                _ => drop(map.sparse.insert(id, value)),
            }
        }
        map
    }

    pub fn get(&self, id: i64) -> Option<V> {
        match usize::try_from(id).ok().and_then(|at| self.dense.get(at)) {
            Some(&value) => value,
            None => self.sparse.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_small_large_and_negative_are_found() {
        let map = IdMap::new([(1, 'a'), (7, 'b'), (1 << 40, 'c'), (-3, 'd'), (7, 'e')]);
        assert_eq!(map.dense.len(), 8);
        assert_eq!([1, 7, 1 << 40, -3].map(|id| map.get(id)), [Some('a'), Some('e'), Some('c'), Some('d')]);
        assert_eq!([0, 2, 8, 1 << 41, -1, i64::MIN].map(|id| map.get(id)), [None; 6]);
    }
}
