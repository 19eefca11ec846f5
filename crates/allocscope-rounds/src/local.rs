//! The local engine: rounds run by this process, one at a time, through the
//! session (`session.rs`), each run stored as soon as it ends; warm-ups
//! before the first round. A round cut short by Ctrl-C keeps its finished
//! runs.

use super::engine::{Ended, Engine, Round, RoundEnd, Started};
use super::session::{Session, SessionSettings, Step};
use allocscope_core::plan::PlannedRun;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;

pub struct Local<'s> {
    settings: &'s SessionSettings<'s>,
    quiet: bool,
    interrupt: &'s Interrupt,
    /// What the session starts the experiment with (taken by the first round).
    start: Option<(String, Vec<(&'static str, String)>)>,
    /// The most rounds the plan can take (with the first round's
    /// configurations, the most runs, for the progress line).
    rounds: u32,
    session: Option<Session<'s>>,
    ended: Vec<RoundEnd>,
}

impl<'s> Local<'s> {
    /// `environment` is stored with the experiment before its first run.
    pub fn new(
        settings: &'s SessionSettings<'s>,
        quiet: bool,
        interrupt: &'s Interrupt,
        started_at: String,
        environment: Vec<(&'static str, String)>,
        rounds: u32,
    ) -> Local<'s> {
        Local {
            settings,
            quiet,
            interrupt,
            start: Some((started_at, environment)),
            rounds,
            session: None,
            ended: Vec::new(),
        }
    }

    /// Runs `planned` in order; false when Ctrl-C stopped them.
    fn run_all(
        session: &mut Session,
        store: &mut Store,
        planned: impl IntoIterator<Item = PlannedRun>,
    ) -> anyhow::Result<bool> {
        for run in planned {
            if session.run(store, &run)? == Step::Interrupted {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl Engine for Local<'_> {
    fn rounds_at_once(&self) -> usize {
        1
    }

    /// Runs the rounds here and now; the first starts the experiment and
    /// runs the warm-ups of its configurations (a cell of an adaptive plan
    /// warms only those its round runs).
    fn start(&mut self, store: &mut Store, rounds: &[Round]) -> anyhow::Result<Started> {
        let mut going = true;
        if let Some((started_at, environment)) = self.start.take() {
            let first: &[usize] = rounds.first().map_or(&[], |r| &r.configs);
            let warmup = self.settings.measuring.warmup;
            let mut session = Session::start(
                self.settings,
                self.quiet,
                self.interrupt,
                store,
                started_at,
                &environment,
                first.len() * (warmup + self.rounds) as usize,
            )?;
            let warmups = allocscope_core::plan::interleaved(first.len(), 0, warmup)
                .into_iter()
                .map(|run| PlannedRun {
                    config: first[run.config],
                    ..run
                });
            going = Self::run_all(&mut session, store, warmups)?;
            self.session = Some(session);
        }
        let Some(session) = self.session.as_mut() else {
            anyhow::bail!("the local engine has no session");
        };
        for round in rounds {
            let planned = round.configs.iter().map(|&config| PlannedRun {
                config,
                repetition: round.index + 1,
                warmup: false,
            });
            going = going && Self::run_all(session, store, planned)?;
            self.ended.push(RoundEnd {
                round: round.index,
                ended: Ended::Stored {
                    experiment_id: session.experiment_id(),
                },
            });
        }
        Ok(Started::Following)
    }

    fn wait(&mut self, _: &mut Store) -> anyhow::Result<Vec<RoundEnd>> {
        Ok(std::mem::take(&mut self.ended))
    }

    /// Nothing to do: a run here stops on the signal itself.
    fn cancel(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn say(&self, line: &str) {
        match &self.session {
            Some(session) => session.say(line),
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }

    fn round(&self, line: &str) {
        match &self.session {
            Some(session) => session.round(line),
            None => self.say(line),
        }
    }
}
