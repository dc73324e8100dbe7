//! `#[derive(conneg_cbor::Decode)]`: conneg-cbor's `Decode` for a struct with named fields.
//!
//! The generated `decode` reads a definite-length map whose keys are strings: it matches each key
//! against the fields' names once (a `match` on the key's bytes), decodes the field's value with
//! its own `Decode` (or its `deserialize_with` function), and builds the struct. It gives up
//! (`UseSerde`, and the input goes to the serde path) on an unknown or repeated key and on a
//! required field that is missing, as it does not produce errors itself. Field names, `default`
//! and skipping follow the serde attributes, read as serde's derive reads them, so that the
//! struct's serde `Deserialize` agrees with it.

use super::{ContainerAttrs, bound_type_params, container_attrs, field_attrs};
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Error, Fields, LitByteStr, Result};

pub(crate) fn expand(mut input: DeriveInput) -> Result<TokenStream2> {
    let ContainerAttrs {
        rename_all: (_, rename_all),
        default: container_default,
        from,
        ..
    } = container_attrs(&input)?;
    if from {
        return Err(Error::new_spanned(
            &input.ident,
            "conneg_cbor::Decode does not support `#[serde(from)]` or `#[serde(try_from)]`; implement Decode by hand",
        ));
    }
    if let Some(l) = input.generics.lifetimes().next() {
        return Err(Error::new_spanned(
            l,
            "conneg_cbor::Decode decodes owned types; this one borrows",
        ));
    }
    let named = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => &f.named,
            _ => return Err(unsupported_shape(&input)),
        },
        _ => return Err(unsupported_shape(&input)),
    };

    let fallback = quote!(::conneg_cbor::UseSerde);
    let decode = quote!(::conneg_cbor::Decode);
    let mut slots = Vec::new();
    let mut arms = Vec::new();
    let mut inits = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for (i, f) in named.iter().enumerate() {
        let member = f.ident.clone().expect("a named field");
        let ty = &f.ty;
        let attrs = field_attrs(f)?;
        let default = attrs.default.as_ref().map(|d| match d {
            Some(path) => quote!(#path()),
            None => quote!(::core::default::Default::default()),
        });
        if attrs.skip_deserializing {
            let value = default.unwrap_or_else(|| quote!(::core::default::Default::default()));
            inits.push(quote!(#member: #value));
            continue;
        }
        let key = match attrs.rename.1 {
            Some(k) => k,
            None => rename_all.apply(&member.unraw().to_string()),
        };
        if keys.contains(&key) {
            return Err(Error::new_spanned(
                f,
                format!("two fields deserialize from {key:?}"),
            ));
        }
        let slot = format_ident!("__field{}", i);
        let value = match &attrs.deserialize_with {
            Some(path) => quote!(::conneg_cbor::__private::decode_with(__d, |__de| #path(__de))?),
            None => quote!(<#ty as #decode>::decode(__d)?),
        };
        let pattern = LitByteStr::new(key.as_bytes(), proc_macro2::Span::call_site());
        slots.push(
            quote!(let mut #slot: ::core::option::Option<#ty> = ::core::option::Option::None;),
        );
        arms.push(quote! {
            #pattern => {
                if #slot.is_some() {
                    return ::core::result::Result::Err(#fallback);
                }
                #slot = ::core::option::Option::Some(#value);
            }
        });
        // A missing field: its default; else, without a `deserialize_with`, what its type says
        // (an `Option` is `None`); else (a container default included) the serde path decides.
        let missing = match (default, &attrs.deserialize_with) {
            (Some(d), _) => d,
            (None, None) if !container_default => {
                quote!(<#ty as #decode>::missing().ok_or(#fallback)?)
            }
            _ => quote!(return ::core::result::Result::Err(#fallback)),
        };
        inits.push(quote! {
            #member: match #slot {
                ::core::option::Option::Some(__v) => __v,
                ::core::option::Option::None => #missing,
            }
        });
        keys.push(key);
    }

    let name = &input.ident;
    bound_type_params(&mut input.generics, decode.clone());
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #decode for #name #ty_generics #where_clause {
            fn decode(
                __d: &mut ::conneg_cbor::Decoder<'_, '_>,
            ) -> ::core::result::Result<Self, #fallback> {
                #(#slots)*
                let __pairs = __d.map_begin()?;
                for _ in 0..__pairs {
                    match __d.key()? {
                        #(#arms)*
                        _ => return ::core::result::Result::Err(#fallback),
                    }
                }
                __d.map_end();
                ::core::result::Result::Ok(Self { #(#inits),* })
            }
        }
    })
}

fn unsupported_shape(input: &DeriveInput) -> Error {
    Error::new_spanned(
        &input.ident,
        "conneg_cbor::Decode supports structs with named fields; implement it by hand for other types",
    )
}
