//! `sample-apiserver`: the wardle.example.com API server.

fn main() {
    eprintln!("sample-apiserver: the HTTP server is not wired up yet");
}
