//! The `BanFlunder` admission plugin (reference §6): on create, a Flunder whose name is listed
//! in any Fischer's `disallowedFlunders` is refused with 403 Forbidden.

use conneg::Status;
use conneg_apiserver::admission::{Plugin, Request};
use conneg_apiserver::registry::{Error, Registry, Strategy};
use futures_util::future::BoxFuture;

use super::{FLUNDERS, internal};

pub use conneg_apiserver::admission::Operation;

/// The BanFlunder plugin. Stateless: the caller supplies the current Fischers (Kubernetes
/// reads them from an informer; the HTTP layer lists them from storage or a cache).
#[derive(Debug, Clone, Copy, Default)]
pub struct BanFlunder;

impl BanFlunder {
    /// The plugin's registered name.
    pub const NAME: &'static str = "BanFlunder";
    /// The refusal detail.
    pub const MESSAGE: &'static str = "this name may not be used, please change the resource name";

    /// Admit (mutating phase in Kubernetes, but it never mutates). `name` is the request's
    /// object name: on create Kubernetes admits before `generateName` is expanded, so a
    /// generated name is `""` here. A refusal is [`Error::Forbidden`]: 403 once served.
    pub fn admit(
        &self,
        operation: Operation,
        name: &str,
        fischers: &[internal::Fischer],
    ) -> Result<(), Error> {
        if operation != Operation::Create {
            return Ok(());
        }
        let banned = fischers
            .iter()
            .any(|f| f.disallowed_flunders.iter().any(|d| d == name));
        if banned {
            Err(Error::Forbidden {
                resource: &FLUNDERS,
                name: name.to_owned(),
                message: Self::MESSAGE.to_owned(),
            })
        } else {
            Ok(())
        }
    }

    /// Admit the creation of `flunder`.
    pub fn admit_create(
        &self,
        flunder: &internal::Flunder,
        fischers: &[internal::Fischer],
    ) -> Result<(), Error> {
        self.admit(Operation::Create, &flunder.metadata.name, fischers)
    }
}

impl Plugin for BanFlunder {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Reads every Fischer from storage for each Flunder created.
    fn admit<'a>(
        &'a self,
        registry: &'a Registry,
        req: Request<'a>,
    ) -> BoxFuture<'a, Result<(), Status>> {
        Box::pin(async move {
            let is_flunder = req.object.is_some_and(|o| o.is::<internal::Flunder>());
            if req.operation != Operation::Create || !is_flunder {
                return Ok(());
            }
            let fischers = registry
                .list_all::<internal::Fischer>(internal::Fischer::RESOURCE, None)
                .await?;
            Ok(self.admit(req.operation, req.name, &fischers)?)
        })
    }
}
