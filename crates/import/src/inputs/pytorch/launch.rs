//! Which op launched each GPU event: one rule for every Kineto schema.
//!
//! The link that holds from torch 1.8 to today is the GPU event's
//! `correlation` → the runtime or driver call with that correlation (CUPTI's
//! and roctracer's id, shared by a launch and what it launched, graph
//! replays included: `cudaGraphLaunch`'s correlation is its kernels') → the
//! op that was open on the launching thread. Which op that is:
//!
//! 1. the op the launch's External id names (`External id`; torch 1.8/1.9
//!    wrote `external id`), if that op ran on the launch's thread and
//!    encloses it: torch sets the id from the innermost `RecordFunction`
//!    that pushed a correlation, which is the op to credit;
//! 2. else the innermost op (`cpu_op` or `user_annotation`) open on the
//!    launch's thread when it ran. Several published traces carry External
//!    ids equal to the correlation, which name no op or another one.
//!
//! A GPU event whose launch is not in the trace (it was queued before the
//! profiler started, or a trace with no CPU side) is linked by its own
//! External id only where the trace's GPU External ids are op links: every
//! GPU event that has both a launch and an External id names the op the
//! rule found. Otherwise it has no launching op: `(unattributed)`.

use rustc_hash::FxHashMap;

use super::{Category, Event, Trace};

/// The launching op of each GPU event (kernel, copy, set) and of each
/// runtime or driver call: index into [`Trace::events`].
#[derive(Clone, Debug, Default)]
pub struct LaunchingOps {
    /// `(GPU event or call, op)`, by event.
    links: Vec<(u32, u32)>,
    /// The call of each correlation ([`Trace::launches_by_correlation`]).
    launches: FxHashMap<u64, u32>,
}

impl LaunchingOps {
    /// The op that launched GPU event `event` (an index into the trace's
    /// events), or that made call `event`, if the trace links it.
    pub fn of(&self, event: u32) -> Option<u32> {
        self.links.binary_search_by_key(&event, |&(e, _)| e).ok().map(|k| self.links[k].1)
    }

    /// The runtime or driver call that launched GPU event `e` (by its
    /// correlation): index into [`Trace::events`].
    pub fn launch(&self, e: &Event) -> Option<u32> {
        e.correlation.and_then(|c| self.launches.get(&c.get())).copied()
    }

    /// The call of each correlation ([`Trace::launches_by_correlation`]).
    pub fn launches(&self) -> &FxHashMap<u64, u32> {
        &self.launches
    }
}

/// The device events the rule links to a launch: kernels, copies, sets
/// and synchronisations.
pub fn is_launched(e: &Event) -> bool {
    launched(e.category)
}

fn launched(category: Category) -> bool {
    matches!(category, Category::Kernel | Category::GpuMemcpy | Category::GpuMemset | Category::CudaSync)
}

/// Whether [`LaunchingOps`] covers events of this category (GPU work and
/// the calls that launch it).
pub fn is_linked(category: Category) -> bool {
    launched(category) || category.is_launch()
}

fn is_op(e: &Event) -> bool {
    matches!(e.category, Category::CpuOp | Category::UserAnnotation)
}

impl Trace {
    /// The launching op of each GPU event (see the module doc).
    pub fn launching_ops(&self) -> LaunchingOps {
        let ops = self.ops_by_external_id();
        let launches = self.launches_by_correlation();
        // Every call, not only those a GPU event names: a synchronisation
        // or an allocation belongs to its op too.
        let calls = self.events.iter().enumerate().filter(|(_, e)| e.category.is_launch()).map(|(i, _)| i as u32);
        let enclosing = self.innermost_enclosing_ops(calls);
        let encloses = |op: u32, launch: &Event| {
            let o = &self.events[op as usize];
            o.thread == launch.thread && o.ts <= launch.ts && o.end() >= launch.end()
        };
        let by_launch = |l: u32| -> Option<u32> {
            let launch = &self.events[l as usize];
            launch.external_id.and_then(|id| ops.get(&id.get()).copied()).filter(|&op| encloses(op, launch)).or_else(|| enclosing.get(&l).copied())
        };

        let mut links = Vec::new();
        let mut without_launch = Vec::new();
        let mut own_ids_are_links = true;
        for (i, e) in self.events.iter().enumerate() {
            if e.category.is_launch() {
                if let Some(op) = by_launch(i as u32) {
                    links.push((i as u32, op));
                }
                continue;
            }
            if !is_launched(e) {
                continue;
            }
            let launch = e.correlation.and_then(|c| launches.get(&c.get())).copied();
            match launch {
                Some(l) => {
                    let op = by_launch(l);
                    if let (Some(own), Some(op)) = (e.external_id, op) {
                        own_ids_are_links &= self.events[op as usize].external_id == Some(own);
                    }
                    if let Some(op) = op {
                        links.push((i as u32, op));
                    }
                }
                None => without_launch.push(i as u32),
            }
        }
        if own_ids_are_links {
            for i in without_launch {
                if let Some(&op) = self.events[i as usize].external_id.and_then(|id| ops.get(&id.get())) {
                    links.push((i, op));
                }
            }
            links.sort_unstable_by_key(|&(e, _)| e);
        }
        LaunchingOps { links, launches }
    }

    /// For each event of `calls` (indices into `events`), the innermost op
    /// open on its thread from its start to its end, if any.
    fn innermost_enclosing_ops(&self, calls: impl Iterator<Item = u32>) -> FxHashMap<u32, u32> {
        // Per thread: ops by (start, longest first), so that an op is
        // pushed after the ops that enclose it; calls by start.
        let mut by_thread: FxHashMap<u32, (Vec<u32>, Vec<u32>)> = FxHashMap::default();
        for c in calls {
            by_thread.entry(self.events[c as usize].thread.0).or_default().1.push(c);
        }
        for (i, e) in self.events.iter().enumerate() {
            if is_op(e)
                && let Some((ops, _)) = by_thread.get_mut(&e.thread.0)
            {
                ops.push(i as u32);
            }
        }
        let mut found = FxHashMap::default();
        for (_, (mut ops, mut calls)) in by_thread {
            let ev = |i: u32| &self.events[i as usize];
            ops.sort_by_key(|&o| (ev(o).ts, std::cmp::Reverse(ev(o).end())));
            calls.sort_by_key(|&c| ev(c).ts);
            // Open ops, outermost first; an op that ended stays until one
            // that starts after it pops it, so each call looks down the
            // stack for the first op that lasts past its end.
            let mut stack: Vec<u32> = Vec::new();
            let mut next = 0;
            for c in calls {
                let call = ev(c);
                while next < ops.len() && ev(ops[next]).ts <= call.ts {
                    let o = ops[next];
                    while stack.last().is_some_and(|&top| ev(top).end() <= ev(o).ts) {
                        stack.pop();
                    }
                    stack.push(o);
                    next += 1;
                }
                if let Some(&op) = stack.iter().rev().find(|&&o| ev(o).end() >= call.end()) {
                    found.insert(c, op);
                }
            }
        }
        found
    }
}
