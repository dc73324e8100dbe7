//! Streamed lists (`conneg::list`): the same document as one built in memory, frames of
//! bounded size, items pulled only as the body is read, and a wrong item count refused.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use conneg::{Codec, StreamingList};
use http_body::Body;
use http_body_util::BodyExt;
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Clone, Serialize)]
struct Item {
    name: String,
    data: String,
}

fn items(n: usize) -> impl ExactSizeIterator<Item = Item> + Send + 'static {
    (0..n).map(|i| Item {
        name: format!("item-{i}"),
        data: "d".repeat(i % 50),
    })
}

fn expected(n: usize) -> Value {
    json!({
        "kind": "ItemList",
        "apiVersion": "example.com/v1",
        "metadata": {"resourceVersion": "42", "continue": "abc"},
        "items": items(n).map(|i| json!({"name": i.name, "data": i.data})).collect::<Vec<_>>(),
    })
}

fn list() -> StreamingList<Value> {
    StreamingList::new(
        "ItemList",
        "example.com/v1",
        json!({"resourceVersion": "42", "continue": "abc"}),
    )
}

async fn frames(mut body: conneg::ListBody) -> Result<Vec<Bytes>, conneg::EncodeError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        out.push(frame?.into_data().unwrap());
    }
    Ok(out)
}

#[tokio::test]
async fn same_document_as_built_in_memory() {
    for n in [0, 1, 2, 23, 24, 255, 256, 3000] {
        // JSON: byte for byte what serde_json writes for the whole value, in Go's key order.
        let body = list().frame_size(1024).body(&Codec::Json, items(n));
        let json: Vec<u8> = frames(body).await.unwrap().concat();
        let whole = serde_json::to_vec(&expected(n)).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&json).unwrap(),
            expected(n),
            "n={n}"
        );
        assert_eq!(json.len(), whole.len());
        assert!(
            json.starts_with(br#"{"kind":"ItemList","apiVersion":"example.com/v1","metadata":"#)
        );

        // CBOR: a well-formed self-described item with a definite-length items array, decoded
        // strictly by conneg-cbor.
        let body = list().frame_size(1024).body(&Codec::Cbor, items(n));
        let cbor: Vec<u8> = frames(body).await.unwrap().concat();
        assert_eq!(&cbor[..3], [0xd9, 0xd9, 0xf7]);
        assert_eq!(cbor[3], 0xa4, "a definite map of four pairs");
        let back: Value = conneg_cbor::from_slice(&cbor).unwrap();
        assert_eq!(back, expected(n), "n={n}");
        // Kubernetes' streaming order: kind, items, metadata, apiVersion.
        assert_eq!(&cbor[4..9], b"\x44kind");
    }
}

#[tokio::test]
async fn empty_kind_and_api_version_are_left_out() {
    let body = StreamingList::new("", "", json!({})).body(&Codec::Cbor, items(1));
    let cbor = frames(body).await.unwrap().concat();
    assert_eq!(cbor[3], 0xa2);
    let v: Value = conneg_cbor::from_slice(&cbor).unwrap();
    assert_eq!(
        v,
        json!({"metadata": {}, "items": [{"name": "item-0", "data": ""}]})
    );
}

#[tokio::test]
async fn frames_are_bounded_and_items_are_pulled_lazily() {
    const FRAME: usize = 16 * 1024;
    for codec in [Codec::Json, Codec::Cbor] {
        let pulled = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&pulled);
        let source = items(20_000).inspect(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        // `inspect` keeps ExactSizeIterator.
        let mut body = list().frame_size(FRAME).body(&codec, source);
        assert_eq!(
            pulled.load(Ordering::Relaxed),
            0,
            "nothing before the first read"
        );

        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert!(
            first.len() >= FRAME && first.len() < FRAME + 200,
            "{}",
            first.len()
        );
        let after_first = pulled.load(Ordering::Relaxed);
        // Items are ~40-90 bytes: one frame needs a few hundred of the 20,000.
        assert!(
            after_first < 1000,
            "{codec}: {after_first} items pulled for one frame"
        );

        let mut n = 1;
        let mut max = first.len();
        while let Some(frame) = body.frame().await {
            let data = frame.unwrap().into_data().unwrap();
            max = max.max(data.len());
            n += 1;
        }
        assert!(max < FRAME + 200, "{codec}: a frame of {max} bytes");
        assert!(n > 20, "{codec}: {n} frames");
        assert_eq!(pulled.load(Ordering::Relaxed), 20_000);
        assert!(body.is_end_stream());
    }
}

/// An iterator that claims more items than it yields.
struct Liar(std::ops::Range<usize>);

impl Iterator for Liar {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.len() + 1, Some(self.0.len() + 1))
    }
}

impl ExactSizeIterator for Liar {}

#[tokio::test]
async fn a_wrong_item_count_fails_the_cbor_body() {
    let body = list().body(&Codec::Cbor, Liar(0..3));
    let err = frames(body).await.unwrap_err();
    assert!(
        err.to_string().contains("said 4 items but yielded 3"),
        "{err}"
    );

    // The stream form checks the declared count both ways.
    let stream = futures_util::stream::iter(0..5);
    let err = frames(list().body_from_stream(&Codec::Cbor, 3, stream))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("yielded more"), "{err}");

    // JSON needs no count.
    let json = frames(list().body(&Codec::Json, Liar(0..3)))
        .await
        .unwrap()
        .concat();
    assert!(json.ends_with(b"\"items\":[0,1,2]}"));
}

#[tokio::test]
async fn an_item_that_fails_to_encode_fails_the_body() {
    let body = list().body(&Codec::Cbor, [1.0, f64::NAN].into_iter());
    assert!(frames(body).await.is_err());
}

#[tokio::test]
async fn a_stream_of_items() {
    let stream = futures_util::stream::iter(items(100));
    let body = list()
        .frame_size(512)
        .body_from_stream(&Codec::Cbor, 100, stream);
    let v: Value = conneg_cbor::from_slice(&frames(body).await.unwrap().concat()).unwrap();
    assert_eq!(v, expected(100));
}

#[tokio::test]
async fn a_response_that_fits_one_frame_has_an_exact_size() {
    let (parts, ()) = http::Request::get("/items")
        .header("accept", "application/cbor")
        .body(())
        .unwrap()
        .into_parts();
    let negotiated = conneg::Negotiator::new()
        .profile(conneg::Profile::Kubernetes)
        .negotiate_parts(&parts)
        .unwrap();

    let small = list().response(&negotiated, items(10));
    assert_eq!(small.headers()["content-type"], "application/cbor");
    let exact = small
        .body()
        .size_hint()
        .exact()
        .expect("complete: Content-Length");
    let bytes = small.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(bytes.len() as u64, exact);
    assert_eq!(
        conneg_cbor::from_slice::<Value>(&bytes).unwrap(),
        expected(10)
    );

    let large = list().frame_size(4096).response(&negotiated, items(1000));
    assert_eq!(large.body().size_hint().exact(), None, "streamed: chunked");
    let bytes = large.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        conneg_cbor::from_slice::<Value>(&bytes).unwrap(),
        expected(1000)
    );
}
