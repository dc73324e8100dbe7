//! `#[conneg_apiserver::kind(...)]`: an object kind declared once.
//!
//! Use it through `conneg_apiserver::kind` (this crate is its implementation); the
//! documentation and the examples are there.
//!
//! The attribute takes a struct with named fields and
//!
//! * puts the three fields every Kubernetes object carries at its front: `kind`,
//!   `api_version` (`apiVersion`) and `metadata`, with the serde attributes of Go's
//!   `encoding/json` tags (`omitempty` strings, `null` read as empty, metadata always written)
//!   and explicit names, so the struct's `rename_all` does not matter;
//! * implements `HasObjectMeta`, `Versioned` and `VersionedObject` (its list is `List<Self>`)
//!   from the declaration: the resource (written out, or a shared `ResourceInfo` named with
//!   `resource = PATH`), the version, the internal type and the defaulting function.
//!
//! Generated code names `::conneg_apiserver` only (conneg-apiserver names itself so with
//! `extern crate self as conneg_apiserver`).

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, quote};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Data, DeriveInput, Error, Fields, LitStr, Result, Token, parse_quote};

/// (Implemented by the conneg-apiserver-derive crate.)
#[proc_macro_attribute]
pub fn kind(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args.into(), item.into())
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// The facts of a resource written in the attribute (the form without `resource = PATH`).
struct Inline {
    group: LitStr,
    kind: LitStr,
    plural: Option<LitStr>,
    singular: Option<LitStr>,
    list_kind: Option<LitStr>,
    namespaced: bool,
    status: bool,
    short_names: Option<Vec<LitStr>>,
}

/// Where the resource facts come from.
enum Resource {
    Inline(Inline),
    /// A shared `ResourceInfo` (`const` or `static`) for a kind served in several versions.
    Shared(syn::Path),
}

/// The parsed declaration.
struct Declaration {
    version: LitStr,
    resource: Resource,
    internal: Option<syn::Type>,
    defaults: Option<syn::Path>,
}

/// Every option as it was written, before the two forms are told apart.
#[derive(Default)]
struct Options {
    group: Option<LitStr>,
    version: Option<LitStr>,
    kind: Option<LitStr>,
    plural: Option<LitStr>,
    singular: Option<LitStr>,
    list_kind: Option<LitStr>,
    namespaced: Option<Span>,
    status: Option<Span>,
    short_names: Option<(Span, Vec<LitStr>)>,
    resource: Option<syn::Path>,
    internal: Option<syn::Type>,
    defaults: Option<syn::Path>,
}

const OPTIONS: &str = "`group`, `version`, `kind`, `plural`, `singular`, `list_kind`, \
                       `namespaced`, `status`, `short_names`, `resource`, `internal`, `defaults`";

/// Stores `value` in `slot`, refusing a second one.
fn once<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>) -> Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("`{}` is given twice", meta.path.to_token_stream())));
    }
    *slot = Some(value);
    Ok(())
}

fn parse_options(args: TokenStream2) -> Result<Options> {
    let mut o = Options::default();
    let parser = syn::meta::parser(|meta| {
        let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error(format!("unknown option; expected one of {OPTIONS}")));
        };
        match name.as_str() {
            "group" => once(&mut o.group, meta.value()?.parse()?, &meta),
            "version" => once(&mut o.version, meta.value()?.parse()?, &meta),
            "kind" => once(&mut o.kind, meta.value()?.parse()?, &meta),
            "plural" => once(&mut o.plural, meta.value()?.parse()?, &meta),
            "singular" => once(&mut o.singular, meta.value()?.parse()?, &meta),
            "list_kind" => once(&mut o.list_kind, meta.value()?.parse()?, &meta),
            "resource" => once(&mut o.resource, meta.value()?.parse()?, &meta),
            "internal" => once(&mut o.internal, meta.value()?.parse()?, &meta),
            "defaults" => once(&mut o.defaults, meta.value()?.parse()?, &meta),
            "namespaced" | "status" => {
                if meta.input.peek(Token![=]) {
                    return Err(meta.error(format!("`{name}` is a flag: write `{name}` alone")));
                }
                let span = meta
                    .path
                    .get_ident()
                    .map_or_else(Span::call_site, |i| i.span());
                let slot = if name == "namespaced" {
                    &mut o.namespaced
                } else {
                    &mut o.status
                };
                once(slot, span, &meta)
            }
            "short_names" => {
                let span = meta
                    .path
                    .get_ident()
                    .map_or_else(Span::call_site, |i| i.span());
                let content;
                let value = meta.value()?;
                syn::bracketed!(content in value);
                let names = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
                once(
                    &mut o.short_names,
                    (span, names.into_iter().collect()),
                    &meta,
                )
            }
            _ => Err(meta.error(format!(
                "unknown option `{name}`; expected one of {OPTIONS}"
            ))),
        }
    });
    parser.parse2(args)?;
    Ok(o)
}

/// A string option that must not be empty (and, for a name, hold no `/`).
fn check_name(lit: &LitStr, what: &str) -> Result<()> {
    let v = lit.value();
    if v.is_empty() {
        return Err(Error::new(
            lit.span(),
            format!("`{what}` must not be empty"),
        ));
    }
    if v.contains('/') || v.chars().any(char::is_whitespace) {
        return Err(Error::new(
            lit.span(),
            format!("`{what}` must not contain `/` or spaces"),
        ));
    }
    Ok(())
}

fn declaration(args: TokenStream2) -> Result<Declaration> {
    let o = parse_options(args)?;
    let Some(version) = o.version else {
        return Err(Error::new(
            Span::call_site(),
            "missing `version = \"...\"` (the version of this type, e.g. `version = \"v1\"`)",
        ));
    };
    check_name(&version, "version")?;
    let resource = match o.resource {
        Some(path) => {
            // With a shared resource every resource fact is its: writing one here as well would
            // be the second copy this form exists to avoid.
            let given: [(&str, Option<Span>); 8] = [
                ("group", o.group.as_ref().map(LitStr::span)),
                ("kind", o.kind.as_ref().map(LitStr::span)),
                ("plural", o.plural.as_ref().map(LitStr::span)),
                ("singular", o.singular.as_ref().map(LitStr::span)),
                ("list_kind", o.list_kind.as_ref().map(LitStr::span)),
                ("namespaced", o.namespaced),
                ("status", o.status),
                ("short_names", o.short_names.as_ref().map(|(s, _)| *s)),
            ];
            if let Some((name, Some(span))) = given.into_iter().find(|(_, s)| s.is_some()) {
                return Err(Error::new(
                    span,
                    format!(
                        "`{name}` comes from `resource = {}`: leave it out here",
                        path_text(&path)
                    ),
                ));
            }
            Resource::Shared(path)
        }
        None => {
            let Some(group) = o.group else {
                return Err(Error::new(
                    Span::call_site(),
                    "missing `group = \"...\"` (`\"\"` for the core group), or \
                     `resource = PATH` naming a shared `ResourceInfo`",
                ));
            };
            if group.value().contains('/') || group.value().chars().any(char::is_whitespace) {
                return Err(Error::new(
                    group.span(),
                    "`group` must not contain `/` or spaces",
                ));
            }
            let Some(kind) = o.kind else {
                return Err(Error::new(
                    Span::call_site(),
                    "missing `kind = \"...\"` (the kind, e.g. `kind = \"Widget\"`)",
                ));
            };
            check_name(&kind, "kind")?;
            for (lit, what) in [
                (&o.plural, "plural"),
                (&o.singular, "singular"),
                (&o.list_kind, "list_kind"),
            ] {
                if let Some(lit) = lit {
                    check_name(lit, what)?;
                }
            }
            if let Some((_, names)) = &o.short_names {
                for n in names {
                    check_name(n, "short_names")?;
                }
            }
            Resource::Inline(Inline {
                group,
                kind,
                plural: o.plural,
                singular: o.singular,
                list_kind: o.list_kind,
                namespaced: o.namespaced.is_some(),
                status: o.status.is_some(),
                short_names: o.short_names.map(|(_, n)| n),
            })
        }
    };
    Ok(Declaration {
        version,
        resource,
        internal: o.internal,
        defaults: o.defaults,
    })
}

/// The names the attribute gives the fields it adds.
const INJECTED: [&str; 3] = ["kind", "api_version", "metadata"];

/// Whether the struct derives `JsonSchema` (its fields may then carry `#[schemars]`).
fn derives_json_schema(input: &DeriveInput) -> Result<bool> {
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let paths = attr.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)?;
        if paths
            .iter()
            .any(|p| p.segments.last().is_some_and(|s| s.ident == "JsonSchema"))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

fn expand(args: TokenStream2, item: TokenStream2) -> Result<TokenStream2> {
    let mut input: DeriveInput = syn::parse2(item)?;
    let decl = declaration(args)?;
    let name = input.ident.clone();
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        return Err(Error::new_spanned(
            &input.generics,
            "#[kind] takes a struct without generic parameters",
        ));
    }
    let with_schema = derives_json_schema(&input)?;
    let vis = input.vis.clone();
    let Data::Struct(data) = &mut input.data else {
        return Err(Error::new(
            name.span(),
            "#[kind] takes a struct with named fields (an object), not an enum or a union",
        ));
    };
    let Fields::Named(fields) = &mut data.fields else {
        return Err(Error::new(
            name.span(),
            "#[kind] takes a struct with named fields (an object), not a tuple or unit struct",
        ));
    };
    for f in &fields.named {
        if let Some(ident) = &f.ident
            && INJECTED.iter().any(|n| ident == n)
        {
            return Err(Error::new(
                ident.span(),
                format!("`{ident}` is added by #[kind]: remove this field"),
            ));
        }
    }

    let cr = quote!(::conneg_apiserver);
    let version_str = decl.version.value();
    // The field docs are the descriptions schemars publishes: `Flunder`, `group/version`, as the
    // hand-written types said. With a shared resource the kind and group are only known to the
    // compiler, so the rustdoc says where they come from and the schema reads them.
    let (kind_doc, api_version_doc, schema_attrs) = match &decl.resource {
        Resource::Inline(r) => (
            format!(" `{}`.", r.kind.value()),
            format!(" `{}`.", api_version(&r.group.value(), &version_str)),
            None,
        ),
        Resource::Shared(path) => {
            let p = path_text(path);
            let kind_attr = quote!(#[schemars(description = #cr::__private::code_sentence(
                <#name as #cr::resource::Versioned>::KIND))]);
            let version_attr = quote!(#[schemars(description = #cr::__private::code_sentence(
                <#name as #cr::resource::Versioned>::VERSION.api_version()))]);
            (
                format!(" The kind of `{p}`."),
                format!(" `{version_str}` in the group of `{p}`."),
                with_schema.then_some((kind_attr, version_attr)),
            )
        }
    };
    let (kind_schema, version_schema) = schema_attrs.unzip();
    // `kind` and `apiVersion`: Go's `omitempty` strings.
    let type_meta = |ident: &str, wire: &str, doc: &str, schema: Option<TokenStream2>| {
        let ident = syn::Ident::new(ident, Span::call_site());
        quote! {
            #[doc = #doc]
            #schema
            #[serde(
                rename = #wire,
                default,
                deserialize_with = "::conneg_apiserver::meta::null_as_default",
                skip_serializing_if = "::std::string::String::is_empty"
            )]
            #vis #ident: ::std::string::String,
        }
    };
    let kind_field = type_meta("kind", "kind", &kind_doc, kind_schema);
    let api_version_field = type_meta(
        "api_version",
        "apiVersion",
        &api_version_doc,
        version_schema,
    );
    let injected: syn::FieldsNamed = parse_quote!({
        #kind_field
        #api_version_field
        /// Metadata (always written).
        #[serde(
            rename = "metadata",
            default,
            deserialize_with = "::conneg_apiserver::meta::null_as_default"
        )]
        #vis metadata: #cr::meta::ObjectMeta,
    });
    let rest = std::mem::take(&mut fields.named);
    fields.named = injected.named.into_iter().chain(rest).collect();

    let (resource, version) = match &decl.resource {
        Resource::Inline(r) => {
            let version = api_version(&r.group.value(), &version_str);
            (
                inline_resource(r),
                quote!(#cr::resource::GroupVersion::new(#version)),
            )
        }
        Resource::Shared(path) => (
            quote!(&#path),
            // `group/version` of a group only the compiler knows: joined in const code.
            quote!({
                const GROUP: &str = #path.group;
                const LEN: usize = #cr::__private::api_version_len(GROUP, #version_str);
                const BYTES: [u8; LEN] = #cr::__private::api_version_bytes(GROUP, #version_str);
                #cr::resource::GroupVersion::new(#cr::__private::utf8(&BYTES))
            }),
        ),
    };
    let versioned = quote!(<Self as #cr::resource::Versioned>);
    let (internal, into_internal, from_internal) = match &decl.internal {
        None => (quote!(Self), quote!(self), quote!(internal)),
        Some(ty) => (
            quote!(#ty),
            quote!(<#ty as ::core::convert::From<Self>>::from(self)),
            quote!(<Self as ::core::convert::From<#ty>>::from(internal)),
        ),
    };
    let defaults = decl.defaults.as_ref().map(|f| {
        quote! {
            fn apply_defaults(&mut self) {
                #f(self);
            }
        }
    });

    Ok(quote! {
        #input

        impl #cr::meta::HasObjectMeta for #name {
            fn meta(&self) -> &#cr::meta::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut #cr::meta::ObjectMeta {
                &mut self.metadata
            }
        }

        impl #cr::resource::Versioned for #name {
            type Internal = #internal;
            const VERSION: #cr::resource::GroupVersion = #version;
            const KIND: &'static str =
                <Self as #cr::resource::VersionedObject>::RESOURCE.kind;

            fn set_type_meta(&mut self) {
                ::std::borrow::ToOwned::clone_into(
                    #versioned::VERSION.api_version(),
                    &mut self.api_version,
                );
                ::std::borrow::ToOwned::clone_into(#versioned::KIND, &mut self.kind);
            }
            #defaults
            fn into_internal(self) -> Self::Internal {
                #into_internal
            }
            fn from_internal(internal: Self::Internal) -> Self {
                let mut out: Self = #from_internal;
                #versioned::set_type_meta(&mut out);
                out
            }
        }

        impl #cr::resource::VersionedObject for #name {
            type List = #cr::resource::List<Self>;
            const RESOURCE: &'static #cr::resource::ResourceInfo = #resource;
            fn type_meta(&self) -> (&str, &str) {
                (&self.api_version, &self.kind)
            }
        }
    })
}

/// A path as it was written (`a::R`, not `a :: R`).
fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// `group/version`, or `version` alone in the core group (`""`): `apiVersion`.
fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// The `&'static ResourceInfo` of the written-out form, built by const code.
fn inline_resource(r: &Inline) -> TokenStream2 {
    let cr = quote!(::conneg_apiserver);
    let kind = r.kind.value();
    let lower = kind.to_lowercase();
    let group = &r.group;
    let plural = r
        .plural
        .as_ref()
        .map_or_else(|| format!("{lower}s"), LitStr::value);
    let singular = r.singular.as_ref().map_or(lower, LitStr::value);
    let list_kind = r
        .list_kind
        .as_ref()
        .map_or_else(|| format!("{kind}List"), LitStr::value);
    let namespaced = r.namespaced;
    let new = quote! {
        #cr::resource::ResourceInfo::new(#group, #plural, #singular, #kind, #list_kind, #namespaced)
    };
    let status = r.status.then(|| quote!(status_subresource: true,));
    let short_names = r
        .short_names
        .as_ref()
        .map(|names| quote!(short_names: &[#(#names),*],));
    if status.is_none() && short_names.is_none() {
        quote!(&#new)
    } else {
        quote!(&#cr::resource::ResourceInfo { #status #short_names ..#new })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `args` on `item` is a compile error that says `want`.
    fn refused(args: TokenStream2, item: TokenStream2, want: &str) {
        match expand(args, item) {
            Ok(out) => panic!("expected an error saying {want:?}, got {out}"),
            Err(e) => assert!(e.to_string().contains(want), "{e}"),
        }
    }

    /// `args` on a plain struct is refused with `want`.
    fn refused_args(args: TokenStream2, want: &str) {
        refused(
            args,
            quote!(
                struct Widget {
                    spec: u8,
                }
            ),
            want,
        );
    }

    #[test]
    fn missing_options_are_named() {
        refused_args(quote!(group = "g", kind = "W"), "missing `version");
        refused_args(quote!(version = "v1", kind = "W"), "missing `group");
        refused_args(quote!(group = "", version = "v1"), "missing `kind");
    }

    #[test]
    fn unknown_and_repeated_options_are_refused() {
        let (unknown, twice, flag) = (
            quote!(version = "v1", resource = R, colour = "red"),
            quote!(version = "v1", version = "v2", resource = R),
            quote!(version = "v1", resource = R, namespaced = true),
        );
        refused_args(unknown, "unknown option `colour`");
        refused_args(twice, "`version` is given twice");
        refused_args(flag, "`namespaced` is a flag");
    }

    #[test]
    fn a_shared_resource_takes_no_resource_facts() {
        let (plural, scope) = (
            quote!(version = "v1", resource = R, plural = "ws"),
            quote!(version = "v1", resource = a::R, namespaced),
        );
        refused_args(plural, "`plural` comes from `resource = R`");
        refused_args(scope, "`namespaced` comes from `resource = a::R`");
    }

    #[test]
    fn names_are_checked() {
        let (slash, empty) = (
            quote!(group = "g", version = "v1/x", kind = "W"),
            quote!(group = "g", version = "v1", kind = ""),
        );
        refused_args(slash, "`version` must not contain");
        refused_args(empty, "`kind` must not be empty");
    }

    #[test]
    fn only_structs_with_named_fields() {
        let args = quote!(version = "v1", resource = R);
        for (item, want) in [
            (
                quote!(
                    struct W(u8);
                ),
                "not a tuple or unit struct",
            ),
            (
                quote!(
                    struct W;
                ),
                "not a tuple or unit struct",
            ),
            (
                quote!(
                    enum W {
                        A,
                    }
                ),
                "not an enum",
            ),
            (
                quote!(
                    struct W<T> {
                        t: T,
                    }
                ),
                "without generic parameters",
            ),
        ] {
            refused(args.clone(), item, want);
        }
    }

    #[test]
    fn the_added_fields_must_not_be_written() {
        for field in INJECTED {
            let ident = syn::Ident::new(field, Span::call_site());
            refused(
                quote!(version = "v1", resource = R),
                quote!(struct W { #ident: String }),
                &format!("`{field}` is added by #[kind]"),
            );
        }
    }

    #[test]
    fn defaults_follow_the_kind() {
        let out = expand(
            quote!(group = "", version = "v1", kind = "Gadget"),
            quote!(
                struct Gadget {}
            ),
        )
        .unwrap()
        .to_string()
        .replace(' ', "");
        assert!(
            out.contains(r#"ResourceInfo::new("","gadgets","gadget","Gadget","GadgetList",false)"#),
            "{out}"
        );
        assert!(out.contains(r#"GroupVersion::new("v1")"#), "{out}");
        assert!(!out.contains("status_subresource"), "{out}");
        assert!(!out.contains("schemars"), "{out}");
    }
}
