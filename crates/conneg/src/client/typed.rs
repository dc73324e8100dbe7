//! [`Client`]: a small typed client over [`ContentNegotiation`].

use std::fmt;

use bytes::Bytes;
use http::{Method, Request, Response, Uri};
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tower_layer::Layer;
use tower_service::Service;

use super::WatchStream;
use super::fallback::ClientBody;
use super::layer::ContentNegotiationLayer;
use super::service::ContentNegotiation;
use super::{Error, Exchange, error_status, read_response};
use crate::codec::BoxError;
use crate::patch::PatchType;

/// hyper-util's pooled HTTP/1 client, the default transport.
pub type HttpService = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

/// A decoded response and what the layer did to get it.
#[derive(Clone, Debug)]
pub struct Reply<T> {
    /// The decoded body.
    pub value: T,
    /// Request and response media types, and any 415 fallback.
    pub exchange: Exchange,
}

/// Builds a [`Client`]: the server URL, the [`ContentNegotiationLayer`] and the transport.
pub struct ClientBuilder<S = HttpService> {
    base: String,
    layer: ContentNegotiationLayer,
    service: S,
}

impl<S> fmt::Debug for ClientBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base", &self.base)
            .field("layer", &self.layer)
            .finish_non_exhaustive()
    }
}

impl<S> ClientBuilder<S> {
    /// Sets the layer (gates, `Accept`, fallback memory).
    pub fn layer(mut self, layer: ContentNegotiationLayer) -> Self {
        self.layer = layer;
        self
    }

    /// Replaces the transport with any service of `http::Request<Full<Bytes>>`.
    pub fn service<S2>(self, service: S2) -> ClientBuilder<S2> {
        ClientBuilder {
            base: self.base,
            layer: self.layer,
            service,
        }
    }

    /// The client.
    pub fn build(self) -> Client<S> {
        Client {
            base: self.base,
            service: self.layer.layer(self.service),
        }
    }
}

/// A typed client for Kubernetes-style resource paths, over the content-negotiating layer.
///
/// Paths are absolute paths on the server (`/apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME]`,
/// with or without a query). Values are any `T: Serialize + DeserializeOwned`, e.g.
/// `serde_json::Value`. Every method is `&self` and the client is cheap to clone; clones share
/// the connection pool and the fallback memory.
#[derive(Clone, Debug)]
pub struct Client<S = HttpService> {
    base: String,
    service: ContentNegotiation<S>,
}

impl Client<HttpService> {
    /// A builder for `server` (`http://host:port`, optionally with a path prefix) over
    /// hyper-util's client (needs a Tokio runtime when requests are made).
    pub fn builder(server: &str) -> Result<ClientBuilder<HttpService>, Error> {
        let base = parse_base(server)?;
        let service =
            hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build_http();
        Ok(ClientBuilder {
            base,
            layer: ContentNegotiationLayer::new(),
            service,
        })
    }

    /// A client for `server` with the default layer (both gates on).
    pub fn new(server: &str) -> Result<Self, Error> {
        Ok(Self::builder(server)?.build())
    }
}

fn parse_base(server: &str) -> Result<String, Error> {
    let uri: Uri = server
        .parse()
        .map_err(|e| Error::Request(format!("invalid server URL {server:?}: {e}")))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some(scheme), Some(authority)) => Ok(format!(
            "{scheme}://{authority}{}",
            uri.path().trim_end_matches('/')
        )),
        _ => Err(Error::Request(format!(
            "invalid server URL {server:?}: expected scheme://host[:port]"
        ))),
    }
}

impl<S, B> Client<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    /// The server URL (scheme, authority, path prefix).
    pub fn server(&self) -> &str {
        &self.base
    }

    /// The layer's service (gates, memory).
    pub fn service(&self) -> &ContentNegotiation<S> {
        &self.service
    }

    /// The absolute URI of `path`.
    pub fn uri(&self, path: &str) -> Result<Uri, Error> {
        if !path.starts_with('/') {
            return Err(Error::Request(format!(
                "the path {path:?} must start with '/'"
            )));
        }
        format!("{}{path}", self.base)
            .parse()
            .map_err(|e| Error::Request(format!("invalid path {path:?}: {e}")))
    }

    /// Sends a request through the layer; the response body is untouched.
    pub async fn send(&self, request: Request<ClientBody>) -> Result<Response<B>, Error> {
        let mut svc = self.service.clone();
        std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
        svc.call(request).await
    }

    /// Sends `method` on `path` with `body` and decodes the response by its `Content-Type`.
    pub async fn request<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: ClientBody,
    ) -> Result<Reply<T>, Error> {
        let mut req = Request::new(body);
        *req.method_mut() = method;
        *req.uri_mut() = self.uri(path)?;
        let res = self.send(req).await?;
        let exchange = Exchange::of(&res)
            .cloned()
            .ok_or_else(|| Error::Request("the response did not come through the layer".into()))?;
        let value = read_response(res).await?;
        Ok(Reply { value, exchange })
    }

    /// `GET` an object.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        Ok(self
            .request(Method::GET, path, ClientBody::Empty)
            .await?
            .value)
    }

    /// `GET` a collection (the list type, e.g. `serde_json::Value` or your `FooList`).
    pub async fn list<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        self.get(path).await
    }

    /// `POST` `value` to a collection; returns what the server created.
    pub async fn create<T: Serialize + DeserializeOwned>(
        &self,
        path: &str,
        value: &T,
    ) -> Result<T, Error> {
        Ok(self
            .request(Method::POST, path, ClientBody::object(value)?)
            .await?
            .value)
    }

    /// `PUT` `value` to an object path.
    pub async fn update<T: Serialize + DeserializeOwned>(
        &self,
        path: &str,
        value: &T,
    ) -> Result<T, Error> {
        Ok(self
            .request(Method::PUT, path, ClientBody::object(value)?)
            .await?
            .value)
    }

    /// Server-side apply of `value` to an object path (`application/apply-patch+cbor`, or
    /// `+yaml` with JSON in it), as `field_manager`, with `force` to take over conflicting
    /// fields.
    pub async fn apply<T: Serialize + DeserializeOwned>(
        &self,
        path: &str,
        value: &T,
        field_manager: &str,
        force: bool,
    ) -> Result<T, Error> {
        let path = apply_path(path, field_manager, force);
        Ok(self
            .request(Method::PATCH, &path, ClientBody::apply(value)?)
            .await?
            .value)
    }

    /// `PATCH` with a patch document of type `patch_type` (JSON patch and merge patch are sent
    /// as JSON; apply and strategic merge follow the gates and fall back like other bodies).
    pub async fn patch<T: DeserializeOwned>(
        &self,
        path: &str,
        patch_type: PatchType,
        patch: serde_json::Value,
    ) -> Result<T, Error> {
        Ok(self
            .request(Method::PATCH, path, ClientBody::Patch(patch_type, patch))
            .await?
            .value)
    }

    /// `DELETE` an object; returns what the server returned (the object, or a `Status`).
    pub async fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        Ok(self
            .request(Method::DELETE, path, ClientBody::Empty)
            .await?
            .value)
    }

    /// Watches a collection path (`watch=true` is added to the query): a `Stream` of typed
    /// events in whichever format the server chose (CBOR Sequence or JSON lines). An error
    /// answer (e.g. 410 Expired) is [`Error::Status`].
    pub async fn watch<T: DeserializeOwned>(&self, path: &str) -> Result<WatchStream<T, B>, Error> {
        Ok(self.watch_reply(path).await?.value)
    }

    /// [`watch`](Self::watch), with the [`Exchange`].
    pub async fn watch_reply<T: DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<Reply<WatchStream<T, B>>, Error> {
        let path = watch_path(path);
        let mut req = Request::new(ClientBody::Empty);
        *req.uri_mut() = self.uri(&path)?;
        let res = self.send(req).await?;
        let exchange = Exchange::of(&res)
            .cloned()
            .ok_or_else(|| Error::Request("the response did not come through the layer".into()))?;
        if !res.status().is_success() {
            let status = res.status();
            let content_type = exchange.response_content_type.clone();
            let body = http_body_util::BodyExt::collect(res.into_body())
                .await
                .map_err(|e| Error::Transport(e.into()))?
                .to_bytes();
            return Err(Error::Status(Box::new(error_status(
                status,
                content_type.as_deref(),
                &body,
            ))));
        }
        let stream = WatchStream::from_response(res)?;
        Ok(Reply {
            value: stream,
            exchange,
        })
    }
}

fn with_query(path: &str, param: &str) -> String {
    if path.contains('?') {
        format!("{path}&{param}")
    } else {
        format!("{path}?{param}")
    }
}

fn watch_path(path: &str) -> String {
    let has_watch = path.split_once('?').is_some_and(|(_, q)| {
        q.split('&')
            .any(|p| p == "watch" || p.starts_with("watch="))
    });
    if has_watch {
        path.to_owned()
    } else {
        with_query(path, "watch=true")
    }
}

fn apply_path(path: &str, field_manager: &str, force: bool) -> String {
    let mut p = with_query(
        path,
        &format!("fieldManager={}", percent_encode(field_manager)),
    );
    if force {
        p.push_str("&force=true");
    }
    p
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_queries() {
        assert_eq!(watch_path("/a/b"), "/a/b?watch=true");
        assert_eq!(
            watch_path("/a/b?labelSelector=x"),
            "/a/b?labelSelector=x&watch=true"
        );
        assert_eq!(watch_path("/a/b?watch=1"), "/a/b?watch=1");
        assert_eq!(
            apply_path("/a/b", "me & you", true),
            "/a/b?fieldManager=me%20%26%20you&force=true"
        );
        assert_eq!(parse_base("http://h:1/").unwrap(), "http://h:1");
        assert_eq!(parse_base("http://h:1/p/").unwrap(), "http://h:1/p");
        assert!(parse_base("h:1").is_err());
        assert!(parse_base("/x").is_err());
    }
}
