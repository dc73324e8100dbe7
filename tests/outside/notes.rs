//! A plain axum service written outside the workspace, as a user of the published `conneg`
//! crate would write it: `NegotiateLayer` on the router, `Conneg<T>` as extractor and response.
//! `tests/outside.rs` builds it from the packaged crates and drives it over HTTP.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use conneg::NegotiateLayer;
use conneg::axum::Conneg;
use serde::{Deserialize, Serialize};

/// A note: what the service stores.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Note {
    title: String,
}

type Notes = Arc<Mutex<Vec<Note>>>;

async fn create(State(notes): State<Notes>, Conneg(note): Conneg<Note>) -> (StatusCode, Conneg<Note>) {
    notes.lock().unwrap().push(note.clone());
    (StatusCode::CREATED, Conneg(note))
}

async fn list(State(notes): State<Notes>) -> Conneg<Vec<Note>> {
    Conneg(notes.lock().unwrap().clone())
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listen = std::env::args().nth(2).unwrap_or_else(|| "127.0.0.1:8080".into());
    let app = Router::new()
        .route("/notes", post(create).get(list))
        .with_state(Notes::default())
        .layer(NegotiateLayer::new());
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await
}
