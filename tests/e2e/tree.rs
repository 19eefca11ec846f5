//! Process trees measured truthfully: the listing of a store holding
//! recordings, PSS estimated between full reads, arenas per process.

use crate::common::{stderr, stdout, Scratch};

#[test]
fn report_list_shows_recordings_with_the_command_that_shows_them() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let output = scratch.run(&[
        "record",
        "--interval",
        "50ms",
        "--db",
        db,
        "--",
        "sh",
        "-c",
        "sleep 0.3",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let list = scratch.run(&["report", "--list", "--db", db]);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert!(!text.contains("no experiments"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("sleep 0.3"))
        .unwrap_or_else(|| panic!("no recording in {text}"));
    assert!(line.trim_start().starts_with('1'), "{line}");
    assert!(text.contains("allocscope report --recordings ID"), "{text}");
    // The command it names does show the recording.
    let shown = scratch.run(&["report", "--db", db, "--recordings", "1"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
}
