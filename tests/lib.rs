//! Nothing here: this package only holds cross-crate tests (see Cargo.toml).
