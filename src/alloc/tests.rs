//! Tests for the grammar, resolution and ELF checks, on this machine's real
//! libraries where they matter.
