//! OpenAPI: `/openapi/v3` (index), `/openapi/v3/apis/{group}/{version}` and
//! `/openapi/v3/api/v1` (one document per served group-version) and `/openapi/v2` (the same
//! documents as one Swagger 2.0 document, paths and definitions: `server/swagger.rs`), built
//! from the registered kinds: the paths from each served resource, the schemas from each
//! versioned type's [`OpenApiSchema`](crate::definitions::OpenApiSchema).
//!
//! Every operation lists the errors it can answer, each a `Status` (`400`, `401`, `403`,
//! `406`, `429`, and as the operation may: `404`, `409`, `410`, `413`, `415`, `422`), where
//! Kubernetes lists only `401`: a client or a schema fuzzer knows every answer to expect.
//!
//! kubectl depends on these: `create`/`apply` check that the PATCH operation of the kind
//! (found by `x-kubernetes-group-version-kind`) takes a `fieldValidation` query parameter
//! before leaving validation to the server, and `explain` renders the schemas. A type
//! publishes its enums (enum KEP: `enum` plus "Possible enum values" in the description,
//! `enum_schema`) and its validation rules as `x-kubernetes-validations` (CEL, as the
//! declarative-validation KEP publishes them).
//!
//! The documents exist only as JSON; the layer for these routes offers JSON only, so
//! `Accept: application/cbor, */*` (kubectl with the CBOR gates) gets JSON, not 406.

use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use conneg::{PatchType, Status};
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG};
use http::{HeaderValue, StatusCode};
use serde_json::{Map, Value, json};

use super::{AppState, swagger};
use crate::declarative::{DeclarationError, Validator, Validators};
use crate::definitions::{Definitions, META, all_of, model, r};
use crate::endpoints::{Endpoint, catalog_of, resource_not_found};
use crate::resource::{CORE_GROUP, GroupVersion, ResourceInfo};

/// The OpenAPI routes.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/openapi/v2", get(v2))
        .route("/openapi/v3", get(v3_index))
        .route("/openapi/v3/apis/{group}/{version}", get(v3_doc))
        .route("/openapi/v3/api/{version}", get(v3_doc))
}

/// How a server's OpenAPI documents name it and its types.
#[derive(Debug, Clone, Copy)]
pub struct OpenApiInfo {
    /// The title of the documents of the server's own groups (`Wardle`); core `v1`'s are
    /// titled `Kubernetes`.
    pub title: &'static str,
    /// The package of the server's types in schema names, which are
    /// `<package>.<version>.<Kind>` (`io.k8s.sample-apiserver.pkg.apis.wardle`); core `v1`
    /// types are `io.k8s.api.core.v1.<Kind>`, as in Kubernetes.
    pub package: &'static str,
}

struct Doc {
    bytes: Bytes,
    hash: String,
}

/// A server's OpenAPI documents, built on first use from what it serves, and built again
/// once what it serves has changed (a custom resource definition established or gone).
#[derive(Debug)]
pub(crate) struct Documents {
    info: OpenApiInfo,
    v3: Built<Vec<(GroupVersion, Doc)>>,
    v2: Built<Bytes>,
}

/// A document built from one set of served endpoints, kept while that set is served.
type Built<T> = Mutex<Option<(Arc<Vec<Endpoint>>, Arc<T>)>>;

/// What `cache` holds for `endpoints`, or `build` of them (then kept).
fn cached<T>(
    cache: &Built<T>,
    endpoints: Arc<Vec<Endpoint>>,
    build: impl FnOnce(&[Endpoint]) -> T,
) -> Arc<T> {
    let mut c = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((built_for, docs)) = c.as_ref()
        && Arc::ptr_eq(built_for, &endpoints)
    {
        return docs.clone();
    }
    let docs = Arc::new(build(&endpoints));
    *c = Some((endpoints, docs.clone()));
    docs
}

impl std::fmt::Debug for Doc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doc")
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl Documents {
    /// The documents of a server described by `info`.
    pub(crate) fn new(info: OpenApiInfo) -> Self {
        Self {
            info,
            v3: Mutex::new(None),
            v2: Mutex::new(None),
        }
    }

    fn v3(&self, st: &AppState) -> Arc<Vec<(GroupVersion, Doc)>> {
        cached(&self.v3, st.ctx.endpoints.get(), |endpoints| {
            catalog_of(endpoints)
                .versions()
                .map(|v| {
                    let doc = document(self.info, v, endpoints);
                    let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
                    let hash = hash_hex(&bytes);
                    (v, Doc { bytes, hash })
                })
                .collect()
        })
    }
}

/// FNV-1a 64 twice (different offsets), upper-case hex: a stable content hash for `?hash=`.
fn hash_hex(b: &[u8]) -> String {
    let fnv = |seed: u64| {
        b.iter().fold(seed, |h, &x| {
            (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    format!(
        "{:016X}{:016X}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x84222325_cbf29ce4)
    )
}

fn json_response(bytes: Bytes, cache: &'static str, etag: Option<&str>) -> Response {
    let mut r = (StatusCode::OK, bytes).into_response();
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Some(e) = etag.and_then(|e| HeaderValue::from_str(&format!("\"{e}\"")).ok()) {
        r.headers_mut().insert(ETAG, e);
    }
    r
}

async fn v3_index(State(st): State<AppState>) -> Response {
    let mut paths = Map::new();
    for (v, d) in st.openapi.v3(&st).iter() {
        let path = v.path();
        let key = path.trim_start_matches('/');
        paths.insert(
            key.to_owned(),
            json!({"serverRelativeURL": format!("/openapi/v3{path}?hash={}", d.hash)}),
        );
    }
    let body = serde_json::to_vec(&json!({"paths": paths})).unwrap_or_default();
    json_response(Bytes::from(body), "no-cache, private", None)
}

async fn v3_doc(
    State(st): State<AppState>,
    Path(p): Path<std::collections::BTreeMap<String, String>>,
    Query(q): Query<std::collections::BTreeMap<String, String>>,
) -> Result<Response, Status> {
    let group = p.get("group").map_or(CORE_GROUP, String::as_str);
    let v = p
        .get("version")
        .and_then(|v| st.ctx.registry.catalog.get().find(group, v))
        .ok_or_else(resource_not_found)?;
    let docs = st.openapi.v3(&st);
    let d = &docs
        .iter()
        .find(|(dv, _)| *dv == v)
        .ok_or_else(resource_not_found)?
        .1;
    let cache = if q.get("hash") == Some(&d.hash) {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    Ok(json_response(d.bytes.clone(), cache, Some(&d.hash)))
}

/// `/openapi/v2`: every group-version's v3 document as one Swagger 2.0 document
/// ([`swagger`]), operations and definitions.
async fn v2(State(st): State<AppState>) -> Response {
    let info = st.openapi.info;
    let b = cached(&st.openapi.v2, st.ctx.endpoints.get(), |endpoints| {
        let catalog = catalog_of(endpoints);
        let docs = catalog.versions().map(|v| document(info, v, endpoints));
        Bytes::from(serde_json::to_vec(&swagger::document(info.title, docs)).unwrap_or_default())
    });
    json_response(Bytes::clone(&b), "no-cache, private", None)
}

/// The word in operation ids (`listWardleExampleV1beta1Flunder`, `listCoreV1Namespace`,
/// `listRbacAuthorizationV1ClusterRole`) and in tags (`wardleExample_v1beta1`, `core_v1`):
/// the group without `.k8s.io` (or, outside it, without its last label), in CamelCase.
fn group_word(v: GroupVersion) -> String {
    let group = match v.group() {
        CORE_GROUP => "core",
        g => g
            .strip_suffix(".k8s.io")
            .or_else(|| g.rsplit_once('.').map(|(head, _)| head))
            .unwrap_or(g),
    };
    group
        .split(['.', '-'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The component schemas of one version: metav1's and those of every type served in it.
pub(crate) fn schemas(package: &'static str, v: GroupVersion, endpoints: &[Endpoint]) -> Value {
    let mut s = meta_schemas();
    if let Some(map) = s.as_object_mut() {
        let mut defs = Definitions::new(v, package, map);
        for e in endpoints.iter().filter(|e| e.version == v) {
            e.definitions(&mut defs);
        }
    }
    s
}

fn meta_schemas() -> Value {
    let t = |d: &str| json!({"type": "string", "description": d});
    let mut m = Map::new();
    m.insert(format!("{META}.Time"), json!({"type": "string", "format": "date-time", "description": "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON."}));
    m.insert(format!("{META}.FieldsV1"), json!({"type": "object", "description": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format."}));
    m.insert(format!("{META}.OwnerReference"), json!({
        "type": "object",
        "description": "OwnerReference contains enough information to let you identify an owning object.",
        "required": ["apiVersion", "kind", "name", "uid"],
        "properties": {
            "apiVersion": t("API version of the referent."),
            "kind": t("Kind of the referent."),
            "name": t("Name of the referent."),
            "uid": t("UID of the referent."),
            "controller": {"type": "boolean", "description": "If true, this reference points to the managing controller."},
            "blockOwnerDeletion": {"type": "boolean", "description": "If true, AND if the owner has the \"foregroundDeletion\" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed."},
        },
        "x-kubernetes-map-type": "atomic",
    }));
    m.insert(format!("{META}.ManagedFieldsEntry"), json!({
        "type": "object",
        "description": "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.",
        "properties": {
            "apiVersion": t("APIVersion defines the version of this resource that this field set applies to."),
            "fieldsType": t("FieldsType is the discriminator for the different fields format and version."),
            "fieldsV1": all_of(&format!("{META}.FieldsV1"), json!({"description": "FieldsV1 holds the first JSON version format."})),
            "manager": t("Manager is an identifier of the workflow managing these fields."),
            "operation": t("Operation is the type of operation which lead to this ManagedFieldsEntry being created."),
            "subresource": t("Subresource is the name of the subresource used to update that object."),
            "time": all_of(&format!("{META}.Time"), json!({"description": "Time is the timestamp of when the ManagedFields entry was added."})),
        },
    }));
    let smap = |d: &str| json!({"type": "object", "description": d, "additionalProperties": {"type": "string", "default": ""}});
    m.insert(format!("{META}.ObjectMeta"), json!({
        "type": "object",
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "properties": {
            "annotations": smap("Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."),
            "creationTimestamp": all_of(&format!("{META}.Time"), json!({"description": "CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only."})),
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description": "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Read-only."},
            "deletionTimestamp": all_of(&format!("{META}.Time"), json!({"description": "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Read-only."})),
            "finalizers": {"type": "array", "description": "Must be empty before the object is deleted from the registry.", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"},
            "generateName": t("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only."},
            "labels": smap("Map of string keys and values that can be used to organize and categorize (scope and select) objects."),
            "managedFields": {"type": "array", "description": "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.", "items": all_of(&format!("{META}.ManagedFieldsEntry"), json!({"default": {}})), "x-kubernetes-list-type": "atomic"},
            "name": t("Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated."),
            "namespace": t("Namespace defines the space within which each name must be unique. Cannot be updated."),
            "ownerReferences": {"type": "array", "description": "List of objects depended by this object.", "items": all_of(&format!("{META}.OwnerReference"), json!({"default": {}})), "x-kubernetes-list-map-keys": ["uid"], "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge"},
            "resourceVersion": t("An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Populated by the system. Read-only."),
            "selfLink": t("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
            "uid": t("UID is the unique in time and space value for this object. Populated by the system. Read-only."),
        },
    }));
    m.insert(format!("{META}.ListMeta"), json!({
        "type": "object",
        "description": "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.",
        "properties": {
            "continue": t("continue may be set if the user set a limit on the number of items returned."),
            "remainingItemCount": {"type": "integer", "format": "int64", "description": "remainingItemCount is the number of subsequent items in the list which are not included in this list response."},
            "resourceVersion": t("String that identifies the server's internal version of this object."),
            "selfLink": t("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
        },
    }));
    m.insert(format!("{META}.StatusCause"), json!({
        "type": "object",
        "description": "StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.",
        "properties": {"field": t("The field of the resource that has caused this error."), "message": t("A human-readable description of the cause of the error."), "reason": t("A machine-readable description of the cause of the error.")},
    }));
    m.insert(format!("{META}.StatusDetails"), json!({
        "type": "object",
        "description": "StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.",
        "properties": {
            "causes": {"type": "array", "items": all_of(&format!("{META}.StatusCause"), json!({"default": {}})), "x-kubernetes-list-type": "atomic"},
            "group": t("The group attribute of the resource associated with the status StatusReason."),
            "kind": t("The kind attribute of the resource associated with the status StatusReason."),
            "name": t("The name attribute of the resource associated with the status StatusReason."),
            "retryAfterSeconds": {"type": "integer", "format": "int32"},
            "uid": t("UID of the resource."),
        },
    }));
    m.insert(format!("{META}.Status"), json!({
        "type": "object",
        "description": "Status is a return value for calls that don't return other objects.",
        "properties": {
            "apiVersion": t("APIVersion defines the versioned schema of this representation of an object."),
            "code": {"type": "integer", "format": "int32", "description": "Suggested HTTP return code for this status, 0 if not set."},
            "details": all_of(&format!("{META}.StatusDetails"), json!({"description": "Extended data associated with the reason."})),
            "kind": t("Kind is a string value representing the REST resource this object represents."),
            "message": t("A human-readable description of the status of this operation."),
            "metadata": all_of(&format!("{META}.ListMeta"), json!({"default": {}})),
            "reason": t("A machine-readable description of why this operation is in the \"Failure\" status."),
            "status": t("Status of the operation. One of: \"Success\" or \"Failure\"."),
        },
        "x-kubernetes-group-version-kind": [{"group": "", "kind": "Status", "version": "v1"}],
    }));
    m.insert(format!("{META}.Preconditions"), json!({
        "type": "object",
        "description": "Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.",
        "properties": {"resourceVersion": t("Specifies the target ResourceVersion"), "uid": t("Specifies the target UID.")},
    }));
    m.insert(format!("{META}.DeleteOptions"), json!({
        "type": "object",
        "description": "DeleteOptions may be provided when deleting an API object.",
        "properties": {
            "apiVersion": t("APIVersion defines the versioned schema of this representation of an object."),
            "kind": t("Kind is a string value representing the REST resource this object represents."),
            "dryRun": {"type": "array", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "atomic"},
            "gracePeriodSeconds": {"type": "integer", "format": "int64"},
            "preconditions": all_of(&format!("{META}.Preconditions"), json!({})),
            "propagationPolicy": t("Whether and how garbage collection will be performed."),
        },
    }));
    m.insert(
        format!("{META}.Patch"),
        json!({"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}),
    );
    Value::Object(m)
}

fn qparam(name: &str, ty: &str, desc: &str) -> Value {
    json!({"name": name, "in": "query", "description": desc, "schema": {"type": ty, "uniqueItems": true}})
}

fn path_param(name: &str, desc: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": desc, "schema": {"type": "string", "uniqueItems": true}})
}

fn content(schema: Value) -> Value {
    json!({
        "application/json": {"schema": schema.clone()},
        "application/yaml": {"schema": schema.clone()},
        "application/cbor": {"schema": schema},
    })
}

fn op(
    v: GroupVersion,
    res: &ResourceInfo,
    action: &str,
    id: &str,
    params: Vec<Value>,
    body: Option<Value>,
    responses: Value,
) -> Value {
    let mut responses = responses;
    if let Value::Object(listed) = &mut responses {
        for (code, description) in errors(action) {
            let status = r(&format!("{META}.Status"));
            listed.insert(
                code.to_owned(),
                json!({"description": description, "content": content(status)}),
            );
        }
    }
    let mut o = json!({
        "tags": [format!("{}_{}", first_lower(&group_word(v)), v.version())],
        "description": format!("{action} {}", res.kind),
        "operationId": id,
        "parameters": params,
        "responses": responses,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": v.group(), "kind": res.kind, "version": v.version()},
    });
    if let Some(b) = body {
        o["requestBody"] = b;
    }
    o
}

/// The errors an operation of `action` can answer (each a `Status`): what any request can
/// get (a bad request or query, authentication, authorization, an `Accept` nothing matches,
/// priority and fairness), and what the action can meet: an object or namespace that is not
/// there, a conflict, an expired list, a body too large or of a type not taken, an invalid
/// object or options.
fn errors(action: &str) -> Vec<(&'static str, &'static str)> {
    let mut codes = vec![
        ("400", "Bad Request"),
        ("401", "Unauthorized"),
        ("403", "Forbidden"),
        ("406", "Not Acceptable"),
        ("429", "Too Many Requests"),
    ];
    let not_found = ("404", "Not Found");
    let invalid = ("422", "Unprocessable Entity");
    let body = [
        ("413", "Request Entity Too Large"),
        ("415", "Unsupported Media Type"),
    ];
    match action {
        "get" => codes.push(not_found),
        "list" => codes.extend([("410", "Gone"), invalid]),
        "deletecollection" => codes.extend(body.into_iter().chain([invalid])),
        _ => codes.extend(
            [not_found, ("409", "Conflict")]
                .into_iter()
                .chain(body)
                .chain([invalid]),
        ),
    }
    codes.sort_unstable();
    codes
}

fn first_lower(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn write_params() -> Vec<Value> {
    vec![
        qparam(
            "dryRun",
            "string",
            "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed",
        ),
        qparam(
            "fieldManager",
            "string",
            "fieldManager is a name associated with the actor or entity that is making these changes.",
        ),
        qparam(
            "fieldValidation",
            "string",
            "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict",
        ),
    ]
}

fn list_params() -> Vec<Value> {
    vec![
        qparam(
            "allowWatchBookmarks",
            "boolean",
            "allowWatchBookmarks requests watch events with type \"BOOKMARK\".",
        ),
        qparam(
            "continue",
            "string",
            "The continue option should be set when retrieving more results from the server.",
        ),
        qparam(
            "fieldSelector",
            "string",
            "A selector to restrict the list of returned objects by their fields (metadata.name, metadata.namespace).",
        ),
        qparam(
            "labelSelector",
            "string",
            "A selector to restrict the list of returned objects by their labels.",
        ),
        qparam(
            "limit",
            "integer",
            "limit is a maximum number of responses to return for a list call.",
        ),
        qparam(
            "resourceVersion",
            "string",
            "resourceVersion sets a constraint on what resource versions a request may be served from.",
        ),
        qparam(
            "resourceVersionMatch",
            "string",
            "resourceVersionMatch determines how resourceVersion is applied to list calls.",
        ),
        qparam(
            "timeoutSeconds",
            "integer",
            "Timeout for the list/watch call.",
        ),
        qparam(
            "watch",
            "boolean",
            "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
        ),
    ]
}

fn ok(schema: Value) -> Value {
    json!({"description": "OK", "content": content(schema)})
}

/// The paths of one resource in one version.
fn resource_paths(package: &str, v: GroupVersion, e: &Endpoint, paths: &mut Map<String, Value>) {
    let res = e.resource;
    let obj = r(&model(package, v, res.kind));
    let list = r(&model(package, v, res.list_kind));
    let kind = res.kind;
    let ver = {
        let s = v.version();
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    let (ns_part, ns_word, ns_params) = if res.namespaced {
        (
            "namespaces/{namespace}/",
            "Namespaced",
            vec![path_param(
                "namespace",
                "object name and auth scope, such as for teams and projects",
            )],
        )
    } else {
        ("", "", vec![])
    };
    let base = format!("{}/{ns_part}{}", v.path(), res.resource);
    let word = group_word(v);
    let pretty = qparam(
        "pretty",
        "string",
        "If 'true', then the output is pretty printed.",
    );
    let body = |s: Value| json!({"content": {"*/*": {"schema": s}}, "required": true});
    let mut coll = json!({"parameters": ns_params.iter().cloned().chain([pretty.clone()]).collect::<Vec<_>>()});
    coll["get"] = op(
        v,
        res,
        "list",
        &format!("list{word}{ver}{ns_word}{kind}"),
        list_params(),
        None,
        json!({"200": ok(list.clone())}),
    );
    coll["post"] = op(
        v,
        res,
        "post",
        &format!("create{word}{ver}{ns_word}{kind}"),
        write_params(),
        Some(body(obj.clone())),
        json!({"200": ok(obj.clone()), "201": {"description": "Created", "content": content(obj.clone())}}),
    );
    let mut dc_params = list_params();
    dc_params.push(qparam(
        "dryRun",
        "string",
        "When present, indicates that modifications should not be persisted.",
    ));
    if res.verbs.contains(&"deletecollection") {
        coll["delete"] = op(
            v,
            res,
            "deletecollection",
            &format!("delete{word}{ver}Collection{ns_word}{kind}"),
            dc_params,
            Some(json!({"content": {"*/*": {"schema": r(&format!("{META}.DeleteOptions"))}}})),
            json!({"200": ok(r(&format!("{META}.Status")))}),
        );
    }
    paths.insert(base.clone(), coll);

    let mut item_params = vec![path_param("name", &format!("name of the {kind}"))];
    item_params.extend(ns_params);
    item_params.push(pretty);
    let mut item = json!({"parameters": item_params});
    item["get"] = op(
        v,
        res,
        "get",
        &format!("read{word}{ver}{ns_word}{kind}"),
        vec![],
        None,
        json!({"200": ok(obj.clone())}),
    );
    item["put"] = op(
        v,
        res,
        "put",
        &format!("replace{word}{ver}{ns_word}{kind}"),
        write_params(),
        Some(body(obj.clone())),
        json!({"200": ok(obj.clone()), "201": {"description": "Created", "content": content(obj.clone())}}),
    );
    let mut patch_params = write_params();
    patch_params.push(qparam("force", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people."));
    // The JSON forms of the patch types the endpoint takes (apply's CBOR form beside them).
    let patch_content: Map<String, Value> = e
        .patch_types()
        .iter()
        .filter(|p| *p != &PatchType::StrategicMergePatchCbor)
        .map(|p| {
            let schema = json!({"schema": r(&format!("{META}.Patch"))});
            (p.media_type().to_owned(), schema)
        })
        .collect();
    let patch_body = json!({"required": true, "content": patch_content});
    item["patch"] = op(
        v,
        res,
        "patch",
        &format!("patch{word}{ver}{ns_word}{kind}"),
        patch_params,
        Some(patch_body),
        json!({"200": ok(obj.clone()), "201": {"description": "Created", "content": content(obj.clone())}}),
    );
    item["delete"] = op(
        v,
        res,
        "delete",
        &format!("delete{word}{ver}{ns_word}{kind}"),
        vec![qparam(
            "dryRun",
            "string",
            "When present, indicates that modifications should not be persisted.",
        )],
        Some(json!({"content": {"*/*": {"schema": r(&format!("{META}.DeleteOptions"))}}})),
        json!({"200": ok(obj.clone()), "202": {"description": "Accepted", "content": content(obj)}}),
    );
    paths.insert(format!("{base}/{{name}}"), item);

    if res.namespaced {
        let all = format!("{}/{}", v.path(), res.resource);
        let mut p = json!({"parameters": [qparam("pretty", "string", "If 'true', then the output is pretty printed.")]});
        p["get"] = op(
            v,
            res,
            "list",
            &format!("list{word}{ver}{kind}ForAllNamespaces"),
            list_params(),
            None,
            json!({"200": ok(list)}),
        );
        paths.insert(all, p);
    }
}

/// The OpenAPI v3 document of one group-version: the paths of its resources and the schemas
/// of its types.
pub fn document(info: OpenApiInfo, v: GroupVersion, endpoints: &[Endpoint]) -> Value {
    let mut paths = Map::new();
    for e in endpoints.iter().filter(|e| e.version == v) {
        resource_paths(info.package, v, e, &mut paths);
    }
    let title = if v.group() == CORE_GROUP {
        "Kubernetes"
    } else {
        info.title
    };
    json!({
        "openapi": "3.0.0",
        "info": {"title": title, "version": "0.1"},
        "paths": paths,
        "components": {"schemas": schemas(info.package, v, endpoints)},
    })
}

/// Compiles the declarative validation of every kind `endpoints` serve, from the schemas
/// their documents publish (so what is published is what is enforced).
pub fn validators(
    info: OpenApiInfo,
    endpoints: &[Endpoint],
) -> Result<Validators, DeclarationError> {
    let mut out = Validators::default();
    let catalog = catalog_of(endpoints);
    for v in catalog.versions() {
        let schemas = schemas(info.package, v, endpoints);
        let Value::Object(schemas) = schemas else {
            continue;
        };
        for res in catalog.resources(v) {
            let validator = Validator::compile(&schemas, &model(info.package, v, res.kind))?;
            out.insert(v, res.resource, validator);
        }
    }
    Ok(out)
}

/// Checks of a server's documents that hold for any server: every declaration compiles, every
/// `$ref` resolves, every
/// object schema names its group-version-kind, and every PATCH takes `fieldValidation` (which
/// kubectl looks for). A server's tests run it over their own endpoints.
pub fn check_documents(info: OpenApiInfo, endpoints: &[Endpoint]) -> Result<(), String> {
    validators(info, endpoints).map_err(|e| format!("declaration: {e}"))?;
    let catalog = catalog_of(endpoints);
    for v in catalog.versions() {
        let doc = document(info, v, endpoints);
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"]
            .as_object()
            .ok_or_else(|| format!("{v:?}: no schemas"))?;
        for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = part.split('"').next().unwrap_or_default();
            if !schemas.contains_key(name) {
                return Err(format!("{v:?}: dangling $ref {name}"));
            }
        }
        for res in catalog.resources(v) {
            let ns = if res.namespaced {
                "namespaces/{namespace}/"
            } else {
                ""
            };
            let p = format!("{}/{ns}{}/{{name}}", v.path(), res.resource);
            let patch = &doc["paths"][&p]["patch"];
            if patch["x-kubernetes-group-version-kind"]["kind"] != res.kind {
                return Err(format!("{p}: PATCH names no kind {}", res.kind));
            }
            let takes_field_validation = patch["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == "fieldValidation"));
            if !takes_field_validation {
                return Err(format!("{p}: PATCH takes no fieldValidation"));
            }
            let object = &schemas[&model(info.package, v, res.kind)];
            if object["x-kubernetes-group-version-kind"][0]["kind"] != res.kind {
                return Err(format!("{v:?}: no schema of kind {}", res.kind));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core_v1::Namespace;

    const INFO: OpenApiInfo = OpenApiInfo {
        title: "Test",
        package: "io.example.test",
    };

    #[test]
    fn core_documents_check_out() {
        let endpoints = [Endpoint::of::<Namespace>()];
        check_documents(INFO, &endpoints).unwrap();
        let doc = document(INFO, crate::core_v1::CORE_V1, &endpoints);
        let phase = &doc["components"]["schemas"]["io.k8s.api.core.v1.NamespaceStatus"]["properties"]
            ["phase"];
        assert_eq!(phase["enum"], json!(["Active", "Terminating"]));
        assert_eq!(doc["info"]["title"], "Kubernetes");
        assert!(doc["paths"]["/api/v1/namespaces"]["get"]["operationId"] == "listCoreV1Namespace");
    }

    #[test]
    fn group_words_follow_kubernetes() {
        let word = |av| group_word(GroupVersion::new(av));
        assert_eq!(word("v1"), "Core");
        assert_eq!(word("rbac.authorization.k8s.io/v1"), "RbacAuthorization");
        assert_eq!(word("apps/v1"), "Apps");
        assert_eq!(word("wardle.example.com/v1beta1"), "WardleExample");
    }
}
