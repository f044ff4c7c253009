#!/usr/bin/env bash
# The HA layout's own certificate authority, for TLS between its parts: etcd's clients and peers,
# and Patroni's REST API. Only what holds a certificate signed by this CA may talk to etcd (etcd
# runs with client certificate authentication); HAProxy and patronictl check the REST API's
# certificate against it. scripts/ha/layout.sh uses it on one machine; docs/operations.md on three.
#
#   scripts/ha/certs.sh ca DIR                  DIR/ca.crt and DIR/ca.key (ten years)
#   scripts/ha/certs.sh issue DIR NAME IP...    DIR/NAME.crt and DIR/NAME.key, signed by DIR/ca.key,
#                                               valid for the IPs and the name NAME, as server and client
#
# Keys are written readable by their owner only. Keep ca.key off the database machines once the
# certificates are issued (layout.sh deletes it).
set -euo pipefail

die() {
  printf 'certs.sh: %s\n' "$*" >&2
  exit 1
}

umask 077
case ${1:-} in
  ca)
    dir=${2:?DIR}
    mkdir -p "$dir"
    [ ! -e "$dir/ca.key" ] || die "$dir/ca.key exists already"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
      -subj "/CN=commerce HA CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
    chmod 644 "$dir/ca.crt"
    ;;
  issue)
    dir=${2:?DIR} name=${3:?NAME}
    shift 3
    [ $# -gt 0 ] || die "issue DIR NAME IP...: at least one IP"
    [ -f "$dir/ca.key" ] || die "no $dir/ca.key: certs.sh ca $dir first"
    san="DNS:$name"
    for ip in "$@"; do san="$san,IP:$ip"; done
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
      -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
    # Server and client: a member's certificate serves its REST API and identifies it to etcd;
    # etcd's serves clients and identifies it to its peers.
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
      -days 825 -out "$dir/$name.crt" -extfile <(
        printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n' "$san"
      ) 2>/dev/null
    rm -f "$dir/$name.csr" "$dir/ca.srl"
    chmod 644 "$dir/$name.crt"
    ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
