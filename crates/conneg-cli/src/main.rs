//! The `conneg` command: look at CBOR from servers, storage or watch streams.
//!
//! * `conneg decode [--seq] [FILE|-]`: strict-profile CBOR in, compact JSON out.
//! * `conneg encode [--deterministic] [--text-strings] [--seq] [FILE|-]`: JSON in, self-described
//!   CBOR out.
//! * `conneg diag [--seq] [--text] [FILE|-]`: RFC 8949 §8 diagnostic notation.
//! * `conneg get|create|apply|delete|watch --server URL [--json|--cbor|--prefer-cbor] [-v] PATH
//!   [-f FILE|DIR|-]`: talk to a server, preferring CBOR and falling back on 415 per
//!   (method, resource); what a 415 taught is cached for 10 minutes under
//!   `$XDG_CACHE_HOME/conneg/` (see `client.rs`). Results print as JSON, one per line.
//!
//! * `conneg validate (--server URL | --openapi FILE...) FILE...`: check objects (YAML, JSON or
//!   CBOR) against the schemas and rules a server publishes, with the server's own validator;
//!   the causes print as the server's 422 would word them (see `validate.rs`). Exit 0 when
//!   valid, 1 when invalid, 2 when it cannot tell.
//!
//! Built on conneg-cbor's `transcode` (no intermediate tree: key order and int/float kept),
//! `SeqDecoder` and `diag` modules.
//!
//! Output is written only once the whole input has been processed: on any error stdout stays
//! empty, stderr gets one line `error: ...` and the exit status is 1 (2 for usage errors).

mod cache;
mod client;
mod validate;

use clap::{Args, Parser, Subcommand};
use conneg_cbor::{DecodeOptions, EncodeOptions, SeqDecoder, StringEncoding, transcode};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "conneg",
    version,
    about = "Decode, encode and inspect Kubernetes-profile CBOR (KEP-4222), talk to API servers preferring CBOR, and validate objects as a server would",
    long_about = "Decode, encode and inspect CBOR as Kubernetes writes it (KEP-4222): \
                  self-described (d9 d9 f7), strings as byte strings, RFC 8742 sequences for \
                  watch streams. Decoding applies the strict profile: duplicate keys, NaN, \
                  Infinity, undefined, bignums and integers outside int64 are errors. \
                  get/create/apply/delete/watch talk to an API server preferring CBOR, fall \
                  back on 415 per (method, resource), and cache what a 415 taught for 10 \
                  minutes under $XDG_CACHE_HOME/conneg. validate checks objects against the \
                  schemas and rules a server publishes, with the server's own validator."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    #[command(flatten)]
    Client(client::ClientCmd),
    /// Validate objects against a server's published schemas and rules, as the server would.
    ///
    /// Each object (YAML, JSON or CBOR; lists item by item) is checked against the schema the
    /// server publishes for its apiVersion and kind in its OpenAPI v3 documents, with the
    /// validator the server runs (value validations, then x-kubernetes-validations CEL rules).
    /// Each cause prints on its own line as the server's 422 words it: `Flunder.wardle.example.com
    /// "x" is invalid: spec.x: Invalid value: ...`. Metadata and defaulting are the server's.
    /// Exit status: 0 all valid (nothing printed), 1 some invalid, 2 on any other error.
    Validate(validate::ValidateArgs),
    /// Strict-profile CBOR in, compact JSON out (one line per item).
    ///
    /// Byte strings print as JSON strings (Kubernetes writes every string as a byte string);
    /// integers print as integers and floats always with a decimal point or an exponent.
    Decode {
        /// The input is an RFC 8742 CBOR sequence (e.g. a watch stream): print one JSON value
        /// per item, per line.
        #[arg(long)]
        seq: bool,
        #[command(flatten)]
        input: Input,
    },
    /// JSON in, self-described CBOR out (fast mode unless --deterministic: no sorting).
    Encode {
        /// Sort map entries by encoded key (RFC 8949 §4.2.1), as for storage.
        #[arg(long)]
        deterministic: bool,
        /// Write strings and keys as text strings (major type 3) instead of byte strings.
        #[arg(long)]
        text_strings: bool,
        /// The input is a stream of whitespace-separated JSON values: write a CBOR sequence,
        /// each item with its own d9 d9 f7 prefix.
        #[arg(long)]
        seq: bool,
        #[command(flatten)]
        input: Input,
    },
    /// RFC 8949 §8 diagnostic notation, e.g. 55799({h'6e616d65': h'61'}).
    ///
    /// Shows any well-formed CBOR, including what the strict profile rejects, so that you can
    /// see why `decode` fails.
    Diag {
        /// The input is a CBOR sequence: the items separated by ", " (RFC 8742 §4.2).
        #[arg(long)]
        seq: bool,
        /// Show byte strings that are valid UTF-8 as quoted text (Kubernetes writes every
        /// string as a byte string).
        #[arg(long)]
        text: bool,
        #[command(flatten)]
        input: Input,
    },
}

#[derive(Args)]
struct Input {
    /// Input file; `-` or nothing for stdin.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
}

impl Input {
    fn read(&self) -> Result<Vec<u8>, String> {
        let mut buf = Vec::new();
        match &self.file {
            Some(p) if p.as_os_str() != "-" => {
                buf = std::fs::read(p)
                    .map_err(|e| format!("cannot read {}: {}", p.display(), io_msg(&e)))?;
            }
            _ => {
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut buf)
                    .map_err(|e| format!("cannot read stdin: {}", io_msg(&e)))?;
            }
        }
        Ok(buf)
    }
}

/// An I/O error message without Rust's " (os error 2)" suffix.
fn io_msg(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cmd = match cli.cmd {
        Cmd::Client(cmd) => return client::main(cmd),
        Cmd::Validate(args) => return validate::main(args),
        cmd => cmd,
    };
    match run(cmd) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(&out).and_then(|()| stdout.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                // A closed pipe (`conneg decode x | head`) is not worth a message.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => fail(&format!("cannot write output: {}", io_msg(&e))),
            }
        }
        Err(msg) => fail(&msg),
    }
}

fn fail(msg: &str) -> ExitCode {
    fail_with(msg, 1)
}

/// Prints `error: <msg>` as one line on stderr; exits with `code`.
fn fail_with(msg: &str, code: u8) -> ExitCode {
    // One line of printable text, whatever the message holds (paths quote map keys verbatim).
    let line: String = msg
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    eprintln!("error: {line}");
    ExitCode::from(code)
}

fn run(cmd: Cmd) -> Result<Vec<u8>, String> {
    match cmd {
        Cmd::Client(_) | Cmd::Validate(_) => {
            Err("client and validate commands run from main".into())
        }
        Cmd::Decode { seq, input } => decode(&input.read()?, seq),
        Cmd::Encode {
            deterministic,
            text_strings,
            seq,
            input,
        } => {
            let mut opts = if deterministic {
                EncodeOptions::deterministic()
            } else {
                EncodeOptions::fast()
            };
            if text_strings {
                opts = opts.string_encoding(StringEncoding::Text);
            }
            encode(&input.read()?, opts, seq)
        }
        Cmd::Diag { seq, text, input } => {
            let input = input.read()?;
            let opts = conneg_cbor::diag::DiagOptions::new().byte_string_text(text);
            let r = if seq {
                opts.diagnose_seq(&input)
            } else if input.is_empty() {
                return Err("empty input".into());
            } else {
                opts.diagnose(&input)
            };
            let mut out = r.map_err(|e| decode_error(&e, None))?;
            if !out.is_empty() {
                out.push('\n');
            }
            Ok(out.into_bytes())
        }
    }
}

/// Describes a decode error for the user: the codec's message (with its path), and for a
/// sequence which item failed.
fn decode_error(e: &conneg_cbor::Error, item: Option<usize>) -> String {
    let mut s = e.to_string();
    if let Some(i) = item {
        s = format!("item {i}: {s}");
    }
    // Where in the input, for errors a path does not locate well (malformed or cut-off input).
    let positional = matches!(
        e.kind(),
        conneg_cbor::ErrorKind::Syntax | conneg_cbor::ErrorKind::Eof
    );
    if positional
        && !s.contains("offset")
        && e.message() != "empty input"
        && let Some(off) = e.offset()
    {
        s.push_str(&format!(" (byte offset {off})"));
    }
    s
}

fn decode(input: &[u8], seq: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(input.len() * 2);
    let opts = DecodeOptions::default();
    if !seq {
        transcode::cbor_to_json_writer(input, &opts, &mut out)
            .map_err(|e| decode_error(&e, None))?;
        out.push(b'\n');
        return Ok(out);
    }
    let mut dec = SeqDecoder::with_options(opts);
    dec.push(input);
    let mut item = 0;
    loop {
        match dec.next_item() {
            Ok(Some(raw)) => {
                transcode::cbor_to_json_writer(raw, &opts, &mut out)
                    .map_err(|e| decode_error(&e, Some(item)))?;
                out.push(b'\n');
                item += 1;
            }
            Ok(None) => break,
            Err(e) => return Err(decode_error(&e, Some(item))),
        }
    }
    dec.finish().map_err(|e| decode_error(&e, Some(item)))?;
    Ok(out)
}

fn encode(input: &[u8], opts: EncodeOptions, seq: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(input.len());
    if !seq {
        transcode::json_to_cbor_with(input, &opts, &mut out).map_err(|e| json_error(&e, None))?;
        return Ok(out);
    }
    // Find where each JSON value ends, then transcode each slice without building a tree.
    let mut stream =
        serde_json::Deserializer::from_slice(input).into_iter::<serde::de::IgnoredAny>();
    let mut start = 0;
    let mut item = 0;
    while let Some(r) = stream.next() {
        r.map_err(|e| format!("invalid JSON input: item {item}: {e}"))?;
        let end = stream.byte_offset();
        transcode::json_to_cbor_with(&input[start..end], &opts, &mut out)
            .map_err(|e| json_error(&e, Some(item)))?;
        start = end;
        item += 1;
    }
    Ok(out)
}

/// Describes an encode error: JSON syntax problems as "invalid JSON input".
fn json_error(e: &conneg_cbor::Error, item: Option<usize>) -> String {
    let msg = e.to_string();
    let msg = msg.strip_prefix("JSON: ").unwrap_or(&msg).to_string();
    let what = match e.kind() {
        conneg_cbor::ErrorKind::Syntax | conneg_cbor::ErrorKind::Eof => "invalid JSON input: ",
        _ => "",
    };
    match item {
        Some(i) => format!("{what}item {i}: {msg}"),
        None => format!("{what}{msg}"),
    }
}
