//! Label and field selectors.

use std::collections::BTreeMap;

use conneg_apiserver::meta::ObjectMeta;
use conneg_apiserver::selector::{FieldSelector, LabelSelector, Selectors};

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn label_selector_grammar_and_matching() {
    let s = LabelSelector::parse("a=b,c!=d,e in (x,y),!f,g").unwrap();
    assert_eq!(s.requirements.len(), 5);
    assert!(s.matches(&labels(&[("a", "b"), ("e", "x"), ("g", "")])));
    assert!(s.matches(&labels(&[("a", "b"), ("c", "z"), ("e", "y"), ("g", "1")])));
    assert!(
        !s.matches(&labels(&[("a", "b"), ("c", "d"), ("e", "x"), ("g", "")])),
        "c!=d"
    );
    assert!(
        !s.matches(&labels(&[("a", "b"), ("e", "x"), ("f", "1"), ("g", "")])),
        "!f"
    );
    assert!(
        !s.matches(&labels(&[("a", "b"), ("e", "z"), ("g", "")])),
        "e in"
    );
    assert!(!s.matches(&labels(&[("a", "b"), ("e", "x")])), "g exists");
    assert!(!s.matches(&labels(&[])), "a=b");

    let s = LabelSelector::parse(" env notin ( prod , staging ) , tier==web ").unwrap();
    assert!(s.matches(&labels(&[("tier", "web")])));
    assert!(!s.matches(&labels(&[("tier", "web"), ("env", "prod")])));

    let s = LabelSelector::parse("example.com/team=a-b_c.d,n>3,m<10").unwrap();
    assert!(s.matches(&labels(&[
        ("example.com/team", "a-b_c.d"),
        ("n", "4"),
        ("m", "9")
    ])));
    assert!(!s.matches(&labels(&[
        ("example.com/team", "a-b_c.d"),
        ("n", "3"),
        ("m", "9")
    ])));
    assert!(!s.matches(&labels(&[
        ("example.com/team", "a-b_c.d"),
        ("n", "x"),
        ("m", "9")
    ])));

    assert!(LabelSelector::parse("").unwrap().matches(&labels(&[])));
    assert!(
        LabelSelector::parse("a=")
            .unwrap()
            .matches(&labels(&[("a", "")]))
    );
    for bad in [
        "a=b,", "a in ()", "a in (b", "=b", "a=b c", "-a=b", "a=-b", "n>x", "a b", "!a=b", "a in b",
    ] {
        assert!(LabelSelector::parse(bad).is_err(), "{bad:?} should fail");
    }
}

#[test]
fn field_selector() {
    let m = ObjectMeta {
        name: "n1".into(),
        namespace: "ns".into(),
        ..Default::default()
    };
    assert!(
        FieldSelector::parse("metadata.name=n1")
            .unwrap()
            .matches_meta(&m)
    );
    assert!(
        FieldSelector::parse("metadata.name==n1,metadata.namespace=ns")
            .unwrap()
            .matches_meta(&m)
    );
    assert!(
        !FieldSelector::parse("metadata.namespace!=ns")
            .unwrap()
            .matches_meta(&m)
    );
    assert!(FieldSelector::parse("").unwrap().matches_meta(&m));
    assert_eq!(
        FieldSelector::parse("metadata.name=n1")
            .unwrap()
            .requires_exact_name(),
        Some("n1")
    );
    let esc = FieldSelector::parse(r"metadata.name=a\,b\=c\\").unwrap();
    assert_eq!(esc.requirements[0].value, r"a,b=c\");
    assert_eq!(
        FieldSelector::parse("spec.x=1").unwrap_err().to_string(),
        "field label not supported: spec.x"
    );
    assert!(FieldSelector::parse("metadata.name").is_err());
    assert!(FieldSelector::parse(r"metadata.name=a\x").is_err());

    let both = Selectors::parse(Some("a=b"), Some("metadata.name=n1")).unwrap();
    let mut m2 = m.clone();
    m2.labels.insert("a".into(), "b".into());
    assert!(both.matches(&m2));
    assert!(!both.matches(&m));
}

#[test]
fn label_selector_errors_name_the_value() {
    let e = LabelSelector::parse("-a=b").unwrap_err().to_string();
    assert!(
        e.starts_with(
            r#"unable to parse requirement: <nil>: Invalid value: "-a": name part must consist of"#
        ),
        "{e}"
    );
}
