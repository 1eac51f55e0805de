#!/usr/bin/env bash
# A keystore in the layout of `ros2 security create_keystore` and `create_enclave`, made with
# the OpenSSL command line (no ROS): an elliptic-curve (prime256v1) CA, governance and
# permissions signed as S/MIME (text, detached) as sros2 signs them, and one directory per
# enclave with cert.pem, key.pem, identity_ca.cert.pem, permissions_ca.cert.pem,
# governance.p7s and permissions.p7s. Permissions allow every topic (sros2's default policy
# for an enclave it knows nothing about), unless the enclave names options:
#   ENCLAVE:expired      an identity certificate valid only in 2020.
# The governance protects discovery and liveliness by ENCRYPT, every topic's metadata and data
# by ENCRYPT (or $METADATA_PROTECTION and $DATA_PROTECTION where set) and RTPS messages by SIGN
# (or $RTPS_PROTECTION where set); each NONE, SIGN or ENCRYPT.
# (`gpu_planning security` makes keystores too; this script is the independent one.)
#
# Usage: make_keystore.sh KEYSTORE ENCLAVE[:expired]...   (e.g. /gpu_planning /old:expired)
set -euo pipefail
ks=$1; shift
mkdir -p "$ks/public" "$ks/private" "$ks/enclaves"
ca_key=$ks/private/ca.key.pem
ca_cert=$ks/public/ca.cert.pem
openssl ecparam -name prime256v1 -genkey -noout -out "$ca_key"
openssl req -new -x509 -sha256 -days 3650 -key "$ca_key" -out "$ca_cert" -subj "/CN=sros2testCA"
ln -sf ca.cert.pem "$ks/public/identity_ca.cert.pem"
ln -sf ca.cert.pem "$ks/public/permissions_ca.cert.pem"
ln -sf ca.key.pem "$ks/private/identity_ca.key.pem"
ln -sf ca.key.pem "$ks/private/permissions_ca.key.pem"
cat > "$ks/enclaves/governance.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains>
        <id_range><min>0</min><max>230</max></id_range>
      </domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
XML
sed -i -e "s#<rtps_protection_kind>SIGN<#<rtps_protection_kind>${RTPS_PROTECTION:-SIGN}<#" \
  -e "s#<data_protection_kind>ENCRYPT<#<data_protection_kind>${DATA_PROTECTION:-ENCRYPT}<#" \
  -e "s#<metadata_protection_kind>ENCRYPT<#<metadata_protection_kind>${METADATA_PROTECTION:-ENCRYPT}<#" \
  "$ks/enclaves/governance.xml"
sign() {  # sign IN OUT
  openssl smime -sign -text -in "$1" -out "$2" -signer "$ca_cert" -inkey "$ca_key" -md sha256
}
sign "$ks/enclaves/governance.xml" "$ks/enclaves/governance.p7s"
# `openssl x509 -req` cannot backdate a certificate; `openssl ca` can, with this minimal CA.
ca_dir=$(mktemp -d)
trap 'rm -rf "$ca_dir"' EXIT
: > "$ca_dir/index.txt"
echo 01 > "$ca_dir/serial"
cat > "$ca_dir/ca.cnf" <<CNF
[ca]
default_ca = keystore_ca
[keystore_ca]
database = $ca_dir/index.txt
new_certs_dir = $ca_dir
serial = $ca_dir/serial
default_md = sha256
policy = any_name
unique_subject = no
[any_name]
commonName = supplied
CNF
for spec in "$@"; do
  enclave=${spec%%:*}
  options=${spec#"$enclave"}
  expired=false
  IFS=: read -ra opts <<< "${options#:}"
  for o in "${opts[@]}"; do
    case $o in
      expired) expired=true ;;
      "") ;;
      *) echo "make_keystore.sh: unknown enclave option '$o' in '$spec'" >&2; exit 2 ;;
    esac
  done
  dir=$ks/enclaves${enclave}
  mkdir -p "$dir"
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/key.pem.ec"
  openssl pkcs8 -topk8 -nocrypt -in "$dir/key.pem.ec" -out "$dir/key.pem"
  rm "$dir/key.pem.ec"
  openssl req -new -sha256 -key "$dir/key.pem" -out "$dir/req.pem" -subj "/CN=${enclave//\//\\/}"
  if $expired; then
    openssl ca -batch -notext -config "$ca_dir/ca.cnf" -cert "$ca_cert" -keyfile "$ca_key" \
      -in "$dir/req.pem" -out "$dir/cert.pem" -startdate 20200101000000Z \
      -enddate 20210101000000Z 2>/dev/null
  else
    openssl x509 -req -sha256 -days 3650 -in "$dir/req.pem" -CA "$ca_cert" -CAkey "$ca_key" \
      -CAcreateserial -out "$dir/cert.pem" 2>/dev/null
  fi
  rm "$dir/req.pem"
  cp "$ca_cert" "$dir/identity_ca.cert.pem"
  cp "$ca_cert" "$dir/permissions_ca.cert.pem"
  cp "$ks/enclaves/governance.p7s" "$dir/governance.p7s"
  cat > "$dir/permissions.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="${enclave}">
      <subject_name>CN=${enclave}</subject_name>
      <validity>
        <not_before>2020-01-01T00:00:00</not_before>
        <not_after>2035-01-01T00:00:00</not_after>
      </validity>
      <allow_rule>
        <domains><id_range><min>0</min><max>230</max></id_range></domains>
        <publish><topics><topic>*</topic></topics></publish>
        <subscribe><topics><topic>*</topic></topics></subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
XML
  sign "$dir/permissions.xml" "$dir/permissions.p7s"
done
