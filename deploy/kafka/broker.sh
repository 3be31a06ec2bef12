#!/bin/sh
# Starts one Kafka node (KRaft broker + controller) that authenticates every connection and checks
# every request against ACLs. Its settings are the node's own ($KAFKA_NODE_PROPERTIES: node id,
# listeners, single-node tuning) followed by broker-security.properties beside this script. On the
# first start it formats its storage and creates the SCRAM-SHA-512 users then: the broker, the admin
# and every principal of acls.txt that has a password.
#
# docker-compose.yml runs it in the apache/kafka image; deploy/local/kafka-secure.mjs runs it with the
# local stack's jars, so both brokers are configured alike. Environment:
#   KAFKA_NODE_PROPERTIES   the node's settings, one per line (required)
#   KAFKA_CLUSTER_ID        the cluster id the storage is formatted with (required)
#   SCRAM_PASSWORD_<NAME>   the password of principal <name>, upper-cased with '-' as '_':
#                           SCRAM_PASSWORD_GATEHOUSE_BROKER and ..._GATEHOUSE_ADMIN are required; a
#                           principal of acls.txt without one is not created. Letters, digits and
#                           . _ ~ - only (e.g. `openssl rand -hex 32`).
#   KAFKA_BIN               where kafka-storage.sh and kafka-server-start.sh are (/opt/kafka/bin)
#   KAFKA_DATA_DIR          log.dirs (/var/lib/kafka/data)
#   KAFKA_CONFIG_DIR        where server.properties and admin.properties are written (/tmp/gatehouse-kafka)
# admin.properties is a client configuration for the admin, for the healthcheck and Kafka's tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bin=${KAFKA_BIN:-/opt/kafka/bin}
data=${KAFKA_DATA_DIR:-/var/lib/kafka/data}
config=${KAFKA_CONFIG_DIR:-/tmp/gatehouse-kafka}

fail() {
  echo "broker.sh: $*" >&2
  exit 1
}

# Sets $password to the password of principal $1, from SCRAM_PASSWORD_<NAME>; empty when unset.
password_of() {
  case $1 in *[!A-Za-z0-9_-]*) fail "principal '$1' may hold only letters, digits, _ and -" ;; esac
  var="SCRAM_PASSWORD_$(printf '%s' "$1" | tr 'a-z-' 'A-Z_')"
  eval "password=\${$var:-}"
  case $password in *[!A-Za-z0-9._~-]*) fail "$var may hold only letters, digits and . _ ~ -" ;; esac
}

[ -n "${KAFKA_NODE_PROPERTIES:-}" ] || fail 'KAFKA_NODE_PROPERTIES is not set'
[ -n "${KAFKA_CLUSTER_ID:-}" ] || fail 'KAFKA_CLUSTER_ID is not set'
password_of gatehouse-broker
broker_password=$password
password_of gatehouse-admin
admin_password=$password
[ -n "$broker_password" ] || fail 'SCRAM_PASSWORD_GATEHOUSE_BROKER is not set'
[ -n "$admin_password" ] || fail 'SCRAM_PASSWORD_GATEHOUSE_ADMIN is not set'

umask 077
mkdir -p "$config" "$data"
scram=org.apache.kafka.common.security.scram.ScramLoginModule
plain=org.apache.kafka.common.security.plain.PlainLoginModule
{
  echo '# Written by deploy/kafka/broker.sh at every start.'
  printf '%s\n' "$KAFKA_NODE_PROPERTIES"
  echo "log.dirs=$data"
  cat "$here/broker-security.properties"
  echo "listener.name.internal.scram-sha-512.sasl.jaas.config=$scram required username=\"gatehouse-broker\" password=\"$broker_password\";"
  echo "listener.name.controller.plain.sasl.jaas.config=$plain required username=\"gatehouse-broker\" password=\"$broker_password\" user_gatehouse-broker=\"$broker_password\";"
} > "$config/server.properties"
{
  echo 'security.protocol=SASL_PLAINTEXT'
  echo 'sasl.mechanism=SCRAM-SHA-512'
  echo "sasl.jaas.config=$scram required username=\"gatehouse-admin\" password=\"$admin_password\";"
} > "$config/admin.properties"

if [ ! -f "$data/meta.properties" ]; then
  set -- --add-scram "SCRAM-SHA-512=[name=gatehouse-broker,password=$broker_password]" \
    --add-scram "SCRAM-SHA-512=[name=gatehouse-admin,password=$admin_password]"
  created='gatehouse-broker gatehouse-admin'
  for principal in $(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$here/acls.txt" | sort -u); do
    password_of "$principal"
    [ -n "$password" ] || continue
    set -- "$@" --add-scram "SCRAM-SHA-512=[name=$principal,password=$password]"
    created="$created $principal"
  done
  "$bin/kafka-storage.sh" format --cluster-id "$KAFKA_CLUSTER_ID" --config "$config/server.properties" "$@" > "$config/format.log" 2>&1 ||
    { cat "$config/format.log" >&2; fail 'formatting the storage failed'; }
  echo "broker.sh: storage formatted; SCRAM-SHA-512 users: $created"
fi

exec "$bin/kafka-server-start.sh" "$config/server.properties"
