//! The TLS listener's certificate: a throw-away CA and a server certificate it signs, generated at
//! start-up with `rcgen`, so tests and benches get TLS without files. Clients trust it with the
//! CA's PEM ([`super::RunningTarget::ca_pem`]) or with `insecure`.

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::TargetError;

/// A server configuration (ALPN `h2` then `http/1.1`) for a certificate valid for `localhost`,
/// `127.0.0.1`, `::1` and `ip`; and the PEM of the CA that signed it.
pub(crate) fn self_signed(ip: IpAddr) -> Result<(Arc<rustls::ServerConfig>, String), TargetError> {
    let err = |e: &dyn std::fmt::Display| TargetError::Tls(e.to_string());
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| err(&e))?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "volley target CA (throw-away)");
    let ca_key = KeyPair::generate().map_err(|e| err(&e))?;
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).map_err(|e| err(&e))?;

    let mut names = vec!["localhost".to_owned(), "127.0.0.1".into(), "::1".into()];
    if !ip.is_unspecified() && !names.contains(&ip.to_string()) {
        names.push(ip.to_string());
    }
    let mut params = CertificateParams::new(names).map_err(|e| err(&e))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "volley target");
    let key = KeyPair::generate().map_err(|e| err(&e))?;
    let cert = params.signed_by(&key, &ca).map_err(|e| err(&e))?;

    let chain = vec![CertificateDer::from(cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut config = rustls::ServerConfig::builder_with_provider(crate::proto::tls::provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| err(&e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| err(&e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((Arc::new(config), ca.as_ref().pem()))
}
