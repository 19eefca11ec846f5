//! A `compare` run on the run engine (`engine.rs`): its one instance is
//! the tree (every descendant of allocscope, a subreaper), walked by the
//! load checks (`settle.rs`), which also look between ticks until they
//! settle; the supervisor is its hooks. Before each tick a service run
//! advances its phases (`service.rs`); each tick's sample joins the run;
//! after it, markers get their reading and the reclaim test is asked for
//! when due; after each wait the event is handled (a reaped process's
//! usage, readiness, the load's end, marker lines) and a service's
//! actions applied. A service's phase changes get a fresh sample each;
//! marker lines get the next reading of the tree, readings for markers at
//! most one per `MARK_WINDOW` (`marks.rs`). On Ctrl-C or the time limit
//! the engine has the tree killed here until it ended. It decides no
//! status.

use super::engine::{Clock, Followed, Hooks, Root};
use super::event::Event;
use super::marks::Marks;
use super::process;
use super::reaper::Usage;
use super::reclaim::Reclaimer;
use super::sampling::SamplingLoop;
use super::service::{Action, ServiceRun};
use super::settle::Checks;
use crate::model::Sample;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The longest allocscope sleeps before looking at Ctrl-C and the time limit.
pub(super) const MAX_NAP: Duration = Duration::from_millis(50);
/// How long the tap may take to reach EOF once the tree has ended.
const TAP_DRAIN: Duration = Duration::from_secs(2);

/// The run's tree.
pub(super) struct Tree {
    /// The workload's main process.
    pub pid: i32,
    pub sampling: SamplingLoop,
    pub checks: Checks,
}

impl Followed for Tree {
    fn parts(&mut self) -> (&mut SamplingLoop, Root<'_>) {
        (&mut self.sampling, Root::Looked(&mut self.checks))
    }

    fn clock(&self) -> Clock {
        Clock::Since(self.sampling.start())
    }

    fn keeps_empty(&self) -> bool {
        true
    }
}

pub(super) struct Supervisor<'a> {
    /// When sampling started: time zero of the markers.
    pub start: Instant,
    pub service: Option<ServiceRun<'a>>,
    /// The engine is ending the tree (Ctrl-C, the time limit).
    pub ending: bool,
    pub samples: Vec<Sample>,
    pub marks: Marks,
    pub usage: Usage,
    /// The main process's raw wait status, once reaped.
    pub main_status: Option<i32>,
    pub tap_ended: bool,
    pub reclaim: Reclaimer,
    /// A service's answers this turn, applied after the wait.
    pub actions: Vec<Action>,
}

/// How long a service's stop waits for the reclaim test's answers, beyond
/// four sampling intervals (the probe answers within half of one, and
/// `malloc_trim` on a fragmented 16-arena heap took 140 ms).
const RECLAIM_WAIT: Duration = Duration::from_secs(2);

impl Hooks<Tree> for Supervisor<'_> {
    fn before_tick(&mut self, _: &mut Tree, now: Instant) -> anyhow::Result<()> {
        if let Some(service) = self.service.as_mut() {
            self.actions = service.poll(now);
        }
        Ok(())
    }

    fn ticked(
        &mut self,
        tree: &mut Tree,
        now: Instant,
        kept: Option<&Sample>,
    ) -> anyhow::Result<()> {
        if let Some(sample) = kept {
            (tree.checks.served).on_sample(tree.sampling.sampler().processes());
            if let Some(hwm) = crate::sample::proc::read_status_hwm(tree.pid) {
                self.usage.note_main_hwm(hwm);
            }
            self.samples.push(*sample);
            self.marks.settle(Some(sample), now);
        }
        Ok(())
    }

    /// Between ticks, while a check is open: a walk for the checks alone.
    fn not_due(&mut self, tree: &mut Tree) {
        let (pid, checks) = (tree.pid, &mut tree.checks);
        if !checks.settled() {
            (tree.sampling).walk_charged(|pids| checks.between_ticks(pid, pids));
        }
    }

    fn after_pass(
        &mut self,
        trees: &mut [Tree],
        now: Instant,
    ) -> anyhow::Result<Option<&'static str>> {
        for tree in trees {
            self.read_for_marks(tree, now);
            self.reclaim_if_due(tree, now);
        }
        Ok(None)
    }

    /// Open load checks look sooner; markers wait for a reading only while
    /// the tree runs (it is not read while being killed: they get its last
    /// reading).
    fn nap(&self, trees: &[Tree], mut nap: Duration) -> Duration {
        for tree in trees {
            nap = nap.min(tree.checks.poll_interval().unwrap_or(nap));
        }
        let marks = self.marks.wait(Instant::now()).filter(|_| !self.ending);
        nap.min(marks.unwrap_or(nap))
    }

    fn woke(&mut self, trees: &mut [Tree], event: Option<Event>) -> anyhow::Result<()> {
        let mut actions = std::mem::take(&mut self.actions);
        let Some(tree) = trees.first_mut() else {
            return Ok(());
        };
        if let Some(event) = event {
            self.on_event(tree.pid, event, &mut actions)?;
        }
        for action in actions {
            self.apply(tree, action);
        }
        Ok(())
    }

    fn kill(&mut self, trees: &mut [Tree]) {
        self.ending = true;
        if let Some(service) = self.service.as_mut() {
            service.end_load();
        }
        for tree in trees {
            process::kill_tree(tree.pid, &tree.sampling.walk());
        }
    }
}

impl Supervisor<'_> {
    /// One event other than the tree's end; a service's answers go to
    /// `actions`.
    fn on_event(
        &mut self,
        pid: i32,
        event: Event,
        actions: &mut Vec<Action>,
    ) -> anyhow::Result<()> {
        match event {
            Event::Reaped(reaped) => {
                let is_load = self.service.as_ref().is_some_and(|s| s.is_load(reaped.pid));
                if !is_load {
                    self.usage.add(&reaped, reaped.pid == pid);
                }
                if reaped.pid == pid {
                    self.main_status = Some(reaped.status);
                }
                if let Some(service) = self.service.as_mut() {
                    actions.extend(service.on_reaped(reaped.pid, reaped.status, Instant::now()));
                }
            }
            Event::Ready(at) => {
                if let Some(service) = self.service.as_mut().filter(|_| !self.ending) {
                    actions.extend(service.on_ready(at)?);
                }
            }
            Event::LoadDone(report, at) => {
                if let Some(service) = self.service.as_mut() {
                    actions.extend(service.on_load_done(&report, at));
                }
            }
            Event::Marks { marks, at } => self.mark(marks, at),
            Event::TapEnded => self.tap_ended = true,
            Event::TreeEnded(_) => {}
        }
        Ok(())
    }

    fn apply(&mut self, tree: &mut Tree, action: Action) {
        match action {
            Action::Exclude(load_pid) => tree.sampling.exclude(load_pid),
            Action::Terminate => {
                if let Some(trigger) = self.reclaim.due_at_stop() {
                    self.request_reclaim(tree, trigger, true);
                }
                process::terminate_tree(tree.pid, &tree.sampling.walk());
            }
            Action::Kill => process::kill_tree(tree.pid, &tree.sampling.walk()),
            Action::Mark(label) => {
                self.samples.extend(tree.sampling.fresh_sample(true));
                if let (Some(service), Some(sample)) = (self.service.as_mut(), self.samples.last())
                {
                    service.sampled(label, sample);
                }
                self.marks
                    .push_read(0, label.to_string(), self.samples.last(), Instant::now());
            }
        }
    }

    /// Marker lines the tap read together at `at`: they wait for the next
    /// reading of the tree.
    fn mark(&mut self, marks: Vec<(u32, String)>, at: Instant) {
        let start = self.start;
        let t_s = at.saturating_duration_since(start).as_secs_f64();
        for (pattern, label) in marks {
            let since_start = at.saturating_duration_since(start);
            if let Some(trigger) = self.reclaim.due(since_start, Some(&label)) {
                self.reclaim.arm(trigger);
            }
            self.marks.add(pattern, label, t_s);
        }
    }

    /// Asks for the reclaim test when its time has come, or when its
    /// marker arrived and has had its reading (so the marker's memory is
    /// the workload's, not the test's).
    fn reclaim_if_due(&mut self, tree: &mut Tree, now: Instant) {
        let since_start = now.saturating_duration_since(tree.sampling.start());
        let marker_read = self.marks.wait(now).is_none();
        let trigger = self
            .reclaim
            .take_armed(marker_read)
            .or_else(|| self.reclaim.due(since_start, None));
        if let Some(trigger) = trigger {
            self.request_reclaim(tree, trigger, false);
        }
    }

    /// Asks every probed process of the tree for the reclaim test; with
    /// `wait`, until they answered (a service about to be stopped), at most
    /// `RECLAIM_WAIT` beyond four intervals. The samples from now on leave
    /// the run (`Reclaimer::conclude`).
    fn request_reclaim(&mut self, tree: &mut Tree, trigger: String, wait: bool) {
        let Some(heap) = tree.checks.heap.as_mut() else {
            return;
        };
        let asked_at = Instant::now();
        self.reclaim.asked(asked_at, trigger);
        let pids = tree.sampling.walk();
        if heap.request_reclaim(&pids) == 0 || !wait {
            return;
        }
        let deadline = asked_at + RECLAIM_WAIT + 4 * tree.sampling.interval();
        while heap.unanswered(&tree.sampling.walk()) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A reading of the tree for the markers waiting, when one is due; it
    /// also joins the time series. Once the tree is gone they get its last
    /// reading.
    fn read_for_marks(&mut self, tree: &mut Tree, now: Instant) {
        if self.marks.wait(now) != Some(Duration::ZERO) {
            return;
        }
        self.samples.extend(tree.sampling.fresh_sample(false));
        self.marks.settle(self.samples.last(), now);
    }

    /// The tree is gone, so every write end of the stdout pipe is closed and
    /// the tap is about to reach EOF: collects the markers it still holds.
    /// Nothing is left to measure for them, so they (and those still waiting
    /// for a reading) carry the tree's last reading (the last sample), which
    /// is what its memory was when it ended; a marker is dropped only when
    /// the run has no sample at all. The wait
    /// is bounded: a descendant that handed its stdout to a process outside
    /// the tree could hold the pipe open; that tap thread then ends with the
    /// pipe, and the stdout file holds what was read until then.
    pub(crate) fn drain_tap(&mut self, events: &Receiver<Event>) {
        let drain_until = Instant::now() + TAP_DRAIN;
        while !self.tap_ended {
            match events.recv_timeout(drain_until.saturating_duration_since(Instant::now())) {
                Ok(Event::Marks { marks, at }) => self.mark(marks, at),
                Ok(
                    Event::Reaped(_) | Event::TreeEnded(_) | Event::Ready(_) | Event::LoadDone(..),
                ) => {}
                Ok(Event::TapEnded) | Err(_) => self.tap_ended = true,
            }
        }
        self.marks.settle(self.samples.last(), Instant::now());
    }
}
