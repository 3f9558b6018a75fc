//! TLS client configuration (rustls with the `ring` provider) and TLS failure classification.
//!
//! Built once per run into an `Arc<rustls::ClientConfig>`; each new connection then costs one
//! handshake and nothing else here. Verification is on by default against the Mozilla roots
//! (`webpki-roots`, compiled in: the same result on every machine); `ca_file` replaces them, as
//! curl's `--cacert` does, and a certificate in it that is the server's own (self-signed) is
//! trusted as its own anchor (`pinned`); `insecure` accepts any certificate but still checks the handshake
//! signatures, so the connection is encrypted, only not authenticated.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::ErrorKind;

mod pinned;

/// Which TLS versions the client offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsVersion {
    /// TLS 1.2 and 1.3; the server picks (1.3 when it can).
    #[default]
    Any,
    /// TLS 1.2 only.
    Tls12,
    /// TLS 1.3 only.
    Tls13,
}

pub use crate::record::timing::{Alpn, Negotiated, SessionVersion};

/// A client certificate chain and its private key, both PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    /// PEM file with the certificate, then any intermediates.
    pub cert_file: PathBuf,
    /// PEM file with the private key (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
}

/// What the user asked of TLS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// The name sent as SNI and checked against the certificate; empty: the URL's host. An IP
    /// address sends no SNI and is checked against the certificate's IP addresses.
    pub server_name: String,
    /// Accept any certificate (self-signed, expired, other name). Still encrypted.
    pub insecure: bool,
    /// Trust only the CA certificates in this PEM file instead of the built-in roots.
    pub ca_file: Option<PathBuf>,
    /// Present this certificate when the server asks for one (mutual TLS).
    pub client_cert: Option<ClientCert>,
    /// The versions offered.
    pub version: TlsVersion,
}

/// Why a TLS configuration could not be built (found before the run, with file names).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// A certificate file held no PEM certificate.
    #[error("{path} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)")]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// A key file held no PEM private key.
    #[error("{path} holds no PEM private key")]
    NoKey {
        /// The file.
        path: PathBuf,
    },
    /// A CA certificate was not acceptable as a trust anchor.
    #[error("{path}: unusable CA certificate: {source}")]
    BadCa {
        /// The file.
        path: PathBuf,
        /// What rustls said.
        source: rustls::Error,
    },
    /// No verifier could be built from a CA file's certificates.
    #[error("{path}: cannot verify servers with these certificates: {why}")]
    Verifier {
        /// The file.
        path: PathBuf,
        /// What rustls said.
        why: String,
    },
    /// The server name is neither a DNS name nor an IP address.
    #[error("{0:?} is not a valid TLS server name (a DNS name or an IP address)")]
    ServerName(String),
    /// rustls refused the configuration (e.g. a key that does not match the certificate).
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// The crypto provider volley uses (ring: pure Rust and assembly, no C toolchain needed).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the client configuration, offering `alpn` protocols (e.g. `[b"h2"]`).
pub fn client_config(
    options: &TlsOptions,
    alpn: &[&[u8]],
) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let provider = provider();
    let versions: &[&rustls::SupportedProtocolVersion] = match options.version {
        TlsVersion::Any => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::Tls12 => &[&rustls::version::TLS12],
        TlsVersion::Tls13 => &[&rustls::version::TLS13],
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)?;
    let builder = if options.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(provider)))
    } else {
        match &options.ca_file {
            Some(path) => {
                let certs = read_certs(path)?;
                let mut roots = RootCertStore::empty();
                for cert in &certs {
                    roots.add(cert.clone()).map_err(|source| TlsError::BadCa {
                        path: path.clone(),
                        source,
                    })?;
                }
                let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .map_err(|e| TlsError::Verifier {
                    path: path.clone(),
                    why: e.to_string(),
                })?;
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(pinned::AnchorsOrPinned::new(
                        webpki, certs,
                    )))
            }
            None => {
                let mut roots = RootCertStore::empty();
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                builder.with_root_certificates(roots)
            }
        }
    };
    let mut config = match &options.client_cert {
        Some(client) => {
            let chain = read_certs(&client.cert_file)?;
            let key = read_key(&client.key_file)?;
            builder.with_client_auth_cert(chain, key)?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// Parses the name to verify (and send as SNI).
pub fn server_name(name: &str) -> Result<ServerName<'static>, TlsError> {
    // Brackets come from URLs of IPv6 hosts.
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_owned()).map_err(|_| TlsError::ServerName(name.into()))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.into(),
        source,
    })?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&pem)
        .filter_map(Result::ok)
        .collect();
    if certs.is_empty() {
        return Err(TlsError::NoCertificate { path: path.into() });
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.into(),
        source,
    })?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|_| TlsError::NoKey { path: path.into() })
}

/// Classifies a failed handshake: certificate trouble, other TLS trouble, or plain I/O.
pub fn classify(err: &io::Error) -> ErrorKind {
    match rustls_error(err) {
        Some(rustls::Error::InvalidCertificate(_)) => ErrorKind::TlsCertificate,
        Some(_) => ErrorKind::Tls,
        // The server hung up in the middle of the handshake: most often a plain-TCP server
        // receiving a ClientHello.
        None if err.kind() == io::ErrorKind::UnexpectedEof => ErrorKind::Tls,
        None => ErrorKind::from_io(err),
    }
}

/// A sentence about a failed handshake for the one-off connection check before a run.
pub fn describe(err: &io::Error) -> String {
    match rustls_error(err) {
        Some(rustls::Error::InvalidCertificate(cert)) => format!(
            "the server's certificate was rejected ({cert:?}); {}",
            "pass --cacert FILE with the CA that signed it (or the certificate itself, if it signed itself), --sni NAME if it was issued to another name, or --insecure to skip verification"
        ),
        Some(other) => format!("TLS handshake failed: {other}"),
        None if err.kind() == io::ErrorKind::UnexpectedEof => {
            "the server closed the connection during the TLS handshake (does it speak TLS on this port? try http://)".into()
        }
        None => format!("TLS handshake failed: {err}"),
    }
}

fn rustls_error(err: &io::Error) -> Option<&rustls::Error> {
    err.get_ref()?.downcast_ref::<rustls::Error>()
}

/// `insecure`: any certificate is accepted; handshake signatures are still verified.
#[derive(Debug)]
struct AcceptAnyCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_default_and_insecure_configs() {
        let c = client_config(&TlsOptions::default(), &[b"h2"]).unwrap();
        assert_eq!(c.alpn_protocols, vec![b"h2".to_vec()]);
        let insecure = TlsOptions {
            insecure: true,
            version: TlsVersion::Tls13,
            ..TlsOptions::default()
        };
        client_config(&insecure, &[]).unwrap();
    }

    #[test]
    fn reports_missing_and_empty_files() {
        let missing = TlsOptions {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..TlsOptions::default()
        };
        let e = client_config(&missing, &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot read /nonexistent/ca.pem"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("volley-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "nothing here").unwrap();
        let e = client_config(
            &TlsOptions {
                ca_file: Some(empty.clone()),
                ..TlsOptions::default()
            },
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, TlsError::NoCertificate { .. }), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn server_names() {
        assert!(server_name("localhost").is_ok());
        assert!(matches!(
            server_name("127.0.0.1").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("[::1]").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(server_name("bad name!").is_err());
    }

    #[test]
    fn classifies_certificate_errors() {
        let e = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        assert_eq!(classify(&e), ErrorKind::TlsCertificate);
        assert!(describe(&e).contains("--cacert"));
        let e = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::General("x".into()),
        );
        assert_eq!(classify(&e), ErrorKind::Tls);
        assert_eq!(
            classify(&io::Error::from(io::ErrorKind::UnexpectedEof)),
            ErrorKind::Tls
        );
    }
}
