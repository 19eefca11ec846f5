//! The main loop of one run, between spawn and the end of its tree: each
//! turn it ends the workload if asked to (`ending.rs`), lets a service run
//! advance its phases (`service.rs`), takes the sampling tick
//! (`sampling.rs`) or, until they settle, lets the load checks look
//! (`settle.rs`), then waits for the next event of the reaper, the stdout
//! tap or the service, at most until the next tick. A service's phase
//! changes get a fresh sample each; marker lines get the next reading of the
//! tree, readings for markers at most one per `MARK_WINDOW` (`marks.rs`).
//! It decides no status.

use super::ending::Ender;
use super::event::Event;
use super::extension::RunExtension;
use super::interrupt::Interrupt;
use super::marks::Marks;
use super::process;
use super::reaper::Usage;
use super::reclaim::Reclaimer;
use super::sampling::{SamplingLoop, Tick};
use super::service::{Action, ServiceRun};
use super::settle::Checks;
use crate::model::Sample;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The longest allocscope sleeps before looking at Ctrl-C and the time limit.
const MAX_NAP: Duration = Duration::from_millis(50);
/// How long the tap may take to reach EOF once the tree has ended.
const TAP_DRAIN: Duration = Duration::from_secs(2);

pub(super) struct Supervisor<'a> {
    /// The workload's main process.
    pub pid: i32,
    pub sampling: SamplingLoop,
    pub checks: Checks,
    pub service: Option<ServiceRun<'a>>,
    pub ender: Ender,
    pub extensions: &'a [&'a dyn RunExtension],
    pub samples: Vec<Sample>,
    pub marks: Marks,
    pub usage: Usage,
    /// The main process's raw wait status, once reaped.
    pub main_status: Option<i32>,
    pub tap_ended: bool,
    pub reclaim: Reclaimer,
}

/// How long a service's stop waits for the reclaim test's answers, beyond
/// four sampling intervals (the probe answers within half of one, and
/// `malloc_trim` on a fragmented 16-arena heap took 140 ms).
const RECLAIM_WAIT: Duration = Duration::from_secs(2);

impl Supervisor<'_> {
    /// Runs until the tree has ended; returns when it did.
    pub fn run(
        &mut self,
        events: &Receiver<Event>,
        interrupt: &Interrupt,
    ) -> anyhow::Result<Instant> {
        loop {
            let now = Instant::now();
            if self.ender.kill_due(now, interrupt) {
                if let Some(service) = self.service.as_mut() {
                    service.end_load();
                }
                process::kill_tree(self.pid, &self.sampling.walk());
            }
            let mut actions = match self.service.as_mut() {
                Some(service) if self.ender.running() => service.poll(now),
                _ => Vec::new(),
            };
            if self.ender.running() {
                self.tick(now);
                self.read_for_marks(now);
                self.reclaim_if_due(now);
            }
            let mut nap = self.sampling.nap(MAX_NAP);
            if let Some(poll) = self.checks.poll_interval() {
                nap = nap.min(poll);
            }
            // Markers wait for a reading only while the tree runs (it is not
            // read while being killed: they get its last reading).
            if let Some(wait) = self
                .marks
                .wait(Instant::now())
                .filter(|_| self.ender.running())
            {
                nap = nap.min(wait);
            }
            match events.recv_timeout(nap) {
                Ok(Event::TreeEnded(at)) => return Ok(at),
                Ok(event) => self.on_event(event, &mut actions)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(Instant::now()),
            }
            for action in actions {
                self.apply(action);
            }
        }
    }

    /// The sampling tick when due (the open load checks look at its walk),
    /// else, while a check is open, a walk for the checks alone.
    fn tick(&mut self, now: Instant) {
        let (pid, start) = (self.pid, self.sampling.start());
        let checks = &mut self.checks;
        let tick = self.sampling.tick(
            now,
            |pids| checks.on_tick(pid, pids),
            || (now - start).as_secs_f64(),
        );
        match tick {
            Tick::Sampled(sample) => {
                (self.checks.served).on_sample(self.sampling.sampler().processes());
                if let Some(hwm) = crate::sample::proc::read_status_hwm(pid) {
                    self.usage.note_main_hwm(hwm);
                }
                self.samples.push(sample);
                self.marks.settle(Some(&sample), now);
                for extension in self.extensions {
                    extension.on_sample(&sample, self.sampling.sampler());
                }
            }
            Tick::NotDue if !self.checks.settled() => {
                let checks = &mut self.checks;
                self.sampling
                    .walk_charged(|pids| checks.between_ticks(pid, pids));
            }
            Tick::NotDue | Tick::Empty => {}
        }
    }

    /// One event other than the tree's end; a service's answers go to
    /// `actions`.
    fn on_event(&mut self, event: Event, actions: &mut Vec<Action>) -> anyhow::Result<()> {
        let running = self.ender.running();
        match event {
            Event::Reaped(reaped) => {
                let is_load = self.service.as_ref().is_some_and(|s| s.is_load(reaped.pid));
                if !is_load {
                    self.usage.add(&reaped, reaped.pid == self.pid);
                }
                if reaped.pid == self.pid {
                    self.main_status = Some(reaped.status);
                }
                if let Some(service) = self.service.as_mut() {
                    actions.extend(service.on_reaped(reaped.pid, reaped.status, Instant::now()));
                }
            }
            Event::Ready(at) => {
                if let Some(service) = self.service.as_mut().filter(|_| running) {
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

    fn apply(&mut self, action: Action) {
        match action {
            Action::Exclude(load_pid) => self.sampling.exclude(load_pid),
            Action::Terminate => {
                if let Some(trigger) = self.reclaim.due_at_stop() {
                    self.request_reclaim(trigger, true);
                }
                process::terminate_tree(self.pid, &self.sampling.walk());
            }
            Action::Kill => process::kill_tree(self.pid, &self.sampling.walk()),
            Action::Mark(label) => {
                self.samples.extend(self.sampling.fresh_sample(true));
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
        let t_s = at
            .saturating_duration_since(self.sampling.start())
            .as_secs_f64();
        for (pattern, label) in marks {
            let since_start = at.saturating_duration_since(self.sampling.start());
            if let Some(trigger) = self.reclaim.due(since_start, Some(&label)) {
                self.reclaim.arm(trigger);
            }
            self.marks.add(pattern, label, t_s);
        }
    }

    /// Asks for the reclaim test when its time has come, or when its
    /// marker arrived and has had its reading (so the marker's memory is
    /// the workload's, not the test's).
    fn reclaim_if_due(&mut self, now: Instant) {
        let since_start = now.saturating_duration_since(self.sampling.start());
        let marker_read = self.marks.wait(now).is_none();
        let trigger = self
            .reclaim
            .take_armed(marker_read)
            .or_else(|| self.reclaim.due(since_start, None));
        if let Some(trigger) = trigger {
            self.request_reclaim(trigger, false);
        }
    }

    /// Asks every probed process of the tree for the reclaim test; with
    /// `wait`, until they answered (a service about to be stopped), at most
    /// `RECLAIM_WAIT` beyond four intervals. The samples from now on leave
    /// the run (`Reclaimer::conclude`).
    fn request_reclaim(&mut self, trigger: String, wait: bool) {
        let Some(heap) = self.checks.heap.as_mut() else {
            return;
        };
        let asked_at = Instant::now();
        self.reclaim.asked(asked_at, trigger);
        let pids = self.sampling.walk();
        if heap.request_reclaim(&pids) == 0 || !wait {
            return;
        }
        let deadline = asked_at + RECLAIM_WAIT + 4 * self.sampling.interval();
        while heap.unanswered(&self.sampling.walk()) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A reading of the tree for the markers waiting, when one is due; it
    /// also joins the time series. Once the tree is gone they get its last
    /// reading.
    fn read_for_marks(&mut self, now: Instant) {
        if self.marks.wait(now) != Some(Duration::ZERO) {
            return;
        }
        self.samples.extend(self.sampling.fresh_sample(false));
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
    pub fn drain_tap(&mut self, events: &Receiver<Event>) {
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
