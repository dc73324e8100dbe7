//! `#[conneg_apiserver::kind(...)]`: what a declaration generates, seen from outside the crate as
//! a server author sees it: the added fields on the wire, the resource facts, `KIND` and
//! `VERSION`, both forms (written out and `resource = PATH`), conversions through an internal
//! type, defaulting, and `Strategy::RESOURCE` following the storage type.

use conneg_apiserver::core_v1::{self, NAMESPACES, Namespace};
use conneg_apiserver::meta::{HasObjectMeta, ObjectMeta};
use conneg_apiserver::registry::{ServedVersion, Strategy};
use conneg_apiserver::resource::{
    GroupVersion, List, ResourceInfo, VERBS, Versioned, VersionedList, VersionedObject, convert,
};
use serde_json::{Value, json};

/// Every option written out; a `rename_all` that would rename the added fields if they had no
/// names of their own.
#[conneg_apiserver::kind(
    group = "widgets.example.com",
    version = "v2",
    kind = "Widget",
    plural = "widgetses",
    singular = "wdgt",
    list_kind = "WidgetCollection",
    namespaced,
    status,
    short_names = ["wd", "wdg"],
    defaults = default_widget
)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
struct Widget {
    #[serde(default)]
    size_in_cm: i64,
}

fn default_widget(w: &mut Widget) {
    if w.size_in_cm == 0 {
        w.size_in_cm = 7;
    }
}

/// Core group, cluster-scoped, every default.
#[conneg_apiserver::kind(group = "", version = "v1", kind = "Gadget")]
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Gadget {}

#[test]
fn added_fields_have_their_wire_names_whatever_rename_all() {
    let mut w = Widget {
        size_in_cm: 3,
        ..Widget::default()
    };
    w.set_type_meta();
    w.meta_mut().name = "w".into();
    let json = serde_json::to_string(&w).unwrap();
    assert_eq!(
        json,
        r#"{"kind":"Widget","apiVersion":"widgets.example.com/v2","metadata":{"name":"w"},"SIZE_IN_CM":3}"#
    );
    let back: Widget = serde_json::from_str(&json).unwrap();
    assert_eq!(back, w);
    // CBOR (conneg_cbor::Serialize): the same fields, in canonical order.
    let cbor: Value = conneg_cbor::value_from_slice(&conneg_cbor::to_vec(&w).unwrap()).unwrap();
    assert_eq!(cbor, serde_json::from_str::<Value>(&json).unwrap());
}

#[test]
fn empty_type_meta_is_left_out_and_null_reads_as_empty() {
    let w = Widget::default();
    assert_eq!(
        serde_json::to_value(&w).unwrap(),
        json!({"metadata": {}, "SIZE_IN_CM": 0})
    );
    let read: Widget =
        serde_json::from_str(r#"{"kind":null,"apiVersion":null,"metadata":null}"#).unwrap();
    assert_eq!(read, Widget::default());
    assert_eq!(read.type_meta(), ("", ""));
    let read: Widget = serde_json::from_str(r#"{"kind":"K","apiVersion":"a/b"}"#).unwrap();
    assert_eq!(read.type_meta(), ("a/b", "K"));
    assert_eq!(read.meta(), &ObjectMeta::default());
}

#[test]
fn every_resource_fact_is_the_declared_one() {
    assert_eq!(
        Widget::RESOURCE,
        &ResourceInfo {
            group: "widgets.example.com",
            resource: "widgetses",
            singular: "wdgt",
            kind: "Widget",
            list_kind: "WidgetCollection",
            namespaced: true,
            verbs: VERBS,
            short_names: &["wd", "wdg"],
            categories: &[],
            status_subresource: true,
            scale_subresource: false,
        }
    );
    assert_eq!(Widget::KIND, "Widget");
    assert_eq!(Widget::VERSION, GroupVersion::new("widgets.example.com/v2"));
    assert_eq!(<List<Widget> as Versioned>::KIND, "WidgetCollection");
    let list = List::from_items(Default::default(), vec![Widget::default()]);
    assert_eq!(
        (list.kind.as_str(), list.api_version.as_str()),
        ("WidgetCollection", "widgets.example.com/v2")
    );
}

#[test]
fn a_core_cluster_scoped_kind_takes_the_defaults() {
    assert_eq!(
        Gadget::RESOURCE,
        &ResourceInfo::new("", "gadgets", "gadget", "Gadget", "GadgetList", false)
    );
    assert_eq!(Gadget::VERSION.api_version(), "v1");
    assert_eq!(Gadget::VERSION.path(), "/api/v1");
    assert_eq!(
        serde_json::to_string(&Gadget::from_internal(Gadget::default())).unwrap(),
        r#"{"kind":"Gadget","apiVersion":"v1","metadata":{}}"#
    );
}

#[test]
fn defaults_are_the_declared_function() {
    let mut w = Widget::default();
    w.apply_defaults();
    assert_eq!(w.size_in_cm, 7);
    // Without `defaults`, none.
    let mut g = Gadget::default();
    g.apply_defaults();
    assert_eq!(g, Gadget::default());
}

// A kind served in two versions: the resource written once, shared.

static SPROCKETS: ResourceInfo = ResourceInfo {
    status_subresource: true,
    scale_subresource: false,
    ..ResourceInfo::new(
        "parts.example.com",
        "sprockets",
        "sprocket",
        "Sprocket",
        "SprocketList",
        false,
    )
};

/// The internal (hub) form.
#[derive(Debug, Clone, Default, PartialEq)]
struct Sprocket {
    metadata: ObjectMeta,
    teeth: u32,
}
conneg_apiserver::impl_meta!(Sprocket);

mod v1 {
    use super::SPROCKETS;

    #[conneg_apiserver::kind(version = "v1", resource = SPROCKETS, internal = super::Sprocket)]
    #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    pub(crate) struct Sprocket {
        #[serde(default)]
        pub(crate) teeth: u32,
    }

    impl From<Sprocket> for super::Sprocket {
        fn from(s: Sprocket) -> Self {
            Self {
                metadata: s.metadata,
                teeth: s.teeth,
            }
        }
    }
    impl From<super::Sprocket> for Sprocket {
        fn from(s: super::Sprocket) -> Self {
            Self {
                metadata: s.metadata,
                teeth: s.teeth,
                ..Self::default()
            }
        }
    }
}

mod v2 {
    #[conneg_apiserver::kind(
        version = "v2",
        resource = crate::SPROCKETS,
        internal = crate::Sprocket
    )]
    #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct Sprocket {
        /// Counted in tens.
        #[serde(default)]
        pub(crate) tens_of_teeth: u32,
    }

    impl From<Sprocket> for crate::Sprocket {
        fn from(s: Sprocket) -> Self {
            Self {
                metadata: s.metadata,
                teeth: s.tens_of_teeth * 10,
            }
        }
    }
    impl From<crate::Sprocket> for Sprocket {
        fn from(s: crate::Sprocket) -> Self {
            Self {
                metadata: s.metadata,
                tens_of_teeth: s.teeth / 10,
                ..Self::default()
            }
        }
    }
}

#[test]
fn a_shared_resource_gives_kind_group_and_scope() {
    assert!(std::ptr::eq(v1::Sprocket::RESOURCE, &SPROCKETS));
    assert!(std::ptr::eq(v2::Sprocket::RESOURCE, &SPROCKETS));
    assert_eq!(v1::Sprocket::KIND, "Sprocket");
    assert_eq!(v2::Sprocket::KIND, "Sprocket");
    assert_eq!(v1::Sprocket::VERSION.api_version(), "parts.example.com/v1");
    assert_eq!(
        v2::Sprocket::VERSION,
        GroupVersion::new("parts.example.com/v2")
    );
    assert_eq!(<List<v2::Sprocket> as Versioned>::KIND, "SprocketList");
}

#[test]
fn conversions_go_through_the_internal_type_and_set_type_meta() {
    let mut old = v1::Sprocket {
        teeth: 40,
        ..Default::default()
    };
    old.meta_mut().name = "s".into();
    let hub: Sprocket = old.clone().into_internal();
    assert_eq!((hub.meta().name.as_str(), hub.teeth), ("s", 40));
    let new: v2::Sprocket = convert(old);
    assert_eq!(new.tens_of_teeth, 4);
    assert_eq!(new.type_meta(), ("parts.example.com/v2", "Sprocket"));
    assert_eq!(
        serde_json::to_value(&new).unwrap(),
        json!({"kind": "Sprocket", "apiVersion": "parts.example.com/v2",
               "metadata": {"name": "s"}, "tensOfTeeth": 4})
    );
    // A type without `internal` is its own internal form.
    let w = Widget::from_internal(Widget::default());
    assert_eq!(w.type_meta(), ("widgets.example.com/v2", "Widget"));
    assert_eq!(w.clone().into_internal(), w);
}

#[test]
fn core_namespaces_are_declared_on_their_resource() {
    assert_eq!(Namespace::KIND, "Namespace");
    assert_eq!(Namespace::VERSION, core_v1::CORE_V1);
    assert_eq!(<Namespace as VersionedObject>::RESOURCE, &NAMESPACES);
    assert_eq!(<Namespace as VersionedObject>::RESOURCE.short_names, ["ns"]);
    let mut ns = Namespace::default();
    ns.meta_mut().name = "team".into();
    ns.apply_defaults();
    assert_eq!(ns.status.phase, core_v1::PHASE_ACTIVE);
    assert_eq!(ns.meta().labels[core_v1::NAME_LABEL], "team");
    assert_eq!(
        serde_json::to_value(Namespace::from_internal(ns)).unwrap(),
        json!({"kind": "Namespace", "apiVersion": "v1",
               "metadata": {"name": "team", "labels": {"kubernetes.io/metadata.name": "team"}},
               "spec": {}, "status": {"phase": "Active"}})
    );
}

// `Strategy::RESOURCE` defaults to the storage type's resource.

impl Strategy for Sprocket {
    type Stored = v1::Sprocket;
    fn versions() -> Vec<ServedVersion<Self>> {
        vec![
            ServedVersion::of::<v1::Sprocket>(),
            ServedVersion::of::<v2::Sprocket>(),
        ]
    }
    fn same_spec(&self, other: &Self) -> bool {
        self.teeth == other.teeth
    }
}

#[test]
fn a_kind_serves_the_resource_of_its_storage_type() {
    assert!(std::ptr::eq(<Sprocket as Strategy>::RESOURCE, &SPROCKETS));
    assert_eq!(<Namespace as Strategy>::RESOURCE, &NAMESPACES);
    let versions = Sprocket::versions();
    assert_eq!(versions[1].api_version, "parts.example.com/v2");
    let hub = (versions[1].decode)(&json!({"tensOfTeeth": 2})).unwrap();
    assert_eq!(hub.teeth, 20);
}

// What `ServerBuilder::serve` checks: a served version its kind does not list is refused.

#[conneg_apiserver::kind(group = "parts.example.com", version = "v1", kind = "Gear", namespaced)]
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
struct Gear {}

impl Strategy for Gear {
    type Stored = Gear;
    fn versions() -> Vec<ServedVersion<Self>> {
        Vec::new()
    }
}

#[test]
#[should_panic(
    expected = "parts.example.com/v1 Gear is served but is not among its kind's versions"
)]
fn a_served_version_its_kind_does_not_list_is_refused() {
    let info = conneg_apiserver::server::openapi::OpenApiInfo {
        title: "Parts",
        package: "com.example.parts",
    };
    let _ = conneg_apiserver::server::ServerBuilder::new(info).serve::<Gear>();
}
