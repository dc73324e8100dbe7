//! A gRPC client of one etcd member: tonic's HTTP/2 channel (connected lazily, reconnecting,
//! with keep-alive pings and TLS), the calls the store makes on etcd's `KV` and `Watch`
//! services with the messages of [`wire`](super::wire), and what a failed call means for the
//! store (its [`StorageError`], and whether the connection is suspect).

use std::error::Error as _;
use std::time::Duration;

use futures_util::StreamExt as _;
use http::uri::PathAndQuery;
use tonic::client::Grpc;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Status, Streaming};
use tonic_prost::ProstCodec;

use super::wire::{
    CompactionRequest, CompactionResponse, RangeRequest, RangeResponse, StatusRequest,
    StatusResponse, TxnRequest, TxnResponse, WatchCreateRequest, WatchProgressRequest,
    WatchRequest, WatchRequestUnion, WatchResponse,
};
use super::{EtcdOptions, EtcdTls};
use crate::storage::{Result, StorageError};

/// One endpoint's client; cloning shares the connection.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    grpc: Grpc<Channel>,
}

impl Client {
    /// A client of `url` (nothing is sent until the first call). The TLS files are read now,
    /// so a client built after a certificate rotation uses the new certificate.
    pub(crate) fn connect(o: &EtcdOptions, url: &str) -> Result<Self> {
        let bad = |e: tonic::transport::Error| {
            StorageError::Unavailable(format!("etcd client for {url}: {}", with_sources(&e)))
        };
        let mut endpoint = Endpoint::from_shared(url.to_owned())
            .map_err(bad)?
            // Requests are bounded by the store (one timeout, one error: Timeout), not here.
            .connect_timeout(o.request_timeout)
            // HTTP/2 pings find a dead or frozen etcd under a long-lived watch.
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(o.request_timeout)
            .keep_alive_while_idle(true);
        if let Some(tls) = &o.tls {
            endpoint = endpoint.tls_config(tls_config(tls)?).map_err(bad)?;
        }
        Ok(Self {
            grpc: Grpc::new(endpoint.connect_lazy()),
        })
    }

    /// `KV/Range`: a get, a list or a count.
    pub(crate) async fn range(self, request: RangeRequest) -> Result<RangeResponse, Status> {
        self.unary("/etcdserverpb.KV/Range", request).await
    }

    /// `KV/Txn`.
    pub(crate) async fn txn(self, request: TxnRequest) -> Result<TxnResponse, Status> {
        self.unary("/etcdserverpb.KV/Txn", request).await
    }

    /// `KV/Compact`.
    pub(crate) async fn compact(
        self,
        request: CompactionRequest,
    ) -> Result<CompactionResponse, Status> {
        self.unary("/etcdserverpb.KV/Compact", request).await
    }

    /// `Maintenance/Status`: the member's version.
    pub(crate) async fn status(self) -> Result<StatusResponse, Status> {
        self.unary("/etcdserverpb.Maintenance/Status", StatusRequest {})
            .await
    }

    /// `Watch/Watch` with one watch: the stream of its answers (the first says it was
    /// created), and the request side of the call. Dropping either ends the call, which
    /// cancels the watch in etcd.
    pub(crate) async fn watch(
        mut self,
        create: WatchCreateRequest,
    ) -> Result<(Streaming<WatchResponse>, WatchRequests), Status> {
        self.ready().await?;
        let create = WatchRequest {
            request_union: Some(WatchRequestUnion::CreateRequest(create)),
        };
        // The request half stays open after the create request, for progress requests: a
        // half-closed call ends the watch in etcd.
        let (sender, receiver) = tokio::sync::mpsc::channel(1);
        let more = futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|request| (request, receiver))
        });
        let requests = futures_util::stream::once(std::future::ready(create)).chain(more);
        let response = self
            .grpc
            .streaming(
                tonic::Request::new(requests),
                PathAndQuery::from_static("/etcdserverpb.Watch/Watch"),
                ProstCodec::default(),
            )
            .await?;
        Ok((response.into_inner(), WatchRequests(sender)))
    }

    async fn unary<Req, Resp>(mut self, path: &'static str, request: Req) -> Result<Resp, Status>
    where
        Req: prost::Message + Send + Sync + 'static,
        Resp: prost::Message + Default + Send + Sync + 'static,
    {
        self.ready().await?;
        let response = self
            .grpc
            .unary(
                tonic::Request::new(request),
                PathAndQuery::from_static(path),
                ProstCodec::default(),
            )
            .await?;
        Ok(response.into_inner())
    }

    async fn ready(&mut self) -> Result<(), Status> {
        self.grpc
            .ready()
            .await
            .map_err(|e| Status::from_error(e.into()))
    }
}

/// The TLS configuration of `tls` (files read now).
fn tls_config(tls: &EtcdTls) -> Result<ClientTlsConfig> {
    let read = |p: &std::path::Path| {
        std::fs::read(p)
            .map_err(|e| StorageError::Unavailable(format!("etcd TLS file {}: {e}", p.display())))
    };
    let mut config = ClientTlsConfig::new();
    if let Some(ca) = &tls.ca_file {
        config = config.ca_certificate(Certificate::from_pem(read(ca)?));
    }
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            config = config.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        (None, None) => {}
        _ => {
            return Err(StorageError::Unavailable(
                "etcd TLS: a client certificate needs its key, and a key its certificate".into(),
            ));
        }
    }
    Ok(config)
}

/// An error and its causes, `a: b: c` (tonic's transport errors say little at the top).
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A failed etcd call, mapped.
pub(crate) struct Failure {
    pub(crate) err: StorageError,
    /// The connection is suspect: rebuild the endpoint's client and try another endpoint.
    pub(crate) broken: bool,
    /// The request never left (no connection could be made), so even a write may be retried.
    pub(crate) unsent: bool,
}

/// A failed etcd call as a storage error, and what it says about the connection.
pub(crate) fn map_error(what: &str, status: &Status) -> Failure {
    let (err, broken) = classify(what, status);
    Failure {
        err,
        broken,
        unsent: broken && never_sent(status),
    }
}

/// Whether the call failed before anything was sent: tonic could not connect (its
/// `ConnectError` is among the status's causes).
fn never_sent(status: &Status) -> bool {
    let mut source = status.source();
    while let Some(e) = source {
        if e.is::<tonic::ConnectError>() {
            return true;
        }
        source = e.source();
    }
    false
}

const COMPACTED_MSG: &str = "required revision has been compacted";
const FUTURE_MSG: &str = "required revision is a future revision";

/// A gRPC status as a storage error, and whether the connection is suspect. `Gone` and
/// `FutureRevision` carry placeholder revisions; callers that know the requested revision
/// fill them in.
fn classify(what: &str, status: &Status) -> (StorageError, bool) {
    let msg = status.message();
    if msg.contains(COMPACTED_MSG) {
        let gone = StorageError::Gone {
            requested: 0,
            compacted: 0,
        };
        return (gone, false);
    }
    if msg.contains(FUTURE_MSG) {
        let future = StorageError::FutureRevision {
            requested: 0,
            current: 0,
        };
        return (future, false);
    }
    let text = format!("etcd {what}: {msg} ({:?})", status.code());
    match status.code() {
        // Unknown: tonic's word for a transport failure it cannot name (a reset stream, a
        // closed connection).
        Code::Unavailable | Code::Cancelled | Code::Unknown => {
            (StorageError::Unavailable(text), true)
        }
        Code::DeadlineExceeded => (StorageError::Timeout(text), true),
        _ => (StorageError::Backend(text), false),
    }
}

/// The request side of a watch call (see [`Client::watch`]): keep it as long as the watch.
pub(crate) struct WatchRequests(tokio::sync::mpsc::Sender<WatchRequest>);

impl WatchRequests {
    /// Asks etcd for a progress notification: a watch answer without events whose header
    /// says every event up to its revision has been sent (etcd 3.4 and later).
    pub(crate) async fn request_progress(&self) -> Result<(), StorageError> {
        let request = WatchRequest {
            request_union: Some(WatchRequestUnion::ProgressRequest(WatchProgressRequest {})),
        };
        self.0
            .send(request)
            .await
            .map_err(|_| StorageError::Unavailable("the etcd watch has ended".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_as_storage_errors() {
        let kind = |s: Status| {
            let f = map_error("get", &s);
            (f.err, f.broken, f.unsent)
        };
        assert!(matches!(
            kind(Status::out_of_range(
                "etcdserver: mvcc: required revision has been compacted"
            )),
            (StorageError::Gone { .. }, false, false)
        ));
        assert!(matches!(
            kind(Status::out_of_range(
                "etcdserver: mvcc: required revision is a future revision"
            )),
            (StorageError::FutureRevision { .. }, false, false)
        ));
        assert!(matches!(
            kind(Status::unavailable("etcdserver: leader changed")),
            (StorageError::Unavailable(_), true, false)
        ));
        assert!(matches!(
            kind(Status::deadline_exceeded("etcdserver: request timed out")),
            (StorageError::Timeout(_), true, false)
        ));
        assert!(matches!(
            kind(Status::invalid_argument("etcdserver: key is not provided")),
            (StorageError::Backend(_), false, false)
        ));
        // A connection that could not be made: the request never left.
        let refused = tonic::ConnectError(Box::new(std::io::Error::from(
            std::io::ErrorKind::ConnectionRefused,
        )));
        assert!(matches!(
            kind(Status::from_error(Box::new(refused))),
            (StorageError::Unavailable(_), true, true)
        ));
    }
}
