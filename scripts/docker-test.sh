#!/usr/bin/env bash
# The image tests of the test command (scripts/test.sh calls this): lints
# examples/github-actions.yml, then builds paymock's image with
# scripts/image.sh and checks what docs/docker.md promises of it: uid
# 65532 and no shell, --read-only, healthy through its HEALTHCHECK,
# configuration from the environment, the README's walkthrough (create,
# retrieve, checkout page, complete, a verified webhook), SIGTERM ending
# it with exit 0 and its pending webhook deliveries left pending (logged),
# at most 25 MB, and --store postgres:// on a docker network; then both
# compose files end to end, and the Testcontainers examples in Go and Node.
#
# Installs Debian's docker.io (and docker-compose, jq) when missing and
# starts dockerd when no daemon answers, as root or through sudo.
# PAYMOCK_SKIP_DOCKER=1 leaves out everything but the lint. It prints the
# figures (image size, time to healthy, time to stop) but never fails on a
# time: stopping within 5 s is docker stop's own grace period, past which
# docker kills the container and the exit code is 137, not 0.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "docker-test: $*"; }
fail() { echo "docker-test: FAIL: $*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

echo "== actionlint examples/github-actions.yml"
# Pinned, so that a new release cannot turn the build red on its own.
go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 -no-color examples/github-actions.yml
say "examples/github-actions.yml: actionlint finds nothing"

if [ "${PAYMOCK_SKIP_DOCKER:-}" = 1 ]; then
  say "PAYMOCK_SKIP_DOCKER=1: the image is not built or run"
  exit 0
fi

echo "== a Docker engine"
apt_install() {
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
command -v docker >/dev/null || { say "installing docker.io"; apt_install docker.io; }
command -v jq >/dev/null || apt_install jq
if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
    fail "no Docker daemon answers and starting one needs root; start dockerd, or PAYMOCK_SKIP_DOCKER=1"
  fi
  command -v dockerd >/dev/null || apt_install docker.io
  say "starting dockerd (log: /tmp/paymock-dockerd.log)"
  as_root sh -c 'nohup dockerd >/tmp/paymock-dockerd.log 2>&1 &'
  for _ in $(seq 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  docker info >/dev/null 2>&1 || fail "dockerd did not answer; see /tmp/paymock-dockerd.log"
fi
# Docker's compose plugin where there is one, else Debian's docker-compose.
if docker compose version >/dev/null 2>&1; then
  compose() { docker compose "$@"; }
else
  command -v docker-compose >/dev/null || { say "installing docker-compose"; apt_install docker-compose; }
  compose() { docker-compose "$@"; }
fi

echo "== the image"
image=$(PAYMOCK_IMAGE=paymock:test VERSION=test scripts/image.sh)
postgres_image=$(scripts/image.sh --postgres)
eval "$(scripts/image.sh --bases)"
export BUILDER_IMAGE RUNTIME_IMAGE POSTGRES_IMAGE=$postgres_image

# Everything made below is named after this run and removed at the end.
run=pmtest$$
containers=()
networks=()
projects=() # project:file of each compose run
tmp=$(mktemp -d)
cleanup() {
  local p
  for p in "${projects[@]}"; do compose -p "${p%%:*}" -f "${p#*:}" down -v -t 1 >/dev/null 2>&1 || true; done
  [ ${#containers[@]} -eq 0 ] || docker rm -f -v "${containers[@]}" >/dev/null 2>&1 || true
  [ ${#networks[@]} -eq 0 ] || docker network rm "${networks[@]}" >/dev/null 2>&1 || true
  [ -z "${receiver_pid:-}" ] || kill "$receiver_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# wait_for retries a command for up to a minute.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "$what"
}
health() { docker inspect -f '{{.State.Health.Status}}' "$1"; }
is_healthy() { [ "$(health "$1")" = healthy ]; }
# host_port is the loopback port docker published a container's 8080 on.
host_port() { docker port "$1" "${2:-8080}/tcp" | head -1 | sed 's/.*://'; }

size=$(docker image inspect -f '{{.Size}}' "$image")
say "image $image: $size bytes"
[ "$size" -le 25000000 ] || fail "the image is $size bytes, over 25 MB"
[ "$(docker image inspect -f '{{.Config.User}}' "$image")" = nonroot ] || fail "the image's USER is not nonroot"
if docker run --rm --entrypoint /bin/sh "$image" -c true >/dev/null 2>&1; then
  fail "the image has a shell"
fi
[ "$(docker run --rm "$image" version)" = "paymock test $(go env GOVERSION) linux/amd64" ] ||
  fail "paymock version in the image: $(docker run --rm "$image" version)"

# The documented config mount: a file kept private (0600, as files with
# keys are) is not readable by uid 65532, and the start says so.
printf 'merchants:\n  - {name: acme, api_keys: [sk_test_acme]}\n' >"$tmp/private.yaml"
chmod 600 "$tmp/private.yaml"
out=$(docker run --rm -v "$tmp/private.yaml:/paymock.yaml:ro" -e PAYMOCK_CONFIG=/paymock.yaml "$image" 2>&1) &&
  fail "a config unreadable to uid 65532 was accepted"
case $out in
*"paymock runs as uid 65532, which may not read /paymock.yaml"*) ;;
*) fail "a private config mounted: $out" ;;
esac
say "a private config file is refused naming uid 65532"

net=$run
docker network create "$net" >/dev/null
networks+=("$net")
gateway=$(docker network inspect -f '{{(index .IPAM.Config 0).Gateway}}' "$net")

echo "== --read-only, configured from the environment, healthy, the README's walkthrough"
# The receiver of docs/examples/go-receiver, on this machine, listening on
# the docker network's gateway only: the container's webhooks reach it.
secret=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
go build -o "$tmp/receiver" ./docs/examples/go-receiver
hook_port=$(( 20000 + RANDOM % 20000 ))
: >"$tmp/receiver.log"
WEBHOOK_SECRET=$secret ADDR="$gateway:$hook_port" "$tmp/receiver" >"$tmp/receiver.log" 2>&1 &
receiver_pid=$!
wait_for "the receiver did not start: $(cat "$tmp/receiver.log")" grep -q listening "$tmp/receiver.log"

pm=$run-paymock
started=$(now)
docker run -d --name "$pm" --read-only --network "$net" -p 127.0.0.1::8080 \
  -e PAYMOCK_API_KEY=sk_test_docker \
  -e PAYMOCK_WEBHOOK_URL="http://$gateway:$hook_port/hooks" -e PAYMOCK_WEBHOOK_SECRET=$secret \
  -e PAYMOCK_PUBLIC_URL=https://paymock.example \
  "$image" >/dev/null
containers+=("$pm")
wait_for "$pm never became healthy: $(health "$pm"); $(docker logs "$pm" 2>&1 | tail -5)" is_healthy "$pm"
healthy_after=$(since "$started")
say "healthy ${healthy_after}s after docker run"
[ "$(docker top "$pm" -o pid,uid | awk 'NR > 1 { print $2 }')" = 65532 ] ||
  fail "paymock does not run as uid 65532: $(docker top "$pm" -o pid,uid,args)"

base="http://127.0.0.1:$(host_port "$pm")"
auth='Authorization: Bearer sk_test_docker'
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sk_test_other' "$base/api/v1/payments")
[ "$code" = 401 ] || fail "an unknown key got $code, not 401: PAYMOCK_API_KEY was not taken from the environment"
created=$(curl -fsS "$base/api/v1/payments" -H "$auth" -H 'Content-Type: application/json' -d '{
    "amount": 10.50, "currency": "EUR", "description": "Order 1234", "expires_in": 3600, "mcc": 5732,
    "customer": {"email": "jane@example.com", "name": "Jane Doe"}, "metadata": {"order_id": "ord_1234"},
    "success_url": "https://shop.example/success", "cancel_url": "https://shop.example/cancel"}')
pay=$(jq -r .id <<<"$created")
[ "$(curl -fsS -H "$auth" "$base/api/v1/payments/$pay" | jq -r .status)" = pending ] || fail "$pay is not pending"
next=$(jq -r .next_action.url <<<"$created")
[ "$next" = "https://paymock.example/checkout/$pay" ] || fail "next_action.url $next does not follow PAYMOCK_PUBLIC_URL"
page=$(curl -fsS "$base/checkout/$pay")
for action in pay cancel fail; do
  grep -q "data-action=\"$action\"" <<<"$page" || fail "the checkout page has no $action button"
done
[ "$(curl -fsS -XPOST -H "$auth" "$base/_sandbox/payments/$pay/complete" | jq -r .status)" = completed ] ||
  fail "completing $pay"
[ "$(curl -s -XPOST -H "$auth" "$base/_sandbox/payments/$pay/complete" | jq -r .error.code)" = payment_final ] ||
  fail "a second complete of $pay was not refused as payment_final"
wait_for "the receiver never verified the webhook: $(cat "$tmp/receiver.log")" \
  grep -q "payment.completed: payment $pay is completed" "$tmp/receiver.log"
delivered() {
  curl -fsS -H "$auth" "$base/_sandbox/events" |
    jq -e --arg p "$pay" '.items[] | select(.type == "payment.completed" and .payment_id == $p) | .deliveries[0].state == "delivered"'
}
wait_for "the event journal does not show the delivery" delivered
say "walkthrough: created, retrieved, checkout page, completed, webhook verified by the receiver"

echo "== the report gate's JUnit file, in a mounted folder"
# As examples/github-actions.yml runs the gate: the file goes to a folder
# of this machine's, mounted, written as its owner; a folder the image's
# uid 65532 may not write to is exit 2, with a hint that says write.
junit_dir=$tmp/junit
mkdir -m 755 "$junit_dir"
gate() { docker run --rm --network "$net" -v "$junit_dir:/out" "$@" "$image" report --url "http://$pm:8080" \
  --api-key sk_test_docker --fail-on-violations --junit /out/contract.xml; }
gate --user "$(id -u)" >/dev/null || fail "the gate as examples/github-actions.yml runs it failed"
grep -q '<testsuites' "$junit_dir/contract.xml" || fail "the gate left no JUnit report in the mounted folder"
rm "$junit_dir/contract.xml"
code=0
out=$(gate 2>&1) || code=$?
[ "$code" = 2 ] && grep -q 'paymock runs as uid 65532, which may not write /out/contract.xml' <<<"$out" ||
  fail "a JUnit file uid 65532 may not write: exit $code, $out"
say "the gate's JUnit report is kept in a mounted folder; one uid 65532 may not write to is exit 2, saying so"

echo "== SIGTERM: exit 0 within docker stop's 5 s, pending attempts recorded"
# Webhooks to a port where nothing listens: the first attempt fails and a
# retry waits, which shutdown must leave pending and log.
term=$run-term
docker run -d --name "$term" --read-only -p 127.0.0.1::8080 \
  -e PAYMOCK_WEBHOOK_URL=http://127.0.0.1:9/hooks -e PAYMOCK_WEBHOOK_SECRET=$secret "$image" >/dev/null
containers+=("$term")
wait_for "$term never became healthy" is_healthy "$term"
tbase="http://127.0.0.1:$(host_port "$term")"
tpay=$(curl -fsS "$tbase/api/v1/payments" -H 'Authorization: Bearer sk_test_term' -H 'Content-Type: application/json' \
  -d '{"amount": 5, "currency": "EUR", "description": "d", "expires_in": 3600, "mcc": 5732,
       "customer": {"email": "a@example.com", "name": "A"}, "metadata": {},
       "success_url": "https://shop.example/s", "cancel_url": "https://shop.example/c"}' | jq -r .id)
curl -fsS -XPOST -H 'Authorization: Bearer sk_test_term' "$tbase/_sandbox/payments/$tpay/complete" >/dev/null
retrying() {
  curl -fsS -H 'Authorization: Bearer sk_test_term' "$tbase/_sandbox/events" |
    jq -e '[.items[].deliveries[] | select(.state == "pending" and .next_attempt_at != null and (.attempts | length) == 1)] | length > 0'
}
wait_for "no delivery is waiting for its second attempt" retrying
stop_started=$(now)
docker stop -t 5 "$term" >/dev/null
stopped_after=$(since "$stop_started")
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$term")
[ "$exit_code" = 0 ] || fail "SIGTERM: exit code $exit_code (137: still running after 5 s); $(docker logs "$term" 2>&1 | tail -5)"
# The logs are read once into a variable: with pipefail, grep -q leaving
# at its first match can make docker logs die of SIGPIPE and fail the pipe.
term_logs=$(docker logs "$term" 2>&1)
grep -q 'msg="webhook deliveries left pending at shutdown" scheduled_sends=' <<<"$term_logs" ||
  fail "shutdown did not record the pending attempts: $(docker logs "$term" 2>&1 | tail -5)"
grep -q 'msg="paymock stopped"' <<<"$term_logs" || fail "paymock did not log that it stopped"
say "stopped ${stopped_after}s after docker stop, exit 0, pending deliveries recorded as left pending"

echo "== --store postgres:// on the docker network"
pg=$run-postgres
docker run -d --name "$pg" --network "$net" -e POSTGRES_USER=paymock -e POSTGRES_PASSWORD=secret \
  -e POSTGRES_DB=paymock "$postgres_image" >/dev/null
containers+=("$pg")
pg_ready() { docker exec "$pg" pg_isready -U paymock -d paymock; }
wait_for "PostgreSQL never became ready: $(docker logs "$pg" 2>&1 | tail -5)" pg_ready
store="postgres://paymock:secret@$pg:5432/paymock?sslmode=disable"
start_on_db() {
  docker run -d --name "$1" --read-only --network "$net" -p 127.0.0.1::8080 \
    -e PAYMOCK_API_KEY=sk_test_db "$image" --store "$store" >/dev/null
  containers+=("$1")
  wait_for "$1 never became healthy: $(docker logs "$1" 2>&1 | tail -5)" is_healthy "$1"
}
start_on_db "$run-db1"
dbase="http://127.0.0.1:$(host_port "$run-db1")"
dpay=$(curl -fsS "$dbase/api/v1/payments" -H 'Authorization: Bearer sk_test_db' -H 'Content-Type: application/json' \
  -d '{"amount": 7, "currency": "EUR", "description": "kept", "expires_in": 3600, "mcc": 5732,
       "customer": {"email": "a@example.com", "name": "A"}, "metadata": {},
       "success_url": "https://shop.example/s", "cancel_url": "https://shop.example/c"}' | jq -r .id)
docker stop -t 5 "$run-db1" >/dev/null
# A new container on the same database has the payment.
start_on_db "$run-db2"
dbase="http://127.0.0.1:$(host_port "$run-db2")"
[ "$(curl -fsS -H 'Authorization: Bearer sk_test_db' "$dbase/api/v1/payments/$dpay" | jq -r .description)" = kept ] ||
  fail "the payment created before the restart is not in the database"
say "a payment made through one container is read through the next, from PostgreSQL"

# A free loopback port, for compose's published ones.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "== examples/docker-compose.yml: the shop gets paid"
# Fixed project names (compose v2 takes only [a-z0-9_-]), so that the
# images compose tags are the same each run.
projects+=("paymock-test-compose:examples/docker-compose.yml")
scompose() { compose -p paymock-test-compose -f examples/docker-compose.yml "$@"; }
# PAYMOCK_PORT is a port number, not the default 8080: the checkout links
# name it (PAYMOCK_PUBLIC_URL), so docker publishes it on every interface
# for the time of the test; SHOP_PORT stays on loopback.
export PAYMOCK_PORT="$(free_port)" SHOP_PORT="127.0.0.1:$(free_port)"
scompose up -d --build >"$tmp/compose.log" 2>&1 ||
  fail "compose up: $(tail -20 "$tmp/compose.log")"
shop="http://$SHOP_PORT"
shop_up() { curl -s -o /dev/null "$shop/orders/none"; }
wait_for "the shop never answered" shop_up
order=$(curl -fsS -XPOST "$shop/orders" -d '{"id":"ord_1","amount":"10.50","currency":"EUR","email":"jane@example.com","name":"Jane"}')
cpay=$(jq -r .payment_id <<<"$order")
# The customer's link opens on the published port, as a browser on this
# machine would open it.
opens() {
  [ "$1" = "http://localhost:$2/checkout/$3" ] || fail "the checkout link $1 is not on the published port $2"
  local page
  page=$(curl -fsS "$1") || fail "the checkout link $1 does not open"
  grep -q 'data-action="pay"' <<<"$page" || fail "the checkout link $1 opens no checkout page"
}
opens "$(jq -r .payment_url <<<"$order")" "$PAYMOCK_PORT" "$cpay"
curl -fsS -XPOST -H 'Authorization: Bearer sk_test_shop' "http://127.0.0.1:$PAYMOCK_PORT/_sandbox/payments/$cpay/complete" >/dev/null
paid() { curl -fsS "$shop/orders/ord_1" | jq -e '.status == "paid" and .confirmations == 1 and .webhooks == 1'; }
wait_for "the shop's order was never paid: $(scompose logs --tail 10 2>&1)" paid
scompose down -v -t 5 >/dev/null 2>&1
say "the shop created $cpay on paymock (its checkout link opened on port $PAYMOCK_PORT), it was completed, the shop verified the webhook"

echo "== examples/docker-compose.postgres.yml: replicas over one database"
projects+=("paymock-test-compose-postgres:examples/docker-compose.postgres.yml")
export PAYMOCK_1_PORT="$(free_port)" PAYMOCK_2_PORT="$(free_port)" SHOP_PORT="127.0.0.1:$(free_port)"
pcompose() { compose -p paymock-test-compose-postgres -f examples/docker-compose.postgres.yml "$@"; }
pcompose up -d --build >"$tmp/compose.log" 2>&1 || fail "compose up: $(tail -20 "$tmp/compose.log")"
# Both replicas run the one image the file names.
replica_images=$(docker inspect -f '{{.Config.Image}}' $(pcompose ps -q paymock-1 paymock-2))
[ "$(sort -u <<<"$replica_images")" = paymock-compose-postgres:local ] || fail "the replicas run $replica_images, not paymock-compose-postgres:local"
shop="http://$SHOP_PORT"
wait_for "the shop never answered" shop_up
replica_up() { curl -fs "http://127.0.0.1:$1/healthz"; }
wait_for "paymock-1 never answered" replica_up "$PAYMOCK_1_PORT"
wait_for "paymock-2 never answered" replica_up "$PAYMOCK_2_PORT"
# The shop creates its payments through paymock-1; it is completed
# through paymock-2. Each replica's checkout links open on its port.
order=$(curl -fsS -XPOST "$shop/orders" -d '{"id":"ord_2","amount":"20.00","currency":"EUR","email":"jane@example.com","name":"Jane"}')
ppay=$(jq -r .payment_id <<<"$order")
opens "$(jq -r .payment_url <<<"$order")" "$PAYMOCK_1_PORT" "$ppay"
direct=$(curl -fsS "http://127.0.0.1:$PAYMOCK_2_PORT/api/v1/payments" -H 'Authorization: Bearer sk_test_shared' -H 'Content-Type: application/json' \
  -d '{"amount": 5, "currency": "EUR", "description": "d", "expires_in": 3600, "mcc": 5732,
       "customer": {"email": "a@example.com", "name": "A"}, "metadata": {},
       "success_url": "https://shop.example/s", "cancel_url": "https://shop.example/c"}')
opens "$(jq -r .next_action.url <<<"$direct")" "$PAYMOCK_2_PORT" "$(jq -r .id <<<"$direct")"
curl -fsS -XPOST -H 'Authorization: Bearer sk_test_shared' "http://127.0.0.1:$PAYMOCK_2_PORT/_sandbox/payments/$ppay/complete" >/dev/null
paid2() { curl -fsS "$shop/orders/ord_2" | jq -e '.status == "paid"'; }
wait_for "the shop's order was never paid: $(pcompose logs --tail 10 2>&1)" paid2
# Once: the shop received one verified delivery, and both replicas show
# the one payment.completed event (the journal is in the database), with
# one delivery of one attempt.
[ "$(curl -fsS "$shop/orders/ord_2" | jq .webhooks)" = 1 ] || fail "the shop got $ppay's webhook $(curl -fsS "$shop/orders/ord_2" | jq .webhooks) times"
completed_events() {
  curl -fsS -H 'Authorization: Bearer sk_test_shared' "http://127.0.0.1:$1/_sandbox/events" |
    jq -c --arg p "$ppay" '[.items[] | select(.type == "payment.completed" and .payment_id == $p)]'
}
events=$(jq -s -c add <(completed_events "$PAYMOCK_1_PORT") <(completed_events "$PAYMOCK_2_PORT"))
jq -e '([.[].id] | unique | length == 1) and all(.[]; (.deliveries | length == 1) and .deliveries[0].state == "delivered"
  and (.deliveries[0].attempts | length == 1))' <<<"$events" >/dev/null ||
  fail "the replicas' payment.completed events of $ppay: $events"
pcompose down -v -t 5 >/dev/null 2>&1
say "created through paymock-1, completed through paymock-2, one webhook delivered once; both replicas' checkout links opened on their ports, one image for both"

echo "== Testcontainers: Go and Node"
# Ryuk, Testcontainers' reaper, is an image from a registry: the tests end
# their containers themselves. The host override keeps Testcontainers from
# taking this machine for a container (it has a /.dockerenv) and calling
# its default gateway instead of the published ports on loopback.
export PAYMOCK_TEST_IMAGE=$image TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
(cd examples/testcontainers-go && go test -count=1 ./...)
# npm test runs examples/testcontainers-node/paymock.test.mjs; npm ci runs
# again only when package-lock.json changed since the last one.
(
  cd examples/testcontainers-node
  if ! cmp -s package-lock.json node_modules/.paymock-installed 2>/dev/null; then
    npm ci --silent --no-audit --no-fund
    cp package-lock.json node_modules/.paymock-installed
  fi
  npm test --silent
)

echo "== figures"
say "image size: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }') MB)"
say "time to healthy (docker run to HEALTHCHECK healthy): ${healthy_after}s"
say "time to stop (docker stop, SIGTERM, to exit 0): ${stopped_after}s"
