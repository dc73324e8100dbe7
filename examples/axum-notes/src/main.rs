//! `axum-notes`: an ordinary REST service (not Kubernetes-shaped) on conneg's standard
//! profile. Notes are created, listed, read, merge-patched and deleted in JSON, CBOR (text
//! strings, as any CBOR library expects) or YAML (a [`CustomCodec`](conneg::CustomCodec), in
//! `yaml.rs`), whichever the client asks for; and every error — the layer's 406/415/413, an
//! undecodable body, a bad path or query parameter, an unknown path, a wrong method, a missing
//! note — is an RFC 9457 problem in the negotiated format (`application/problem+json` for
//! JSON), with `Allow` on 405 and `Accept`/`Accept-Patch` on 415.
//!
//! `GET /notes` streams `{"metadata": {"total": N}, "items": [...]}` item by item
//! ([`StreamingList`]). `GET /notes/events` is a stream of changes: the current notes as
//! `ADDED`, then every create, patch and delete as `{"type": "ADDED" | "MODIFIED" |
//! "DELETED", "object": note}`, until the client goes or `?timeout=SECONDS` passes: one JSON
//! object per line for `Accept: application/json`, a CBOR Sequence (`application/cbor-seq`,
//! text strings, no tags) for `Accept: application/cbor`; YAML cannot stream, so a 406.
//!
//! ```sh
//! cargo run -p axum-notes -- --listen 127.0.0.1:3000
//! curl -si localhost:3000/notes -H 'content-type: application/json' -d '{"title":"milk"}'
//! curl -s localhost:3000/notes/1 -H 'accept: application/cbor' | python3 -c 'import sys, cbor2; print(cbor2.load(sys.stdin.buffer))'
//! curl -s localhost:3000/notes -H 'accept: application/yaml'
//! curl -si -X PATCH localhost:3000/notes/1 -H 'content-type: application/merge-patch+json' -d '{"done":true}'
//! curl -si localhost:3000/notes/abc          # 400 application/problem+json
//! curl -si -X PUT localhost:3000/notes        # 405, Allow: GET,HEAD,POST
//! curl -sN localhost:3000/notes/events         # one JSON change per line, as they happen
//! ```

mod yaml;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{Response, StatusCode};
use axum::routing::get;
use conneg::axum::{Conneg, Path, Query, method_not_allowed, not_found};
use conneg::watch::{WatchBody, WatchEvent, WatchHub, WatchResponse};
use conneg::{Codec, ListBody, NegotiateLayer, Negotiated, Patch, Problem, StreamingList};
use serde::{Deserialize, Serialize};

/// A note as stored and served.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Note {
    id: u64,
    title: String,
    #[serde(default)]
    done: bool,
}

/// What a client sends to create a note.
#[derive(Deserialize)]
struct NewNote {
    title: String,
    #[serde(default)]
    done: bool,
}

/// `GET /notes?limit=N`.
#[derive(Deserialize)]
struct Page {
    limit: Option<usize>,
}

/// The list's `metadata`.
#[derive(Serialize)]
struct ListMeta {
    /// How many notes there are, whatever the `limit`.
    total: usize,
}

/// `GET /notes/events?timeout=SECONDS`.
#[derive(Deserialize)]
struct Watch {
    timeout: Option<u64>,
}

/// The longest `timeout` a watch may ask for.
const MAX_WATCH_SECONDS: u64 = 3600;

#[derive(Default)]
struct Store {
    next: u64,
    notes: BTreeMap<u64, Note>,
    /// Every change, published under the store's lock so a watch's snapshot and its live
    /// events neither miss nor repeat one.
    changes: WatchHub<Note>,
}

type Notes = Arc<Mutex<Store>>;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listen = std::env::args().skip_while(|a| a != "--listen").nth(1);
    let listen = listen.as_deref().unwrap_or("127.0.0.1:3000");
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app()).await
}

fn app() -> Router {
    Router::new()
        .route("/notes", get(list).post(create))
        .route("/notes/events", get(events))
        .route("/notes/{id}", get(read).patch(patch).delete(remove))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // The standard profile is the default; the YAML codec is offered after JSON and CBOR.
        .layer(
            NegotiateLayer::new()
                .codec(Codec::custom(yaml::Yaml))
                .body_limit(64 * 1024),
        )
        .with_state(Notes::default())
}

fn missing(id: u64) -> Problem {
    Problem::new(StatusCode::NOT_FOUND, format!("note {id} does not exist"))
}

/// The list, encoded item by item as the connection takes it (in CBOR as the standard
/// profile writes it: text strings, no tag).
async fn list(
    State(notes): State<Notes>,
    negotiated: Negotiated,
    Query(page): Query<Page>,
) -> Response<ListBody> {
    let store = notes.lock().unwrap();
    let limit = page.limit.unwrap_or(usize::MAX);
    let items: Vec<Note> = store.notes.values().take(limit).cloned().collect();
    let meta = ListMeta {
        total: store.notes.len(),
    };
    StreamingList::new("", "", meta).response(&negotiated, items)
}

/// The current notes as `ADDED`, then every change, in the negotiated stream form.
async fn events(
    State(notes): State<Notes>,
    negotiated: Negotiated,
    Query(watch): Query<Watch>,
) -> Response<WatchBody> {
    let store = notes.lock().unwrap();
    let initial: Vec<WatchEvent<Note>> = store
        .notes
        .values()
        .cloned()
        .map(WatchEvent::Added)
        .collect();
    let timeout = watch.timeout.map(|s| s.min(MAX_WATCH_SECONDS));
    WatchResponse::new(&negotiated)
        .timeout_seconds(timeout)
        .subscribe_with_initial(&store.changes, initial)
}

async fn create(
    State(notes): State<Notes>,
    Conneg(new): Conneg<NewNote>,
) -> Result<(StatusCode, Conneg<Note>), Problem> {
    if new.title.trim().is_empty() {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "title must not be empty",
        ));
    }
    let mut store = notes.lock().unwrap();
    store.next += 1;
    let note = Note {
        id: store.next,
        title: new.title,
        done: new.done,
    };
    store.notes.insert(note.id, note.clone());
    store.changes.publish(WatchEvent::Added(note.clone()));
    Ok((StatusCode::CREATED, Conneg(note)))
}

async fn read(State(notes): State<Notes>, Path(id): Path<u64>) -> Result<Conneg<Note>, Problem> {
    let store = notes.lock().unwrap();
    store
        .notes
        .get(&id)
        .cloned()
        .map(Conneg)
        .ok_or_else(|| missing(id))
}

/// `PATCH /notes/{id}` with `application/merge-patch+json` (RFC 7396), the standard profile's
/// only patch type. The id cannot change; a patched note that is no longer a note is a 422.
async fn patch(
    State(notes): State<Notes>,
    Path(id): Path<u64>,
    patch: Patch,
) -> Result<Conneg<Note>, Problem> {
    let mut store = notes.lock().unwrap();
    let note = store.notes.get_mut(&id).ok_or_else(|| missing(id))?;
    let current = serde_json::to_value(&*note).map_err(internal)?;
    let patched = patch.apply_to(current).map_err(|s| Problem::from(&s))?;
    let mut updated: Note = serde_json::from_value(patched)
        .map_err(|e| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    updated.id = id;
    *note = updated.clone();
    store.changes.publish(WatchEvent::Modified(updated.clone()));
    Ok(Conneg(updated))
}

async fn remove(State(notes): State<Notes>, Path(id): Path<u64>) -> Result<StatusCode, Problem> {
    let mut store = notes.lock().unwrap();
    let note = store.notes.remove(&id).ok_or_else(|| missing(id))?;
    store.changes.publish(WatchEvent::Deleted(note));
    Ok(StatusCode::NO_CONTENT)
}

fn internal(err: impl std::fmt::Display) -> Problem {
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR, err.to_string())
}
