//! `cargo fuzz run decode`: arbitrary bytes into the strict decoder (see `conneg_fuzz::decode`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| conneg_fuzz::decode(data));
