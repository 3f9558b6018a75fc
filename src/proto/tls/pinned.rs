//! `--cacert` with the server's own certificate: a self-signed certificate (as `openssl req
//! -x509` makes it, a CA certificate that also serves) is trusted as its own anchor, as curl
//! trusts it, where WebPKI alone refuses it (`CaUsedAsEndEntity`).
//!
//! The server's certificate is first verified as usual against the file's certificates as
//! anchors; only when that fails and the certificate the server sent is byte for byte one of the
//! file's, it is accepted after the checks that still apply to it: the name (the URL's host or
//! `--sni`) and the validity dates. The handshake's signatures are verified as for any
//! certificate, so the server proves it holds the certificate's key.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};

/// WebPKI against the file's certificates, then the file's certificates themselves.
#[derive(Debug)]
pub(super) struct AnchorsOrPinned {
    webpki: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl AnchorsOrPinned {
    /// `webpki` built from `pinned` as anchors.
    pub(super) fn new(
        webpki: Arc<WebPkiServerVerifier>,
        pinned: Vec<CertificateDer<'static>>,
    ) -> Self {
        Self { webpki, pinned }
    }
}

impl ServerCertVerifier for AnchorsOrPinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let chained = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match chained {
            Err(_)
                if self
                    .pinned
                    .iter()
                    .any(|p| p.as_ref() == end_entity.as_ref()) =>
            {
                verify_pinned(end_entity, server_name, now)
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A certificate the user gave as trusted: valid for `name` and at `now`.
fn verify_pinned(
    cert: &CertificateDer<'_>,
    name: &ServerName<'_>,
    now: UnixTime,
) -> Result<ServerCertVerified, Error> {
    let parsed = ParsedCertificate::try_from(cert)?;
    rustls::client::verify_server_name(&parsed, name)?;
    let (_, x509) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let validity = x509.validity();
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if now < validity.not_before.timestamp() {
        return Err(Error::InvalidCertificate(CertificateError::NotValidYet));
    }
    if now > validity.not_after.timestamp() {
        return Err(Error::InvalidCertificate(CertificateError::Expired));
    }
    Ok(ServerCertVerified::assertion())
}
