//! Segments of a trace's text handed to worker threads, their results
//! taken back in file order: the whole read's parse
//! (`read::Builder::events_split`) and the windows' plan
//! (`stream::segments::for_segments`) both read so. (XPlane's
//! `inputs::in_order` hands out pieces of a line known beforehand; here the
//! reading thread makes each segment as it reads or decompresses the file.)

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// What a worker sends back: its job's number and result, or its panic.
type Done<T> = std::thread::Result<(usize, T)>;

/// Worker threads of a [`std::thread::scope`] that run one function on the
/// jobs sent to them; results are taken in the order the jobs were sent.
/// Dropping the pool ends the workers.
pub(super) struct OrderedPool<'scope, J, T> {
    jobs: Sender<(usize, J)>,
    done: Receiver<Done<T>>,
    /// The results not taken yet, in order (`None`: not back).
    pending: VecDeque<Option<T>>,
    /// How many jobs were sent.
    sent: usize,
    workers: usize,
    /// Run here when no worker started.
    work: &'scope (dyn Fn(J) -> T + Sync),
}

impl<'scope, J: Send + 'scope, T: Send + 'scope> OrderedPool<'scope, J, T> {
    /// Starts up to `workers` threads in `scope` running `work` (fewer if
    /// the system refuses one: see [`OrderedPool::workers`]).
    pub fn start(scope: &'scope std::thread::Scope<'scope, '_>, workers: usize, work: &'scope (dyn Fn(J) -> T + Sync)) -> Self {
        let (jobs, jobs_rx) = mpsc::channel::<(usize, J)>();
        let jobs_rx = Arc::new(Mutex::new(jobs_rx));
        let (done_tx, done) = mpsc::channel::<Done<T>>();
        let mut started = 0;
        for _ in 0..workers {
            let (jobs_rx, done_tx) = (jobs_rx.clone(), done_tx.clone());
            let worker = move || {
                loop {
                    let job = jobs_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((n, job)) = job else { break };
                    // A panic goes on in the thread that takes the results.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (n, work(job))));
                    if done_tx.send(result).is_err() {
                        break;
                    }
                }
            };
            if std::thread::Builder::new().spawn_scoped(scope, worker).is_err() {
                break;
            }
            started += 1;
        }
        OrderedPool { jobs, done, pending: VecDeque::new(), sent: 0, workers: started, work }
    }

    /// How many threads run the jobs: without any, [`OrderedPool::send`]
    /// runs its job on the calling thread.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// How many results are not taken yet.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Sends `job` to the workers.
    pub fn send(&mut self, job: J) {
        if self.workers == 0 {
            self.pending.push_back(Some((self.work)(job)));
        } else {
            self.jobs.send((self.sent, job)).expect("the workers wait for jobs");
            self.pending.push_back(None);
        }
        self.sent += 1;
    }

    /// The result of the first job sent and not taken, once it is back;
    /// `None` when every result was taken.
    pub fn next(&mut self) -> Option<T> {
        while self.pending.front().is_some_and(Option::is_none) {
            self.receive();
        }
        self.pending.pop_front().flatten()
    }

    /// The results of every job sent and not taken, in order.
    pub fn rest(mut self) -> Vec<T> {
        while self.pending.iter().any(Option::is_none) {
            self.receive();
        }
        std::mem::take(&mut self.pending).into_iter().flatten().collect()
    }

    /// Waits for a result, in whatever order they come back.
    fn receive(&mut self) {
        let (n, result) = match self.done.recv().expect("the workers live while jobs are out") {
            Ok(done) => done,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let first = self.sent - self.pending.len();
        self.pending[n - first] = Some(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come in the order the jobs were sent, however long each
    /// takes, with workers and without.
    #[test]
    fn results_come_in_the_order_sent() {
        for workers in [0, 1, 3] {
            let work = |n: u64| {
                std::thread::sleep(std::time::Duration::from_millis((7 * n) % 5));
                n * n
            };
            let taken = std::thread::scope(|scope| {
                let mut pool = OrderedPool::start(scope, workers, &work);
                let mut taken = Vec::new();
                for n in 0..20 {
                    pool.send(n);
                    if pool.pending() > 4 {
                        taken.extend(pool.next());
                    }
                }
                taken.extend(pool.rest());
                taken
            });
            assert_eq!(taken, (0..20).map(|n| n * n).collect::<Vec<u64>>(), "{workers} workers");
        }
    }

    /// A worker's panic goes on in the thread that takes its result.
    #[test]
    fn a_workers_panic_goes_on_in_the_taker() {
        let work = |n: u32| if n == 2 { panic!("job 2") } else { n };
        let caught = std::panic::catch_unwind(|| {
            std::thread::scope(|scope| {
                let mut pool = OrderedPool::start(scope, 2, &work);
                (0..4).for_each(|n| pool.send(n));
                pool.rest()
            })
        });
        assert!(caught.is_err());
    }
}
