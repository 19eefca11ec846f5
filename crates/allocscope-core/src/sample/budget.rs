//! The sampler's CPU budget, for the *whole* sampler (tree walks and maps
//! checks charged by the caller included): a token bucket that fills at
//! `fraction` seconds of CPU per second, which every read spends from.
//!
//! The bucket keeps what the last PSS pass cost in reserve for a tree the
//! estimate cannot follow (`Pass::Shaken`), whose pass runs at once, in
//! debt if need be; a stale pass is redone when the reserve is whole, any
//! other when the bucket holds a pass beyond it. A smaller floor keeps PSS
//! coming when the cheap reads alone use the budget (very short intervals),
//! and a pass's worth of it for processes read alone. It counts the
//! sampler's own CPU time, so every run can report it.

use std::time::{Duration, Instant};

/// Share of the budget that PSS reads may always use, even when the cheap
/// reads have spent the rest.
const PSS_FLOOR_SHARE: f64 = 0.2;
/// The most CPU time the bucket saves up, so a quiet spell cannot buy a
/// burst of PSS passes.
const MAX_SAVED_CPU: Duration = Duration::from_millis(20);

/// The token bucket, and the CPU time it was charged.
#[derive(Debug, Default)]
pub(super) struct Budget {
    pub(super) fraction: f64,
    /// CPU seconds the sampler may still spend (may go negative).
    pub(super) tokens_s: f64,
    /// The same for the PSS floor.
    pub(super) floor_tokens_s: f64,
    last_fill: Option<Instant>,
    /// What the last PSS pass cost; the next one is expected to cost as much.
    pub(super) last_pass_s: f64,
    /// Thread CPU time the sampler used so far: its own overhead.
    pub(super) cpu_s: f64,
    /// The part of it spent reading smaps_rollup.
    pub(super) pss_cpu_s: f64,
}

/// Which bucket a PSS read spends from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Payer {
    Bucket,
    /// The PSS floor, when the bucket is spent.
    Floor,
}

/// What the tree asks of a full pass (`Budget::pass_payer`).
pub(super) enum Pass {
    /// A tree the estimate cannot follow (`PssEstimator::shaken`: a burst
    /// of processes joined or left).
    Shaken,
    /// The last pass is stale (a process came or went, RSS drifted), or
    /// nothing is estimated.
    Stale,
    /// The estimate follows the tree.
    Current,
}

impl Budget {
    /// `fraction` is the share of one core the whole sampler may use, e.g.
    /// 0.01 for 1%.
    pub(super) fn new(fraction: f64) -> Budget {
        Budget {
            fraction: fraction.max(0.0),
            ..Budget::default()
        }
    }

    /// Its share of `total` (of one core), spent by `samplers` samplers
    /// running side by side together.
    pub(super) fn share(&mut self, total: f64, samplers: usize) {
        self.fraction = total.max(0.0) / samplers.max(1) as f64;
    }

    /// Counts CPU time spent for the sampler against the bucket and in
    /// `cpu_s`.
    pub(super) fn charge(&mut self, cpu_s: f64) {
        self.cpu_s += cpu_s.max(0.0);
        self.tokens_s -= cpu_s.max(0.0);
    }

    /// Takes a tick's cheap reads from the bucket (`cpu_s` counts them
    /// with the rest of the tick).
    pub(super) fn spend(&mut self, cost_s: f64) {
        self.tokens_s -= cost_s;
    }

    /// Fills the bucket up to now; returns `share` of what the budget gave
    /// since the last fill (`None` on the first): what the tick's cheap
    /// reads may spend.
    pub(super) fn refill(&mut self, share: f64) -> Option<f64> {
        let now = Instant::now();
        // Room for the reserve and a pass beyond it, and some slack.
        let cap = MAX_SAVED_CPU.as_secs_f64().max(3.0 * self.last_pass_s);
        let elapsed_s = self.last_fill.map(|last| (now - last).as_secs_f64());
        if let Some(elapsed) = elapsed_s {
            self.tokens_s = (self.tokens_s + elapsed * self.fraction).min(cap);
            self.floor_tokens_s =
                (self.floor_tokens_s + elapsed * self.fraction * PSS_FLOOR_SHARE).min(cap);
        }
        self.last_fill = Some(now);
        elapsed_s.map(|elapsed| share * self.fraction * elapsed)
    }

    /// Whether this tick makes a full PSS pass, and which bucket pays for
    /// it; `force` for the first one and those a caller asks for.
    ///
    /// The bucket keeps one pass in reserve for a tree the estimate
    /// cannot follow (`Pass::Shaken`: a burst of connections, a
    /// shutdown), whose pass may then borrow up to `MAX_SAVED_CPU` or
    /// one pass; a stale pass (a process came or went, RSS drifted)
    /// waits for the reserve to be whole, others for a pass beyond it.
    /// Over a run this spends what passes did without the reserve, but
    /// a burst no longer comes right after a pass that left the bucket
    /// in debt (PostgreSQL's 8 backends connect just after the pass that
    /// pgbench's first connection made stale) and is guessed for the
    /// seconds the debt takes to repay.
    pub(super) fn pass_payer(&self, pass: Pass, force: bool) -> Option<Payer> {
        let pass_s = self.last_pass_s;
        let due = match pass {
            Pass::Shaken => -pass_s.max(MAX_SAVED_CPU.as_secs_f64()),
            Pass::Stale => pass_s,
            Pass::Current => 2.0 * pass_s,
        };
        // The floor keeps a pass's worth for processes read alone (new
        // ones, probes): after a burst's pass has put the bucket in debt,
        // they are what keeps the estimate following the newcomers' growth.
        first(
            force || self.tokens_s >= due,
            self.floor_tokens_s >= 2.0 * pass_s,
        )
    }

    /// Who pays for one process read alone between full passes: the bucket
    /// while less than one pass in debt, else the PSS floor while it holds
    /// tokens. A new process is read even when that puts the bucket in
    /// debt: a burst of them (a server's workers, a pool of connections)
    /// often comes right after a pass, and unread they are guessed from
    /// their parent for seconds. The debt is repaid by the next pass
    /// waiting longer.
    pub(super) fn alone_payer(&self) -> Option<Payer> {
        first(self.tokens_s > -self.last_pass_s, self.floor_tokens_s > 0.0)
    }

    /// How many reads costing `each_s` the bucket holds, or the floor one.
    pub(super) fn reads_affordable(&self, each_s: f64) -> usize {
        let afford = |tokens_s: f64| (tokens_s / each_s.max(1e-9)).max(0.0) as usize;
        afford(self.tokens_s).max(afford(self.floor_tokens_s).min(1))
    }

    /// Who pays for one more of a big tree's reads costing `each_s`; any
    /// read costs the bucket when `force`d or not priced yet.
    pub(super) fn read_payer(&self, each_s: f64, force: bool) -> Option<Payer> {
        let bucket = force || each_s == 0.0 || self.tokens_s >= each_s;
        first(bucket, self.floor_tokens_s >= each_s)
    }

    /// Charges a full pass's `cost_s` to `payer`: what the next one is
    /// expected to cost.
    pub(super) fn pay_pass(&mut self, payer: Payer, cost_s: f64) {
        self.last_pass_s = cost_s;
        self.pay(payer, cost_s);
    }

    /// Charges a PSS read's `cost_s` to `payer`.
    pub(super) fn pay(&mut self, payer: Payer, cost_s: f64) {
        self.pss_cpu_s += cost_s;
        match payer {
            Payer::Bucket => self.tokens_s -= cost_s,
            Payer::Floor => self.floor_tokens_s -= cost_s,
        }
    }
}

/// The bucket when it may pay, else the floor when it may.
fn first(bucket: bool, floor: bool) -> Option<Payer> {
    bucket
        .then_some(Payer::Bucket)
        .or(floor.then_some(Payer::Floor))
}
