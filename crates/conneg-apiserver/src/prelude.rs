//! What a server author needs, in one line: `use conneg_apiserver::prelude::*;`.
//!
//! The declaration of a served kind ([`kind`]) and its types ([`ObjectMeta`], [`Versioned`],
//! [`ResourceInfo`], [`GroupVersion`], [`JsonSchema`]), its strategy ([`Strategy`], [`Column`],
//! [`ServedVersion`]), admission ([`admission`]), and the server: [`ServerBuilder`] builds an
//! [`AppState`] that [`AppState::serve`] serves with the bounds of [`Serving`], from the shared
//! command-line options ([`StorageArgs`], [`ServeArgs`], [`SecureServingArgs`], [`AuthArgs`]).
//!
//! ```
//! use conneg_apiserver::prelude::*;
//!
//! let info = OpenApiInfo { title: "Example", package: "com.example" };
//! let builder = ServerBuilder::new(info); // .serve::<YourType>() for each served version
//! # drop(builder);
//! let serving = ServeArgs::default().serving();
//! assert_eq!(serving.limits.max_connections, 512);
//! ```

pub use crate::config::{AuthArgs, SecureServingArgs, ServeArgs, StorageArgs};
pub use crate::declarative::JsonSchema;
pub use crate::endpoints::admission;
pub use crate::kind;
pub use crate::meta::{HasObjectMeta, ObjectMeta};
pub use crate::registry::{Column, Registry, ServedVersion, Strategy};
pub use crate::resource::{GroupVersion, List, ResourceInfo, Versioned};
pub use crate::server::openapi::OpenApiInfo;
pub use crate::server::{AppState, ServerBuilder, ServerOptions, Serving};
