//! The etcd v3 API messages this client sends and reads, declared by hand with prost's derive
//! instead of generated from etcd's `.proto` files, so that building needs no `protoc` and no
//! build script. Each message keeps only the fields the store uses, with etcd's field numbers
//! and types (`etcdserverpb` in `api/etcdserverpb/rpc.proto`, `mvccpb` in `api/mvccpb/kv.proto`);
//! proto3 decoders skip the fields a message does not declare, so the rest of an answer is
//! ignored. The tests below decode answers captured from a real etcd.

use bytes::Bytes;

/// `mvccpb.KeyValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct KeyValue {
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    #[prost(int64, tag = "2")]
    pub(crate) create_revision: i64,
    #[prost(int64, tag = "3")]
    pub(crate) mod_revision: i64,
    #[prost(bytes = "bytes", tag = "5")]
    pub(crate) value: Bytes,
}

/// `mvccpb.Event.EventType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum EventType {
    Put = 0,
    Delete = 1,
}

/// `mvccpb.Event`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Event {
    #[prost(enumeration = "EventType", tag = "1")]
    pub(crate) r#type: i32,
    #[prost(message, optional, tag = "2")]
    pub(crate) kv: Option<KeyValue>,
    #[prost(message, optional, tag = "3")]
    pub(crate) prev_kv: Option<KeyValue>,
}

/// `etcdserverpb.ResponseHeader`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ResponseHeader {
    #[prost(int64, tag = "3")]
    pub(crate) revision: i64,
}

/// `etcdserverpb.RangeRequest` (`KV/Range`, and a transaction's get).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RangeRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// Empty: the key alone.
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) range_end: Vec<u8>,
    /// 0: no limit.
    #[prost(int64, tag = "3")]
    pub(crate) limit: i64,
    /// 0: the current revision.
    #[prost(int64, tag = "4")]
    pub(crate) revision: i64,
    #[prost(bool, tag = "9")]
    pub(crate) count_only: bool,
}

impl RangeRequest {
    /// Read `key` alone.
    pub(crate) fn one(key: &str) -> Self {
        Self {
            key: key.into(),
            ..Self::default()
        }
    }
}

/// `etcdserverpb.RangeResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RangeResponse {
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) kvs: Vec<KeyValue>,
    /// Keys in the range (all of them, whatever the limit).
    #[prost(int64, tag = "4")]
    pub(crate) count: i64,
}

/// `etcdserverpb.PutRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PutRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    #[prost(bytes = "bytes", tag = "2")]
    pub(crate) value: Bytes,
}

/// `etcdserverpb.DeleteRangeRequest` (of one key).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeleteRangeRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    #[prost(bool, tag = "3")]
    pub(crate) prev_kv: bool,
}

/// `etcdserverpb.DeleteRangeResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeleteRangeResponse {
    #[prost(message, repeated, tag = "3")]
    pub(crate) prev_kvs: Vec<KeyValue>,
}

/// `etcdserverpb.RequestOp`: one operation of a transaction.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RequestOp {
    #[prost(oneof = "Request", tags = "1, 2, 3")]
    pub(crate) request: Option<Request>,
}

/// `etcdserverpb.RequestOp.request`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Request {
    #[prost(message, tag = "1")]
    Range(RangeRequest),
    #[prost(message, tag = "2")]
    Put(PutRequest),
    #[prost(message, tag = "3")]
    DeleteRange(DeleteRangeRequest),
}

impl RequestOp {
    /// Read `key`.
    pub(crate) fn get(key: &str) -> Self {
        Self::of(Request::Range(RangeRequest::one(key)))
    }

    /// Write `value` at `key`.
    pub(crate) fn put(key: &str, value: Bytes) -> Self {
        Self::of(Request::Put(PutRequest {
            key: key.into(),
            value,
        }))
    }

    /// Delete `key`, answering with its last value.
    pub(crate) fn delete(key: &str) -> Self {
        Self::of(Request::DeleteRange(DeleteRangeRequest {
            key: key.into(),
            prev_kv: true,
        }))
    }

    fn of(request: Request) -> Self {
        Self {
            request: Some(request),
        }
    }
}

/// `etcdserverpb.ResponseOp`: one operation's answer (a put's is not read, so not declared:
/// it decodes as `None`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ResponseOp {
    #[prost(oneof = "Response", tags = "1, 3")]
    pub(crate) response: Option<Response>,
}

/// `etcdserverpb.ResponseOp.response`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Response {
    #[prost(message, tag = "1")]
    Range(RangeResponse),
    #[prost(message, tag = "3")]
    DeleteRange(DeleteRangeResponse),
}

/// `etcdserverpb.Compare.CompareResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum CompareResult {
    Equal = 0,
    Greater = 1,
}

/// `etcdserverpb.Compare.CompareTarget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum CompareTarget {
    /// Not compared on, but declared: prost takes an enumeration's first variant as the
    /// field's default and does not encode it, and proto3's default is 0. Without it `Create`
    /// would be left out and etcd would read `VERSION`.
    Version = 0,
    Create = 1,
    Mod = 2,
}

/// `etcdserverpb.Compare`: a transaction's condition on one key's revisions.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Compare {
    #[prost(enumeration = "CompareResult", tag = "1")]
    pub(crate) result: i32,
    #[prost(enumeration = "CompareTarget", tag = "2")]
    pub(crate) target: i32,
    #[prost(bytes = "vec", tag = "3")]
    pub(crate) key: Vec<u8>,
    #[prost(oneof = "TargetUnion", tags = "5, 6")]
    pub(crate) target_union: Option<TargetUnion>,
}

/// `etcdserverpb.Compare.target_union`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum TargetUnion {
    #[prost(int64, tag = "5")]
    CreateRevision(i64),
    #[prost(int64, tag = "6")]
    ModRevision(i64),
}

impl Compare {
    /// `create_revision(key) <result> revision` (0: the key does not exist).
    pub(crate) fn create_revision(key: &str, result: CompareResult, revision: i64) -> Self {
        Self {
            result: result.into(),
            target: CompareTarget::Create.into(),
            key: key.into(),
            target_union: Some(TargetUnion::CreateRevision(revision)),
        }
    }

    /// `mod_revision(key) <result> revision`.
    pub(crate) fn mod_revision(key: &str, result: CompareResult, revision: i64) -> Self {
        Self {
            result: result.into(),
            target: CompareTarget::Mod.into(),
            key: key.into(),
            target_union: Some(TargetUnion::ModRevision(revision)),
        }
    }
}

/// `etcdserverpb.TxnRequest`: if every compare holds, `success`, else `failure`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TxnRequest {
    #[prost(message, repeated, tag = "1")]
    pub(crate) compare: Vec<Compare>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) success: Vec<RequestOp>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) failure: Vec<RequestOp>,
}

/// `etcdserverpb.TxnResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TxnResponse {
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    #[prost(bool, tag = "2")]
    pub(crate) succeeded: bool,
    #[prost(message, repeated, tag = "3")]
    pub(crate) responses: Vec<ResponseOp>,
}

/// `etcdserverpb.CompactionRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct CompactionRequest {
    #[prost(int64, tag = "1")]
    pub(crate) revision: i64,
    /// Answer only once the compaction is applied to the backend database.
    #[prost(bool, tag = "2")]
    pub(crate) physical: bool,
}

/// `etcdserverpb.CompactionResponse` (its header is not read).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct CompactionResponse {}

/// `etcdserverpb.WatchRequest` (this client creates one watch per stream, and asks for its
/// progress).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WatchRequest {
    #[prost(oneof = "WatchRequestUnion", tags = "1, 3")]
    pub(crate) request_union: Option<WatchRequestUnion>,
}

/// `etcdserverpb.WatchRequest.request_union`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum WatchRequestUnion {
    #[prost(message, tag = "1")]
    CreateRequest(WatchCreateRequest),
    #[prost(message, tag = "3")]
    ProgressRequest(WatchProgressRequest),
}

/// `etcdserverpb.WatchProgressRequest`: no fields.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WatchProgressRequest {}

/// `etcdserverpb.WatchCreateRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WatchCreateRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// Empty: the key alone.
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) range_end: Vec<u8>,
    /// 0: from now on.
    #[prost(int64, tag = "3")]
    pub(crate) start_revision: i64,
    #[prost(bool, tag = "6")]
    pub(crate) prev_kv: bool,
}

/// `etcdserverpb.WatchResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WatchResponse {
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// The first answer of a watch: it was created.
    #[prost(bool, tag = "3")]
    pub(crate) created: bool,
    #[prost(bool, tag = "4")]
    pub(crate) canceled: bool,
    /// Set when the watch was cancelled because its start revision is compacted: the
    /// compacted revision.
    #[prost(int64, tag = "5")]
    pub(crate) compact_revision: i64,
    #[prost(string, tag = "6")]
    pub(crate) cancel_reason: String,
    #[prost(message, repeated, tag = "11")]
    pub(crate) events: Vec<Event>,
}

/// `etcdserverpb.StatusRequest` (`Maintenance/Status`): no fields.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StatusRequest {}

/// `etcdserverpb.StatusResponse` (only the member's version).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StatusResponse {
    #[prost(string, tag = "2")]
    pub(crate) version: String,
}

#[cfg(test)]
mod tests;
