//! Secure serving: the rustls configuration that a Kubernetes API server's serving flags
//! describe (`--tls-cert-file`, `--tls-private-key-file`, `--cert-dir`, `--client-ca-file`,
//! `--tls-min-version`, `--tls-cipher-suites`).
//!
//! * The serving certificate comes from the given files, or else from `apiserver.crt` and
//!   `apiserver.key` in the certificate directory, made there (self-signed, for `localhost`,
//!   `127.0.0.1`, `::1` and the names asked for) the first time, and kept.
//! * The files are read again when they change on disk (checked at most once a second, on a
//!   handshake): a rotated certificate is served without a restart; a broken one is logged and
//!   the previous one kept.
//! * With client CAs, a client certificate is asked for and, when given, must chain to one of
//!   them; a client without one still connects (it may use a token, or be anonymous), as in
//!   Kubernetes (`crate::auth::X509` reads the user from a certificate).
//! * ALPN offers `h2` then `http/1.1`: a client that speaks HTTP/2 gets it, as from Go's
//!   server (`crate::http2` has its bounds); one that offers nothing gets HTTP/1.1.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;

/// The lowest TLS version served (`--tls-min-version`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsVersion {
    /// `VersionTLS12` (the default).
    #[default]
    Tls12,
    /// `VersionTLS13`.
    Tls13,
}

impl std::str::FromStr for TlsVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "VersionTLS12" => Ok(TlsVersion::Tls12),
            "VersionTLS13" => Ok(TlsVersion::Tls13),
            // rustls implements neither; Kubernetes accepts them but they are long unsafe.
            "VersionTLS10" | "VersionTLS11" => Err(format!(
                "{s} is not supported (rustls serves TLS 1.2 and 1.3); use VersionTLS12 or VersionTLS13"
            )),
            other => Err(format!(
                "unknown TLS version {other:?}: VersionTLS12 or VersionTLS13"
            )),
        }
    }
}

/// What to serve TLS with.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// The serving certificate chain (PEM), with `key_file`.
    pub cert_file: Option<PathBuf>,
    /// The serving certificate's private key (PEM).
    pub key_file: Option<PathBuf>,
    /// Where the self-signed certificate is kept when no files are given.
    pub cert_dir: PathBuf,
    /// Names (DNS names or IP addresses) the self-signed certificate is made for, besides
    /// `localhost`, `127.0.0.1` and `::1`.
    pub hosts: Vec<String>,
    /// CA bundles (PEM) that client certificates may chain to (`--client-ca-file`, and the
    /// front proxy's `--requestheader-client-ca-file`); none: no client certificates. Which
    /// one a certificate chains to decides what it proves: see [`crate::auth::X509`] and
    /// [`crate::auth::RequestHeader`].
    pub client_ca_files: Vec<PathBuf>,
    /// The lowest TLS version served.
    pub min_version: TlsVersion,
    /// The TLS 1.2 cipher suites offered, by their IANA names as Kubernetes'
    /// `--tls-cipher-suites` takes them (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`, ...);
    /// empty: rustls' defaults. TLS 1.3 suites are not configurable, as in Go.
    pub cipher_suites: Vec<String>,
}

/// Why TLS cannot be served: the message names the flag or file.
#[derive(Debug)]
pub struct TlsError(String);

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsError {}

impl TlsError {
    pub(crate) fn new(message: String) -> TlsError {
        TlsError(message)
    }
}

fn err(what: impl fmt::Display, e: impl fmt::Display) -> TlsError {
    TlsError(format!("{what}: {e}"))
}

/// The rustls server configuration for `opts`.
///
/// ```
/// use conneg_apiserver::tls::{TlsOptions, server_config};
/// let dir = tempfile::tempdir().unwrap();
/// let opts = TlsOptions { cert_dir: dir.path().to_owned(), ..TlsOptions::default() };
/// let config = server_config(&opts).unwrap();
/// assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
/// // The self-signed certificate is kept for the next start.
/// assert!(dir.path().join("apiserver.crt").exists());
/// ```
pub fn server_config(opts: &TlsOptions) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(provider(&opts.cipher_suites)?);
    let (cert, key) = match (&opts.cert_file, &opts.key_file) {
        (Some(c), Some(k)) => (c.clone(), k.clone()),
        (None, None) => self_signed(&opts.cert_dir, &opts.hosts)?,
        _ => {
            return Err(TlsError(
                "--tls-cert-file and --tls-private-key-file go together".into(),
            ));
        }
    };
    let resolver = ReloadingCert::new(cert, key, provider.clone())?;
    let versions: &[&rustls::SupportedProtocolVersion] = match opts.min_version {
        TlsVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::Tls13 => &[&rustls::version::TLS13],
    };
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| err("TLS versions", e))?;
    let builder = if opts.client_ca_files.is_empty() {
        builder.with_no_client_auth()
    } else {
        builder.with_client_cert_verifier(client_verifier(&opts.client_ca_files)?)
    };
    let mut config = builder.with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The ring provider with the TLS 1.2 suites named in `names` (all when empty), and every
/// TLS 1.3 suite; an unknown or unsupported name is an error that lists the supported ones.
fn provider(names: &[String]) -> Result<CryptoProvider, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if names.is_empty() {
        return Ok(provider);
    }
    let name = |s: &rustls::SupportedCipherSuite| format!("{:?}", s.suite());
    let tls12: Vec<String> = provider
        .cipher_suites
        .iter()
        .filter(|s| s.version() == &rustls::version::TLS12)
        .map(name)
        .collect();
    if let Some(unknown) = names.iter().find(|n| !tls12.contains(n)) {
        return Err(TlsError(format!(
            "--tls-cipher-suites: {unknown} is not supported; supported: {}",
            tls12.join(", ")
        )));
    }
    provider
        .cipher_suites
        .retain(|s| s.version() == &rustls::version::TLS13 || names.contains(&name(s)));
    Ok(provider)
}

/// A verifier of client certificates that chain to one of the CA bundles in `ca_files`
/// (clients without a certificate are let through: they may authenticate otherwise).
pub fn client_verifier(ca_files: &[PathBuf]) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for path in ca_files {
        for cert in read_certs(path)? {
            roots
                .add(cert)
                .map_err(|e| err(format_args!("CA file {}", path.display()), e))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .allow_unauthenticated()
        .build()
        .map_err(|e| err("client CA", e))
}

/// Whether `verifier` accepts the chain (leaf first) now.
pub(crate) fn chain_verifies(
    verifier: &dyn ClientCertVerifier,
    chain: &[CertificateDer<'_>],
) -> bool {
    chain.split_first().is_some_and(|(leaf, intermediates)| {
        verifier
            .verify_client_cert(leaf, intermediates, rustls::pki_types::UnixTime::now())
            .is_ok()
    })
}

/// The subject of a certificate: its common name and organizations.
pub(crate) fn subject(certificate: &[u8]) -> Option<(String, Vec<String>)> {
    let (_, cert) = x509_parser::parse_x509_certificate(certificate).ok()?;
    let subject = cert.subject();
    let name = subject.iter_common_name().next()?.as_str().ok()?.to_owned();
    let orgs = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(String::from)
        .collect();
    Some((name, orgs))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let what = || format!("certificate file {}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| err(what(), e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(what(), e))?;
    if certs.is_empty() {
        return Err(err(what(), "no PEM certificate in it"));
    }
    Ok(certs)
}

/// The certificate and key files in `dir`, made (self-signed) when they do not exist.
fn self_signed(dir: &Path, hosts: &[String]) -> Result<(PathBuf, PathBuf), TlsError> {
    let (cert, key) = (dir.join("apiserver.crt"), dir.join("apiserver.key"));
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".into(), "::1".into()];
    names.extend(hosts.iter().cloned());
    let made = rcgen::generate_simple_self_signed(names)
        .map_err(|e| err("making a self-signed certificate", e))?;
    let cert_dir = || format!("--cert-dir {}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| err(cert_dir(), e))?;
    std::fs::write(&cert, made.cert.pem()).map_err(|e| err(cert_dir(), e))?;
    write_private(&key, made.key_pair.serialize_pem().as_bytes())
        .map_err(|e| err(cert_dir(), e))?;
    tracing::info!(cert = %cert.display(), "made a self-signed serving certificate");
    Ok((cert, key))
}

/// Writes a private key readable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

/// How often the files are looked at for a change.
const RECHECK: Duration = Duration::from_secs(1);

/// The serving certificate, read again when its files change.
struct ReloadingCert {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    state: Mutex<Loaded>,
}

struct Loaded {
    stamp: Option<(SystemTime, SystemTime)>,
    checked: Instant,
    key: Arc<CertifiedKey>,
}

impl fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl ReloadingCert {
    fn new(cert: PathBuf, key: PathBuf, provider: Arc<CryptoProvider>) -> Result<Self, TlsError> {
        let stamp = stamp(&cert, &key);
        let loaded = load(&cert, &key, &provider)?;
        Ok(ReloadingCert {
            cert,
            key,
            provider,
            state: Mutex::new(Loaded {
                stamp,
                checked: Instant::now(),
                key: loaded,
            }),
        })
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if st.checked.elapsed() >= RECHECK {
            st.checked = Instant::now();
            let now = stamp(&self.cert, &self.key);
            if now != st.stamp {
                match load(&self.cert, &self.key, &self.provider) {
                    Ok(key) => {
                        tracing::info!(cert = %self.cert.display(), "serving certificate reloaded");
                        st.key = key;
                        st.stamp = now;
                    }
                    // Half-written files are usual during a rotation: try again later.
                    Err(e) => tracing::warn!("keeping the serving certificate: {e}"),
                }
            }
        }
        Some(st.key.clone())
    }
}

fn stamp(cert: &Path, key: &Path) -> Option<(SystemTime, SystemTime)> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((modified(cert)?, modified(key)?))
}

fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>, TlsError> {
    let certs = read_certs(cert)?;
    let what = || format!("private key file {}", key.display());
    let der = PrivateKeyDer::from_pem_file(key).map_err(|e| err(what(), e))?;
    let signing = provider
        .key_provider
        .load_private_key(der)
        .map_err(|e| err(what(), e))?;
    let certified = CertifiedKey::new(certs, signing);
    certified
        .keys_match()
        .map_err(|e| err(format_args!("{} and {}", cert.display(), key.display()), e))?;
    Ok(Arc::new(certified))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_named_as_kubernetes_names_them() {
        assert_eq!("VersionTLS13".parse(), Ok(TlsVersion::Tls13));
        assert_eq!("VersionTLS12".parse(), Ok(TlsVersion::Tls12));
        assert!("VersionTLS10".parse::<TlsVersion>().is_err());
        assert!("tls13".parse::<TlsVersion>().is_err());
    }

    #[test]
    fn cipher_suites_are_chosen_by_their_iana_names() {
        let all = provider(&[]).unwrap().cipher_suites.len();
        let one = provider(&["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()]).unwrap();
        let names: Vec<String> = one
            .cipher_suites
            .iter()
            .map(|s| format!("{:?}", s.suite()))
            .collect();
        assert!(names.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".to_owned()));
        assert!(names.iter().any(|n| n.starts_with("TLS13_")), "{names:?}");
        assert!(names.len() < all);
        let e = provider(&["TLS_RSA_WITH_RC4_128_SHA".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not supported") && e.contains("TLS_ECDHE"),
            "{e}"
        );
    }

    #[test]
    fn mismatched_or_missing_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let opts = TlsOptions {
            cert_file: Some(dir.path().join("missing.crt")),
            ..TlsOptions::default()
        };
        assert!(
            server_config(&opts)
                .unwrap_err()
                .to_string()
                .contains("go together")
        );
        let a = rcgen::generate_simple_self_signed(vec!["a".into()]).unwrap();
        let b = rcgen::generate_simple_self_signed(vec!["b".into()]).unwrap();
        let (cert, key) = (dir.path().join("a.crt"), dir.path().join("b.key"));
        std::fs::write(&cert, a.cert.pem()).unwrap();
        std::fs::write(&key, b.key_pair.serialize_pem()).unwrap();
        let opts = TlsOptions {
            cert_file: Some(cert),
            key_file: Some(key),
            ..TlsOptions::default()
        };
        let e = server_config(&opts).unwrap_err().to_string();
        assert!(e.contains("a.crt and"), "{e}");
    }
}
