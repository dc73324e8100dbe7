//! The `conneg` command.

fn main() {}
