//! `--keep-runs`: a test's run written to the run store as a normal run is (its directory,
//! `run.json` and journal), so `tfc show`, `tfc runs` and `tfc report` open it.

use std::path::PathBuf;

use crate::run::RunRecord;
use crate::run::machine::Line;
use crate::value::Value;

/// A run to be written to the store (`--keep-runs`): its journal so far.
pub(crate) struct Keep {
    root: PathBuf,
    def: Option<Value>,
    cwd: PathBuf,
    first: Option<Value>,
    lines: String,
}

impl Keep {
    /// A run kept under project `root`, of definition `def`, started in `cwd`.
    pub(crate) fn new(root: PathBuf, def: Option<Value>, cwd: &std::path::Path) -> Keep {
        Keep {
            root,
            def,
            cwd: cwd.to_path_buf(),
            first: None,
            lines: String::new(),
        }
    }

    pub(crate) fn line(&mut self, line: Line) {
        match line {
            // The first line (`run-start`) is written with the directory.
            Line::Event(v) if self.first.is_none() && self.lines.is_empty() => self.first = Some(v),
            Line::Event(v) => {
                self.lines.push_str(&v.to_json());
                self.lines.push('\n');
            }
            Line::Input(input) => {
                crate::run::driver::write_input_line(&input, &mut self.lines);
                self.lines.push('\n');
            }
            Line::Raw(text) => {
                self.lines.push_str(&text);
                self.lines.push('\n');
            }
        }
    }

    /// Write the ended run: its directory, `run.json` and journal.
    pub(crate) fn write(&self, record: &RunRecord, versions: &[u64]) -> std::io::Result<()> {
        use crate::run::driver::{PhaseTexts, flow_def_hash, stored_value};
        let meta = self.def.as_ref().map(flow_def_hash).unwrap_or_default();
        let def = self.def.as_ref();
        let (first, _) = stored_value(
            record,
            versions,
            None,
            def,
            &self.cwd,
            &meta,
            &mut PhaseTexts::default(),
        );
        let mut store = crate::run::store::RunStore::create(
            &self.root,
            &record.flow,
            &record.run_id,
            &first,
            self.first.as_ref().unwrap_or(&Value::Null),
        )?;
        store.append_raw(&self.lines)?;
        let (value, errors) = stored_value(
            record,
            versions,
            Some(&mut store),
            def,
            &self.cwd,
            &meta,
            &mut PhaseTexts::default(),
        );
        if let Some(e) = errors.into_iter().next() {
            return Err(e);
        }
        store.save(&value, std::time::Instant::now())?;
        store.close()
    }
}
