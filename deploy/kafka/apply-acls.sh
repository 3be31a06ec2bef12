#!/bin/sh
# Grants what acls.txt (beside this script) lists, with Kafka's kafka-acls.sh, as the admin
# principal. Grants that exist already are left as they are; nothing is removed (kafka-acls.sh
# --remove does that). One kafka-acls.sh call per principal, pattern and set of operations.
#
#   sh deploy/kafka/apply-acls.sh --bootstrap-server HOST:PORT [--command-config FILE]
#                                 [--topic-prefix PREFIX] [--acls FILE] [--print]
#
#   --command-config  the admin's client settings (security.protocol, sasl.*, ssl.*). Without it,
#                     gatehouse-admin over SASL_PLAINTEXT/SCRAM-SHA-512 with $SCRAM_PASSWORD_GATEHOUSE_ADMIN.
#   --topic-prefix    what {prefix} stands for (default: $GATEHOUSE_TOPIC_PREFIX, else empty).
#   --print           print each call's arguments, one call per line, and run nothing.
# KAFKA_BIN is where kafka-acls.sh is (/opt/kafka/bin).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bin=${KAFKA_BIN:-/opt/kafka/bin}
acls="$here/acls.txt"
prefix=${GATEHOUSE_TOPIC_PREFIX:-}
bootstrap=''
command_config=''
print=false

fail() {
  echo "apply-acls.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --bootstrap-server) bootstrap=${2:?}; shift 2 ;;
    --command-config) command_config=${2:?}; shift 2 ;;
    --topic-prefix) prefix=${2?}; shift 2 ;;
    --acls) acls=${2:?}; shift 2 ;;
    --print) print=true; shift ;;
    *) fail "unknown argument $1" ;;
  esac
done
case $prefix in *[!A-Za-z0-9._-]*) fail "the topic prefix may hold only letters, digits and . _ -" ;; esac

# One line per call: principal, pattern, operations, then --topic/--group/--transactional-id and a name per resource.
plan=$(awk -v prefix="$prefix" '
  function bad(message) { printf "apply-acls.sh: %s:%d: %s\n", FILENAME, FNR, message > "/dev/stderr"; failed = 1; exit 1 }
  /^[[:space:]]*(#|$)/ { next }
  NF != 5 { bad("expected: principal type pattern name operations") }
  {
    principal = $1; type = $2; pattern = $3; name = $4; ops = $5
    at = index(name, "{prefix}")
    if (at > 0) name = substr(name, 1, at - 1) prefix substr(name, at + 8)
    if (principal !~ /^[A-Za-z0-9_-]+$/) bad("principal " principal ": letters, digits, _ and - only")
    if (type != "topic" && type != "group" && type != "transactional-id") bad("type " type ": topic, group or transactional-id")
    if (pattern != "literal" && pattern != "prefixed") bad("pattern " pattern ": literal or prefixed")
    if (name !~ /^[A-Za-z0-9._-]+$/) bad("name " name ": letters, digits, . _ and - only")
    if (ops !~ /^[A-Za-z]+(,[A-Za-z]+)*$/) bad("operations " ops ": names separated by commas")
    key = principal " " pattern " " ops
    if (!(key in resources)) order[++calls] = key
    resources[key] = resources[key] " --" type " " name
  }
  END { if (failed) exit 1; for (i = 1; i <= calls; i++) print order[i] resources[order[i]] }
' "$acls") || exit 1

if [ "$print" = false ]; then
  [ -n "$bootstrap" ] || fail '--bootstrap-server is required'
  if [ -z "$command_config" ]; then
    [ -n "${SCRAM_PASSWORD_GATEHOUSE_ADMIN:-}" ] || fail 'give --command-config, or SCRAM_PASSWORD_GATEHOUSE_ADMIN for gatehouse-admin'
    umask 077
    command_config=$(mktemp)
    trap 'rm -f "$command_config"' EXIT
    {
      echo 'security.protocol=SASL_PLAINTEXT'
      echo 'sasl.mechanism=SCRAM-SHA-512'
      echo "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"gatehouse-admin\" password=\"$SCRAM_PASSWORD_GATEHOUSE_ADMIN\";"
    } > "$command_config"
  fi
fi

echo "$plan" | while read -r principal pattern ops resources; do
  set -- --add --allow-principal "User:$principal" --resource-pattern-type "$pattern"
  for op in $(echo "$ops" | tr ',' ' '); do set -- "$@" --operation "$op"; done
  # Word splitting is wanted: the names were checked to hold no blanks or glob characters.
  # shellcheck disable=SC2086
  set -- "$@" $resources
  if [ "$print" = true ]; then
    echo "$*"
  else
    "$bin/kafka-acls.sh" --bootstrap-server "$bootstrap" --command-config "$command_config" "$@" < /dev/null > /dev/null ||
      fail "kafka-acls.sh failed for User:$principal"
    echo "apply-acls.sh: User:$principal $pattern $ops:$resources"
  fi
done
