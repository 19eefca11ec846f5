//! The sampling loop shared by `compare`'s runs and `record`: it owns the
//! tree walker, the sampler with its CPU budget, and the tick schedule. A
//! due tick walks the tree, lets its caller look at the pids found (a load
//! check, an attached root), charges that work to the budget and yields the
//! tree's sample; between ticks it takes fresh samples for markers. What a
//! sample means, and where it goes, is the caller's business: never
//! published here.

use crate::model::Sample;
use crate::sample::{thread_cpu_seconds, Sampler, TreeWalker, DEFAULT_BUDGET};
use std::time::{Duration, Instant};

/// What a tick gave. A return value consumed at once, never stored, so the
/// sample stays inline rather than boxed on every tick.
#[allow(clippy::large_enum_variant)]
pub enum Tick {
    /// The next tick is not due yet.
    NotDue,
    /// The walk found no process of the tree.
    Empty,
    Sampled(Sample),
}

pub struct SamplingLoop {
    walker: TreeWalker,
    sampler: Sampler,
    interval: Duration,
    start: Instant,
    next_tick: Instant,
    ramp: bool,
}

/// The first step of a ramped schedule (`SamplingLoop::ramped`).
const RAMP_FIRST: Duration = Duration::from_millis(10);

impl SamplingLoop {
    /// Samples the descendants of `root` every `interval` from now on, the
    /// first tick due at once.
    pub fn new(root: i32, interval: Duration) -> SamplingLoop {
        let sampler = Sampler::new(DEFAULT_BUDGET);
        let walker = TreeWalker::new(root);
        let start = Instant::now();
        SamplingLoop {
            walker,
            sampler,
            interval,
            start,
            next_tick: start,
            ramp: false,
        }
    }

    /// Ticks at 0, 10, 20, 40, 80 ms... (each step the time elapsed, from
    /// 10 ms up to the interval), then every interval: a run shorter than a
    /// few intervals is still read through its life (its peak, a mean),
    /// not only at its start-up.
    pub(crate) fn ramped(self) -> SamplingLoop {
        SamplingLoop { ramp: true, ..self }
    }

    /// When sampling started: time zero of the samples the loop times.
    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }

    pub fn sampler_mut(&mut self) -> &mut Sampler {
        &mut self.sampler
    }

    /// The tree right now, not charged: for signalling it, which is not
    /// sampling work.
    pub fn walk(&mut self) -> Vec<i32> {
        self.walker.walk()
    }

    /// Walks on a listing of /proc shared with the other loops that share
    /// theirs (`TreeWalker::share_listing`): a soak's instances.
    pub fn share_listing(&mut self) {
        self.walker.share_listing();
    }

    /// The next tick due at `at`, and every interval after it: loops given
    /// the same `at` tick in the same pass of their caller's loop.
    pub fn tick_from(&mut self, at: Instant) {
        self.next_tick = at;
    }

    /// Leaves `pid` and its descendants out of every later walk.
    pub(crate) fn exclude(&mut self, pid: i32) {
        self.walker.exclude(pid);
    }

    /// When the tick is due at `now`: walks the tree, lets `inspect` look at
    /// (or add to) the pids found, charges both to the budget, and samples
    /// the tree at `t_s()` seconds unless it is empty. The next tick is due
    /// an interval later, or an interval after `now` if the loop fell behind.
    pub fn tick(
        &mut self,
        now: Instant,
        inspect: impl FnOnce(&mut Vec<i32>),
        t_s: impl FnOnce() -> f64,
    ) -> Tick {
        if now < self.next_tick {
            return Tick::NotDue;
        }
        let pids = self.walk_charged(inspect);
        let tick = if pids.is_empty() {
            Tick::Empty
        } else {
            Tick::Sampled(self.sampler.sample(&pids, t_s()))
        };
        let step = match self.ramp {
            true => (now - self.start).clamp(RAMP_FIRST, self.interval.max(RAMP_FIRST)),
            false => self.interval,
        };
        self.next_tick += step;
        if self.next_tick <= now {
            self.next_tick = now + step;
        }
        tick
    }

    /// Walks the tree and lets `inspect` look at the pids, the work charged
    /// to the budget, without sampling: for checks that look between ticks.
    pub(crate) fn walk_charged(&mut self, inspect: impl FnOnce(&mut Vec<i32>)) -> Vec<i32> {
        let cpu_before = thread_cpu_seconds();
        let mut pids = self.walker.walk_rationed();
        inspect(&mut pids);
        self.sampler.charge(thread_cpu_seconds() - cpu_before);
        pids
    }

    /// A reading of the tree right now (its walk charged to the budget),
    /// PSS included whatever the budget when `with_pss`; `None` when no
    /// process of the tree is left. It does not move the tick schedule.
    pub(crate) fn fresh_sample(&mut self, with_pss: bool) -> Option<Sample> {
        let pids = self.walk_charged(|_| {});
        if pids.is_empty() {
            return None;
        }
        let t_s = (Instant::now() - self.start).as_secs_f64();
        Some(if with_pss {
            self.sampler.sample_with_pss(&pids, t_s)
        } else {
            self.sampler.sample(&pids, t_s)
        })
    }

    /// What sampling thinned over the run on a big tree, in words: how
    /// often the tree was walked, and the sampler's own note.
    pub fn thinning_note(&self) -> Option<String> {
        let note = self.sampler.thinning_note()?;
        let (walks, reused) = (self.walker.walks, self.walker.reused);
        Some(if reused > 0 {
            format!("{note}; tree walked on {walks} of {} ticks", walks + reused)
        } else {
            note
        })
    }

    /// How long until the next tick is due, at most `max`.
    pub(crate) fn nap(&self, max: Duration) -> Duration {
        self.next_tick
            .saturating_duration_since(Instant::now())
            .min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// A ramped schedule ticks at 0, 10, 20, 40 ms... up to the interval.
    #[test]
    fn a_ramped_schedule_doubles_its_step_up_to_the_interval() -> anyhow::Result<()> {
        let mut sleeper = Command::new("sleep").arg("30").spawn()?;
        let mut sampling =
            SamplingLoop::new(sleeper.id() as i32, Duration::from_millis(30)).ramped();
        let start = sampling.start();
        let at = |ms| start + Duration::from_millis(ms);
        let due: Vec<u64> = (0..=120)
            .filter(|&ms| !matches!(sampling.tick(at(ms), |_| {}, || 0.0), Tick::NotDue))
            .collect();
        sleeper.kill()?;
        sleeper.wait()?;
        assert_eq!(due, [0, 10, 20, 40, 70, 100]);
        Ok(())
    }

    /// A real tree: `sh` (the root) with one `sleep` descendant.
    #[test]
    fn ticks_on_schedule_sample_the_tree_and_find_it_empty_once_gone() -> anyhow::Result<()> {
        let mut shell = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .stdout(Stdio::null())
            .spawn()?;
        let root = shell.id() as i32;
        let interval = Duration::from_millis(200);
        let mut sampling = SamplingLoop::new(root, interval);
        // The shell may not have forked yet: the first tick is due at once.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut inspected = 0;
        let first = loop {
            let now = Instant::now();
            let tick = sampling.tick(now, |pids| inspected = pids.len(), || 1.5);
            match tick {
                Tick::Sampled(sample) => break sample,
                Tick::NotDue => std::thread::sleep(sampling.nap(interval)),
                Tick::Empty if now < deadline => {}
                Tick::Empty => anyhow::bail!("sleep never appeared under sh"),
            }
        };
        assert_eq!(first.t_s, 1.5);
        assert_eq!((first.processes, inspected), (1, 1));
        assert!(first.rss_bytes > 0);
        // Right after a tick the next one waits for its interval.
        assert!(matches!(
            sampling.tick(Instant::now(), |_| {}, || 0.0),
            Tick::NotDue
        ));
        assert!(sampling.nap(Duration::from_secs(1)) <= interval);
        let fresh = sampling
            .fresh_sample(true)
            .map(|s| (s.processes, s.pss_bytes));
        assert!(
            matches!(fresh, Some((1, Some(pss))) if pss > 0),
            "{fresh:?}"
        );
        assert_eq!(sampling.sampler().ticks(), 2);

        for pid in sampling.walk() {
            // SAFETY: kill with plain integers; the pid is our sleep.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        shell.wait()?;
        let late = Instant::now() + interval;
        assert!(matches!(sampling.tick(late, |_| {}, || 0.0), Tick::Empty));
        assert!(sampling.fresh_sample(false).is_none());
        assert!(sampling.sampler().cpu_seconds() > 0.0);
        Ok(())
    }
}
