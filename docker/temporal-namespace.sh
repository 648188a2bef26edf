#!/bin/sh
# Vouch's namespace and search attributes on a Temporal server (docker-compose.yml's
# temporal-namespace job, temporalio/admin-tools), each created only when missing, so it is safe on
# every start. The attribute names are contract/run-tags.ts's SEARCH_ATTRIBUTE_KEYS
# (test/unit/compose.test.ts keeps them equal); on another cluster `vouch temporal-setup` registers
# the same. Closed runs' histories are kept 7 days (README, "What is deleted").
set -eu
address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${TEMPORAL_NAMESPACE:-default}"
# the CLI dialled by a compose service name can time out where the IPv4 address does not
# (temporalio/samples-server resolves it first for the same reason)
host="${address%:*}"
ip=$(getent ahostsv4 "$host" 2>/dev/null | awk '/STREAM/ { print $1; exit }' || true)
[ -n "$ip" ] && address="$ip:${address##*:}"
t() { temporal --address "$address" "$@"; }

tries=0
until t operator cluster health >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 90 ] || { echo "Temporal at $address did not answer within 3 minutes" >&2; exit 1; }
  echo "waiting for Temporal at $address"
  sleep 2
done
t operator namespace describe --namespace "$namespace" >/dev/null 2>&1 ||
  t operator namespace create --namespace "$namespace" --retention 7d

# a namespace just made takes a moment to be served
tries=0
until existing=$(t operator search-attribute list --namespace "$namespace" --output json 2>/dev/null); do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "namespace $namespace is not served" >&2; exit 1; }
  sleep 1
done
for name in BusinessId BatchId EntityId VouchStatus; do
  case "$existing" in
    *"\"$name\""*) echo "search attribute $name: present" ;;
    *) t operator search-attribute create --namespace "$namespace" --name "$name" --type Keyword ;;
  esac
done
echo "namespace $namespace is ready"
