//! A map and a set kept as vectors sorted by key. A node has a record for a
//! few steps, a step a few devices, a node a few op types and outputs; a
//! `BTreeMap` allocates room for 11 entries for even one, which made these
//! maps most of a large profile's memory.

use std::borrow::Borrow;

/// Inserts into a vector that grows by half (at least one) when full. `Vec`
/// starts small vectors at four slots and doubles them; for records held per
/// node and per step, mostly with one entry, that was most of their memory.
pub fn insert_snug<T>(vec: &mut Vec<T>, index: usize, value: T) {
    if vec.len() == vec.capacity() {
        vec.reserve_exact((vec.len() / 2).max(1));
    }
    vec.insert(index, value);
}

/// Appends, growing like [`insert_snug`].
pub fn push_snug<T>(vec: &mut Vec<T>, value: T) {
    insert_snug(vec, vec.len(), value);
}

/// `vec` without spare room: `Vec` starts at four slots when it cannot know
/// how many are coming (a decoded repeated field, a collect of `Result`s).
pub fn snug<T>(mut vec: Vec<T>) -> Vec<T> {
    vec.shrink_to_fit();
    vec
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmallMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        SmallMap(Vec::new())
    }
}

impl<K: Ord, V> SmallMap<K, V> {
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(move |i| &mut self.0[i].1)
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Inserts or replaces; returns the replaced value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                insert_snug(&mut self.0, i, (key, value));
                None
            }
        }
    }

    /// Room for `additional` more entries, and no more.
    pub fn reserve_exact(&mut self, additional: usize) {
        self.0.reserve_exact(additional);
    }

    /// The value for `key`, inserting `make()` first if there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        // Records mostly come in key order (a node's steps one after
        // another): a new last key needs no search.
        if self.0.last().is_none_or(|(last, _)| *last < key) {
            push_snug(&mut self.0, (key, make()));
            let last = self.0.len() - 1;
            return &mut self.0[last].1;
        }
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                insert_snug(&mut self.0, i, (key, make()));
                i
            }
        };
        &mut self.0[i].1
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many entries fit without growing (for tests of memory use).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.0.iter_mut().map(|(_, v)| v)
    }
}

/// Keeps the first value of a repeated key, like collecting into a map that
/// ignores later duplicates would not; callers pass unique keys.
impl<K: Ord, V> FromIterator<(K, V)> for SmallMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut entries: Vec<(K, V)> = iter.into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, earlier| later.0 == earlier.0);
        SmallMap(snug(entries))
    }
}

impl<K, V> IntoIterator for SmallMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a SmallMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

/// A set kept as a sorted vector (see [`SmallMap`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SmallSet<T>(Vec<T>);

impl<T: Ord> SmallSet<T> {
    fn find<Q: Ord + ?Sized>(&self, value: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
    {
        self.0.binary_search_by(|v| v.borrow().cmp(value))
    }

    pub fn contains<Q: Ord + ?Sized>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.find(value).is_ok()
    }

    /// Returns whether the value was new.
    pub fn insert(&mut self, value: T) -> bool {
        match self.find(&value) {
            Ok(_) => false,
            Err(i) => {
                insert_snug(&mut self.0, i, value);
                true
            }
        }
    }

    /// Returns whether the value was there.
    pub fn remove<Q: Ord + ?Sized>(&mut self, value: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.find(value).map(|i| self.0.remove(i)).is_ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Values in order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }
}

impl<T: Ord> Extend<T> for SmallSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for value in iter {
            self.insert(value);
        }
    }
}

impl<T: Ord> FromIterator<T> for SmallSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut values: Vec<T> = iter.into_iter().collect();
        values.sort();
        values.dedup();
        SmallSet(values)
    }
}

impl<'a, T> IntoIterator for &'a SmallSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::{SmallMap, SmallSet};

    #[test]
    fn small_collections_grow_snugly() {
        let mut m = SmallMap::default();
        m.insert(1, [0u8; 100]);
        assert_eq!(m.0.capacity(), 1);
        m.insert(0, [1u8; 100]);
        m.insert(2, [2u8; 100]);
        assert_eq!(m.0.capacity(), 3);
        let mut v = Vec::new();
        (0..10).for_each(|i| super::push_snug(&mut v, i));
        assert_eq!(v, (0..10).collect::<Vec<_>>());
        assert!(v.capacity() < 16, "{}", v.capacity());
        // An iterator of Results does not know its length.
        let collected: Result<SmallMap<i32, u8>, ()> = [(2, 0), (1, 0)].into_iter().map(Ok).collect();
        assert_eq!(collected.unwrap().capacity(), 2);
    }

    #[test]
    fn behaves_like_a_sorted_set() {
        let mut s: SmallSet<String> = ["b", "a", "b"].into_iter().map(String::from).collect();
        assert!(s.insert("c".into()));
        assert!(!s.insert("a".into()));
        assert!(s.contains("b"));
        assert!(s.remove("b"));
        assert!(!s.remove("b"));
        s.extend(["0".to_owned(), "c".to_owned()]);
        assert_eq!(s.iter().map(String::as_str).collect::<Vec<_>>(), ["0", "a", "c"]);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn behaves_like_a_sorted_map() {
        let mut m = SmallMap::default();
        assert_eq!(m.insert(5, "five"), None);
        assert_eq!(m.insert(1, "one"), None);
        *m.get_or_insert_with(3, || "three") = "THREE";
        *m.get_or_insert_with(7, || "seven") = "SEVEN";
        assert_eq!(*m.get_or_insert_with(7, || "never"), "SEVEN");
        *m.get_or_insert_with(0, || "zero") = "ZERO";
        assert_eq!(m.get(&7), Some(&"SEVEN"));
        assert_eq!(m.get(&0), Some(&"ZERO"));
        m.0.retain(|(k, _)| *k != 0 && *k != 7);
        assert_eq!(m.insert(5, "FIVE"), Some("five"));
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), [1, 3, 5]);
        assert_eq!(m.get(&3), Some(&"THREE"));
        assert_eq!(m.values().next_back(), Some(&"FIVE"));
        let from: SmallMap<&str, i32> = [("b", 2), ("a", 1), ("b", 3)].into_iter().collect();
        assert_eq!(from.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), [("a", 1), ("b", 2)]);
    }
}
