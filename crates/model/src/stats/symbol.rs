//! Interned strings for the few distinct values that millions of records
//! repeat: op types and device names. A [`Symbol`] is a `&'static str`, so
//! copying one allocates nothing and threads share it without touching a
//! reference count (an `Arc` cloned for every node from several cores moves
//! its count between them). Each distinct string is kept once for the life
//! of the process; a real profile has a few hundred.

use std::cell::{Cell, RefCell};
use std::sync::{LazyLock, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

pub type Symbol = &'static str;

/// The one copy of `s`.
pub fn symbol(s: &str) -> Symbol {
    static ALL: LazyLock<Mutex<FxHashSet<Symbol>>> = LazyLock::new(Default::default);
    thread_local! {
        /// What this thread has already looked up, so that the lock is taken
        /// once per string and thread, not once per record.
        static SEEN: RefCell<FxHashSet<Symbol>> = RefCell::default();
    }
    SEEN.with(|seen| {
        if let Some(&known) = seen.borrow().get(s) {
            return known;
        }
        let shared = {
            let mut all = ALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            match all.get(s) {
                Some(&known) => known,
                None => {
                    let new: Symbol = Box::leak(s.into());
                    all.insert(new);
                    new
                }
            }
        };
        seen.borrow_mut().insert(shared);
        shared
    })
}

/// A symbol behind one thin pointer: 8 bytes where a `&str` takes 16, for
/// the records kept by the million (a node's one execution in a step).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ThinSymbol(&'static Symbol);

impl ThinSymbol {
    pub fn new(s: Symbol) -> ThinSymbol {
        static ALL: LazyLock<Mutex<FxHashMap<(usize, usize), &'static Symbol>>> = LazyLock::new(Default::default);
        thread_local! {
            /// The last one made: records come device after device.
            static LAST: Cell<Option<&'static Symbol>> = const { Cell::new(None) };
        }
        let key = (s.as_ptr() as usize, s.len());
        if let Some(last) = LAST.get()
            && (last.as_ptr() as usize, last.len()) == key
        {
            return ThinSymbol(last);
        }
        let thin = *ALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).entry(key).or_insert_with(|| Box::leak(Box::new(s)));
        LAST.set(Some(thin));
        ThinSymbol(thin)
    }

    pub fn get(self) -> Symbol {
        self.0
    }
}

impl std::fmt::Debug for ThinSymbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_copy_across_threads() {
        let here = symbol("Conv2D");
        let there = std::thread::spawn(|| symbol(&String::from("Conv2D"))).join().unwrap();
        assert_eq!(here, "Conv2D");
        assert!(std::ptr::eq(here, there));
        assert!(!std::ptr::eq(here, symbol("MatMul")));
        assert_eq!(symbol(""), "");
    }

    #[test]
    fn thin_symbols_are_their_symbols() {
        let (cpu, gpu) = (symbol("/cpu:0"), symbol("/gpu:0"));
        let thin = ThinSymbol::new(cpu);
        assert_eq!(thin.get(), "/cpu:0");
        assert!(std::ptr::eq(thin.get(), cpu));
        assert_eq!(ThinSymbol::new(gpu).get(), "/gpu:0");
        assert_eq!(ThinSymbol::new(cpu), thin);
        let there = std::thread::spawn(move || ThinSymbol::new(cpu)).join().unwrap();
        assert_eq!(there, thin);
        assert_eq!(size_of::<ThinSymbol>(), 8);
    }
}
