//! The keystore's cryptography, with OpenSSL (the `security` feature): an elliptic-curve
//! (prime256v1) CA, identity certificates signed by it, and S/MIME signatures (detached, text)
//! of the governance and permissions documents, all as `ros2 security` makes them.

use std::path::Path;

use openssl::asn1::{Asn1Integer, Asn1Time};
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkcs7::{Pkcs7, Pkcs7Flags};
use openssl::pkey::{PKey, Private};
use openssl::stack::Stack;
use openssl::x509::extension::BasicConstraints;
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::{X509Builder, X509NameBuilder, X509};

use crate::error::{Error, Result};

/// How long certificates and permissions are valid, as sros2 makes them (10 years).
pub const VALID_DAYS: u32 = 3650;

fn tls(what: &str) -> impl Fn(openssl::error::ErrorStack) -> Error + '_ {
    move |e| Error::invalid("keystore", format!("{what}: {e}"))
}

/// A fresh prime256v1 key.
pub fn new_key() -> Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(tls("curve"))?;
    let key = EcKey::generate(&group).map_err(tls("key generation"))?;
    PKey::from_ec_key(key).map_err(tls("key"))
}

/// A certificate for `common_name` with `key`'s public half, signed by `issuer` (self-signed
/// CA when `None`).
pub fn certificate(
    common_name: &str,
    key: &PKey<Private>,
    issuer: Option<(&X509, &PKey<Private>)>,
) -> Result<X509> {
    let mut name = X509NameBuilder::new().map_err(tls("name"))?;
    name.append_entry_by_nid(Nid::COMMONNAME, common_name)
        .map_err(tls("common name"))?;
    let name = name.build();
    let mut b = X509Builder::new().map_err(tls("certificate"))?;
    b.set_version(2).map_err(tls("version"))?;
    let mut serial = BigNum::new().map_err(tls("serial"))?;
    serial
        .rand(127, MsbOption::MAYBE_ZERO, false)
        .map_err(tls("serial"))?;
    let serial = Asn1Integer::from_bn(&serial).map_err(tls("serial"))?;
    b.set_serial_number(&serial).map_err(tls("serial"))?;
    b.set_subject_name(&name).map_err(tls("subject"))?;
    let not_before = Asn1Time::days_from_now(0).map_err(tls("validity"))?;
    let not_after = Asn1Time::days_from_now(VALID_DAYS).map_err(tls("validity"))?;
    b.set_not_before(&not_before).map_err(tls("validity"))?;
    b.set_not_after(&not_after).map_err(tls("validity"))?;
    b.set_pubkey(key).map_err(tls("public key"))?;
    match issuer {
        None => {
            b.set_issuer_name(&name).map_err(tls("issuer"))?;
            // As sros2's CA: a CA, with no key usage restriction, since it also signs the
            // governance and permissions documents (S/MIME); a keyCertSign-only CA fails
            // S/MIME verification ("unsuitable certificate purpose").
            let ca = BasicConstraints::new().critical().ca().pathlen(1).build();
            b.append_extension(ca.map_err(tls("constraints"))?)
                .map_err(tls("constraints"))?;
            b.sign(key, MessageDigest::sha256())
                .map_err(tls("signing"))?;
        }
        Some((ca_cert, ca_key)) => {
            b.set_issuer_name(ca_cert.subject_name())
                .map_err(tls("issuer"))?;
            let leaf = BasicConstraints::new().build();
            b.append_extension(leaf.map_err(tls("constraints"))?)
                .map_err(tls("constraints"))?;
            b.sign(ca_key, MessageDigest::sha256())
                .map_err(tls("signing"))?;
        }
    }
    Ok(b.build())
}

/// `text` signed by `signer` as `openssl smime -sign -text` (and sros2) sign it: S/MIME,
/// detached, the signed part a text/plain MIME entity.
pub fn smime_sign(text: &str, signer: &X509, key: &PKey<Private>) -> Result<Vec<u8>> {
    let flags = Pkcs7Flags::DETACHED | Pkcs7Flags::TEXT;
    let certs = Stack::new().map_err(tls("certificate stack"))?;
    let p7 = Pkcs7::sign(signer, key, &certs, text.as_bytes(), flags)
        .map_err(tls("S/MIME signature"))?;
    p7.to_smime(text.as_bytes(), flags)
        .map_err(tls("S/MIME output"))
}

pub fn key_pem(key: &PKey<Private>) -> Result<Vec<u8>> {
    key.private_key_to_pem_pkcs8().map_err(tls("key PEM"))
}

pub fn cert_pem(cert: &X509) -> Result<Vec<u8>> {
    cert.to_pem().map_err(tls("certificate PEM"))
}

pub fn read_key(path: &Path) -> Result<PKey<Private>> {
    let pem = std::fs::read(path).map_err(|e| Error::io(path.display().to_string(), e))?;
    PKey::private_key_from_pem(&pem).map_err(tls("the CA key"))
}

pub fn read_cert(path: &Path) -> Result<X509> {
    let pem = std::fs::read(path).map_err(|e| Error::io(path.display().to_string(), e))?;
    X509::from_pem(&pem).map_err(|e| {
        Error::invalid(
            "keystore",
            format!("{} is not a PEM certificate: {e}", path.display()),
        )
    })
}

/// Checks an enclave's signed files as DDS Security will, before it does, so that a file
/// that does not verify is named with the CA it was checked against (the DDS plugins report
/// only signature bytes): cert.pem must be signed by identity_ca.cert.pem, and
/// governance.p7s and permissions.p7s by permissions_ca.cert.pem. Validity periods are left
/// to the plugins, which name an expired certificate's dates.
pub fn verify_enclave(dir: &Path) -> Result<()> {
    let refused = |file: &str, ca: &str, why: String| {
        Error::invalid(
            "keystore",
            format!(
                "{} does not verify against {}: {why}",
                dir.join(file).display(),
                dir.join(ca).display()
            ),
        )
    };
    let identity_ca = read_cert(&dir.join("identity_ca.cert.pem"))?;
    let cert = read_cert(&dir.join("cert.pem"))?;
    let signed = identity_ca
        .public_key()
        .and_then(|k| cert.verify(&k))
        .map_err(|e| refused("cert.pem", "identity_ca.cert.pem", e.to_string()))?;
    if !signed {
        return Err(refused(
            "cert.pem",
            "identity_ca.cert.pem",
            "it is signed by another CA".into(),
        ));
    }
    let permissions_ca = read_cert(&dir.join("permissions_ca.cert.pem"))?;
    let mut store = X509StoreBuilder::new().map_err(tls("certificate store"))?;
    store
        .add_cert(permissions_ca)
        .map_err(tls("certificate store"))?;
    // The CA's own validity is the plugins' to judge, as the certificate's is.
    store
        .set_flags(X509VerifyFlags::NO_CHECK_TIME)
        .map_err(tls("certificate store"))?;
    let store = store.build();
    let no_certs = Stack::new().map_err(tls("certificate stack"))?;
    for file in ["governance.p7s", "permissions.p7s"] {
        let path = dir.join(file);
        let smime = std::fs::read(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        let why =
            |e: openssl::error::ErrorStack| refused(file, "permissions_ca.cert.pem", e.to_string());
        let (p7, content) = Pkcs7::from_smime(&smime).map_err(why)?;
        p7.verify(
            &no_certs,
            &store,
            content.as_deref(),
            None,
            Pkcs7Flags::empty(),
        )
        .map_err(why)?;
    }
    Ok(())
}
