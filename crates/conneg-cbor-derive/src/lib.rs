//! `#[derive(conneg_cbor::Serialize)]`: serde's `Serialize` for a struct with named fields, which
//! hands its fields to conneg-cbor's deterministic encoder already in canonical CBOR order; and
//! `#[derive(conneg_cbor::Decode)]` (in `decode.rs`), which reads a struct without serde's
//! visitors.
//!
//! Use them through `conneg_cbor` (this crate is their implementation); the documentation and the
//! examples are on `conneg_cbor::Serialize` and `conneg_cbor::Decode`.
//!
//! The generated impl is what `#[derive(serde::Serialize)]` generates for the same struct (the
//! same `serialize_struct` name and length, the same keys, `skip_field` for a field skipped by
//! `skip_serializing_if`), with the field calls written out twice: in declaration order, and in
//! the order of their encoded keys (shorter keys first, then bytewise: RFC 8949 §4.2.1 for keys
//! that are all strings). A thread-local mark that only conneg-cbor's deterministic serializer
//! sets, in its `serialize_struct`, picks the second order, so JSON and every other serializer
//! see the declaration order.
//!
//! Only the serde attributes that do not change a struct's shape are accepted: `rename`,
//! `rename_all`, `skip`, `skip_serializing`, `skip_serializing_if`, `serialize_with`, `with`,
//! and the ones that concern deserialization only (`default`, `deserialize_with`, `alias`,
//! ...). Anything else (`flatten`, `getter`, `tag`, `untagged`, `transparent`, `into`,
//! `bound`, ...) is a compile error naming the attribute: derive `serde::Serialize` there.

mod decode;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::{Data, DeriveInput, Error, Fields, LitStr, Result, parse_macro_input, parse_quote};

/// See `conneg_cbor::Serialize`.
#[proc_macro_derive(Serialize, attributes(serde))]
pub fn derive_serialize(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// See `conneg_cbor::Decode`.
#[proc_macro_derive(Decode, attributes(serde))]
pub fn derive_decode(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    decode::expand(input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// One serialized field.
struct Field {
    member: syn::Ident,
    ty: syn::Type,
    key: String,
    skip_if: Option<syn::ExprPath>,
    /// `serialize_with` (or `with`'s `serialize`): the function, and the wrapper type that
    /// calls it.
    with: Option<(syn::ExprPath, syn::Ident)>,
}

fn expand(mut input: DeriveInput) -> Result<TokenStream2> {
    let ContainerAttrs {
        rename,
        rename_all: (rename_all, _),
        ..
    } = container_attrs(&input)?;
    let named = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => &f.named,
            _ => return Err(unsupported_shape(&input)),
        },
        _ => return Err(unsupported_shape(&input)),
    };
    let mut fields = Vec::new();
    for f in named {
        let ident = f.ident.clone().expect("a named field");
        let attrs = field_attrs(f)?;
        if attrs.skip {
            continue;
        }
        let key = match attrs.rename.0 {
            Some(k) => k,
            None => rename_all.apply(&ident.unraw().to_string()),
        };
        if fields.iter().any(|g: &Field| g.key == key) {
            return Err(Error::new_spanned(
                f,
                format!("two fields serialize as {key:?}: a map cannot hold both"),
            ));
        }
        let wrapper = format_ident!("__SerializeWith{}", fields.len());
        fields.push(Field {
            member: ident,
            ty: f.ty.clone(),
            key,
            skip_if: attrs.skip_if,
            with: attrs.with.map(|path| (path, wrapper)),
        });
    }

    let name = &input.ident;
    let type_name = rename.unwrap_or_else(|| name.unraw().to_string());
    let serde = quote!(::conneg_cbor::__private::serde);
    bound_type_params(&mut input.generics, quote!(#serde::Serialize));
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let wrappers = with_wrappers(&fields, &input.generics, name, &serde);

    let len = fields.iter().map(|f| match &f.skip_if {
        None => quote!(1),
        Some(path) => {
            let m = &f.member;
            quote!(if #path(&self.#m) { 0 } else { 1 })
        }
    });
    let calls = |fs: &[&Field]| -> Vec<TokenStream2> {
        fs.iter()
            .map(|f| {
                let (m, key) = (&f.member, &f.key);
                let value = match &f.with {
                    None => quote!(&self.#m),
                    Some((_, w)) => quote! {
                        &#w {
                            value: &self.#m,
                            phantom: ::core::marker::PhantomData::<#name #ty_generics>,
                        }
                    },
                };
                let field = quote! {
                    #serde::ser::SerializeStruct::serialize_field(&mut __state, #key, #value)?;
                };
                match &f.skip_if {
                    None => field,
                    Some(path) => quote! {
                        if #path(&self.#m) {
                            #serde::ser::SerializeStruct::skip_field(&mut __state, #key)?;
                        } else {
                            #field
                        }
                    },
                }
            })
            .collect()
    };
    let declared: Vec<&Field> = fields.iter().collect();
    let mut canonical = declared.clone();
    canonical.sort_by(|a, b| (a.key.len(), a.key.as_bytes()).cmp(&(b.key.len(), b.key.as_bytes())));
    let body = if declared.iter().zip(&canonical).all(|(a, b)| a.key == b.key) {
        // One order for every serializer; the mark is still taken, as it is meant for this
        // struct only.
        let calls = calls(&declared);
        quote! {
            let _ = ::conneg_cbor::__private::canonical_order(__NAME);
            #(#calls)*
        }
    } else {
        let (declared, canonical) = (calls(&declared), calls(&canonical));
        quote! {
            if ::conneg_cbor::__private::canonical_order(__NAME) {
                #(#canonical)*
            } else {
                #(#declared)*
            }
        }
    };

    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #serde::Serialize for #name #ty_generics #where_clause {
            fn serialize<__S>(&self, __serializer: __S) -> ::core::result::Result<__S::Ok, __S::Error>
            where
                __S: #serde::Serializer,
            {
                // One `'static` string for both calls: the serializer's mark is its address.
                static __NAME: &str = #type_name;
                #wrappers
                #[allow(unused_mut)]
                let mut __state = #serde::Serializer::serialize_struct(
                    __serializer,
                    __NAME,
                    0usize #(+ #len)*,
                )?;
                #body
                #serde::ser::SerializeStruct::end(__state)
            }
        }
    })
}

/// For each `serialize_with` field, a type holding a reference to the field whose `Serialize`
/// calls the function (as serde's derive does): declared inside `serialize`, it repeats the
/// struct's generics, with a lifetime for the reference.
fn with_wrappers(
    fields: &[Field],
    generics: &syn::Generics,
    name: &syn::Ident,
    serde: &TokenStream2,
) -> TokenStream2 {
    let mut g = generics.clone();
    g.params.insert(0, parse_quote!('__a));
    let (w_impl, w_ty, w_where) = g.split_for_impl();
    let ty_generics = generics.split_for_impl().1;
    let items = fields.iter().filter_map(|f| {
        let (path, w) = f.with.as_ref()?;
        let ty = &f.ty;
        Some(quote! {
            struct #w #w_impl #w_where {
                value: &'__a #ty,
                phantom: ::core::marker::PhantomData<#name #ty_generics>,
            }
            impl #w_impl #serde::Serialize for #w #w_ty #w_where {
                fn serialize<__S2>(&self, __s: __S2) -> ::core::result::Result<__S2::Ok, __S2::Error>
                where
                    __S2: #serde::Serializer,
                {
                    #path(self.value, __s)
                }
            }
        })
    });
    quote!(#(#items)*)
}

/// Adds `P: bound` to the where clause for each type parameter `P`.
fn bound_type_params(generics: &mut syn::Generics, bound: TokenStream2) {
    let params: Vec<syn::Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
    if !params.is_empty() {
        let wc = generics.make_where_clause();
        for p in params {
            wc.predicates.push(parse_quote!(#p: #bound));
        }
    }
}

fn unsupported_shape(input: &DeriveInput) -> Error {
    Error::new_spanned(
        &input.ident,
        "conneg_cbor::Serialize supports structs with named fields; derive serde::Serialize for other types",
    )
}

fn unsupported(meta: &ParseNestedMeta<'_>) -> Error {
    let path = meta.path.clone();
    let name = quote!(#path).to_string();
    meta.error(format!(
        "conneg-cbor's derive does not support `#[serde({name})]`; use serde's for this type"
    ))
}

/// What a struct's own attributes say.
#[derive(Default)]
struct ContainerAttrs {
    /// `rename`, for serialization.
    rename: Option<String>,
    /// `rename_all`, for serialization and for deserialization.
    rename_all: (RenameRule, RenameRule),
    /// `default`: missing fields come from the struct's default.
    default: bool,
    /// `from` or `try_from`: deserialized through another type.
    from: bool,
}

fn container_attrs(input: &DeriveInput) -> Result<ContainerAttrs> {
    let mut c = ContainerAttrs::default();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                c.rename = names(&meta)?.0.or(c.rename.take());
            } else if meta.path.is_ident("rename_all") {
                let (ser, de) = names(&meta)?;
                let rule = |r: Option<String>, old: RenameRule| match r {
                    None => Ok(old),
                    Some(r) => RenameRule::from_str(&r).ok_or_else(|| {
                        meta.error(format!("unknown rename rule `rename_all = {r:?}`"))
                    }),
                };
                c.rename_all = (rule(ser, c.rename_all.0)?, rule(de, c.rename_all.1)?);
            } else if meta.path.is_ident("default") {
                c.default = true;
                ignore(&meta)?;
            } else if meta.path.is_ident("from") || meta.path.is_ident("try_from") {
                c.from = true;
                ignore(&meta)?;
            } else {
                pass_over(&meta, &["deny_unknown_fields", "expecting", "crate"])?;
            }
            Ok(())
        })?;
    }
    Ok(c)
}

/// What a field's attributes say about its serialization and deserialization.
#[derive(Default)]
struct FieldAttrs {
    /// `rename`: the key to serialize as, and the key to deserialize from.
    rename: (Option<String>, Option<String>),
    skip: bool,
    skip_if: Option<syn::ExprPath>,
    with: Option<syn::ExprPath>,
    skip_deserializing: bool,
    /// `default` (`Some(None)`) or `default = "path"`.
    default: Option<Option<syn::ExprPath>>,
    deserialize_with: Option<syn::ExprPath>,
}

fn field_attrs(f: &syn::Field) -> Result<FieldAttrs> {
    let mut a = FieldAttrs::default();
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let (ser, de) = names(&meta)?;
                a.rename = (ser.or(a.rename.0.take()), de.or(a.rename.1.take()));
            } else if meta.path.is_ident("skip") {
                a.skip = true;
                a.skip_deserializing = true;
            } else if meta.path.is_ident("skip_serializing") {
                a.skip = true;
            } else if meta.path.is_ident("skip_deserializing") {
                a.skip_deserializing = true;
            } else if meta.path.is_ident("skip_serializing_if") {
                a.skip_if = Some(path_value(&meta)?);
            } else if meta.path.is_ident("serialize_with") {
                a.with = Some(path_value(&meta)?);
            } else if meta.path.is_ident("deserialize_with") {
                a.deserialize_with = Some(path_value(&meta)?);
            } else if meta.path.is_ident("with") {
                let module: LitStr = meta.value()?.parse()?;
                let path = |f: &str| {
                    syn::parse_str(&format!("{}::{f}", module.value()))
                        .map_err(|e| Error::new(module.span(), e))
                };
                a.with = Some(path("serialize")?);
                a.deserialize_with = Some(path("deserialize")?);
            } else if meta.path.is_ident("default") {
                a.default = Some(if meta.input.peek(syn::Token![=]) {
                    Some(path_value(&meta)?)
                } else {
                    None
                });
            } else {
                pass_over(&meta, &["alias", "borrow"])?;
            }
            Ok(())
        })?;
    }
    Ok(a)
}

/// The names in `rename = "x"` (both) or `rename(serialize = "x", deserialize = "y")`.
fn names(meta: &ParseNestedMeta<'_>) -> Result<(Option<String>, Option<String>)> {
    if meta.input.peek(syn::Token![=]) {
        let s: LitStr = meta.value()?.parse()?;
        return Ok((Some(s.value()), Some(s.value())));
    }
    let (mut ser, mut de) = (None, None);
    meta.parse_nested_meta(|inner| {
        let s: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("serialize") {
            ser = Some(s.value());
        } else if inner.path.is_ident("deserialize") {
            de = Some(s.value());
        } else {
            return Err(inner.error("expected `serialize` or `deserialize`"));
        }
        Ok(())
    })?;
    Ok((ser, de))
}

/// The path in `key = "path"`.
fn path_value(meta: &ParseNestedMeta<'_>) -> Result<syn::ExprPath> {
    let s: LitStr = meta.value()?.parse()?;
    syn::parse_str(&s.value()).map_err(|e| Error::new(s.span(), e))
}

/// Consumes an attribute named in `harmless` (one that does not concern serialization);
/// refuses any other.
fn pass_over(meta: &ParseNestedMeta<'_>, harmless: &[&str]) -> Result<()> {
    if harmless.iter().any(|k| meta.path.is_ident(k)) {
        ignore(meta)
    } else {
        Err(unsupported(meta))
    }
}

/// Consumes an attribute that does not concern serialization: `key`, `key = "..."` or
/// `key(...)`.
fn ignore(meta: &ParseNestedMeta<'_>) -> Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Lit>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| ignore(&inner))?;
    }
    Ok(())
}

/// serde's `rename_all` rules, applied to a field name written in snake_case.
#[derive(Clone, Copy, Default)]
enum RenameRule {
    #[default]
    None,
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn from_str(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    fn apply(self, field: &str) -> String {
        match self {
            Self::None | Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
            Self::Pascal | Self::Camel => {
                let mut out = String::with_capacity(field.len());
                let mut upper = matches!(self, Self::Pascal);
                for c in field.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                if matches!(self, Self::Camel) {
                    // serde lowers the first character of the PascalCase form.
                    if let Some(first) = out.get(..1) {
                        out = first.to_ascii_lowercase() + &out[1..];
                    }
                }
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Expand = fn(DeriveInput) -> Result<TokenStream2>;

    /// Each input is refused by `expand` with an error containing its text.
    fn assert_refused<'a>(expand: Expand, cases: impl IntoIterator<Item = (DeriveInput, &'a str)>) {
        for (input, want) in cases {
            let got = match expand(input) {
                Ok(_) => panic!("expanded"),
                Err(e) => e.to_string(),
            };
            assert!(got.contains(want), "{got}");
        }
    }

    #[test]
    fn attributes_that_change_the_shape_are_refused() {
        let cases: [(DeriveInput, &str); 5] = [
            (
                parse_quote!(
                    struct S {
                        #[serde(flatten)]
                        a: M,
                    }
                ),
                "does not support `#[serde(flatten)]`",
            ),
            (
                parse_quote!(
                    struct S {
                        #[serde(default, getter = "f")]
                        a: u8,
                    }
                ),
                "does not support `#[serde(getter)]`",
            ),
            (
                parse_quote!(
                    #[serde(tag = "kind")]
                    struct S {
                        a: u8,
                    }
                ),
                "does not support `#[serde(tag)]`",
            ),
            (
                parse_quote!(
                    #[serde(rename_all = "camel")]
                    struct S {
                        a: u8,
                    }
                ),
                "unknown rename rule",
            ),
            (
                parse_quote!(
                    struct S {
                        #[serde(rename = "b")]
                        a: u8,
                        b: u8,
                    }
                ),
                "two fields serialize as \"b\"",
            ),
        ];
        assert_refused(expand, cases);
        for input in [
            parse_quote!(
                struct S(u8);
            ),
            parse_quote!(
                struct S;
            ),
            parse_quote!(
                enum E {
                    A,
                }
            ),
        ] {
            let shapes = [(input, "structs with named fields")];
            assert_refused(expand, shapes.clone());
            assert_refused(decode::expand, shapes);
        }
    }

    #[test]
    fn decode_refuses_what_it_cannot_read_the_way_serde_does() {
        let cases: [(DeriveInput, &str); 4] = [
            (
                parse_quote!(
                    struct S {
                        #[serde(default, flatten)]
                        a: M,
                    }
                ),
                "does not support `#[serde(flatten)]`",
            ),
            (
                parse_quote!(
                    #[serde(try_from = "u8")]
                    struct S {
                        a: u8,
                    }
                ),
                "does not support `#[serde(from)]` or `#[serde(try_from)]`",
            ),
            (
                parse_quote!(
                    struct S<'a> {
                        a: &'a str,
                    }
                ),
                "decodes owned types",
            ),
            (
                parse_quote!(
                    struct S {
                        #[serde(rename(deserialize = "b"))]
                        a: u8,
                        b: u8,
                    }
                ),
                "two fields deserialize from \"b\"",
            ),
        ];
        assert_refused(decode::expand, cases);
        // Keys are the deserialize names; skipped fields are not matched.
        let out = decode::expand(parse_quote! {
            #[serde(rename_all(serialize = "UPPERCASE", deserialize = "camelCase"))]
            struct S {
                #[serde(rename(serialize = "X", deserialize = "ex"))]
                x: u8,
                some_field: u8,
                #[serde(skip_deserializing)]
                skipped: u8,
            }
        })
        .unwrap()
        .to_string();
        assert!(out.contains("b\"ex\""), "{out}");
        assert!(out.contains("b\"someField\""), "{out}");
        assert!(!out.contains("b\"skipped\""), "{out}");
    }

    #[test]
    fn attributes_for_deserialization_only_are_passed_over() {
        let input: DeriveInput = parse_quote! {
            #[serde(deny_unknown_fields, default, rename(deserialize = "D"), crate = "serde")]
            struct S {
                #[serde(default = "f", alias = "x", deserialize_with = "g", borrow)]
                a: u8,
                #[serde(skip_deserializing, rename(serialize = "B", deserialize = "b"))]
                b: u8,
            }
        };
        let out = expand(input).unwrap().to_string();
        assert!(out.contains("\"S\""), "{out}");
        assert!(out.contains("\"B\""), "{out}");
    }

    #[test]
    fn rename_rules_match_serdes() {
        let cases = [
            ("lowercase", "foo_bar_baz"),
            ("UPPERCASE", "FOO_BAR_BAZ"),
            ("PascalCase", "FooBarBaz"),
            ("camelCase", "fooBarBaz"),
            ("snake_case", "foo_bar_baz"),
            ("SCREAMING_SNAKE_CASE", "FOO_BAR_BAZ"),
            ("kebab-case", "foo-bar-baz"),
            ("SCREAMING-KEBAB-CASE", "FOO-BAR-BAZ"),
        ];
        for (rule, want) in cases {
            assert_eq!(
                RenameRule::from_str(rule).unwrap().apply("foo_bar_baz"),
                want
            );
        }
        assert_eq!(RenameRule::Camel.apply("_leading"), "leading");
        assert_eq!(RenameRule::Pascal.apply("a"), "A");
        assert_eq!(RenameRule::Camel.apply(""), "");
    }

    #[test]
    fn fields_are_handed_out_in_both_orders() {
        let input: DeriveInput = parse_quote! {
            struct S { metadata: u8, kind: u8, spec: u8 }
        };
        let out = expand(input).unwrap().to_string();
        let pos = |k: &str, from: usize| from + out[from..].find(k).unwrap();
        // Canonical first (kind, spec, metadata), then declared (metadata, kind, spec).
        let c = pos("\"kind\"", 0);
        assert!(pos("\"spec\"", c) < pos("\"metadata\"", c));
        let d = pos("\"metadata\"", c);
        assert!(pos("\"kind\"", d) < pos("\"spec\"", d));
    }
}
