#!/usr/bin/env bash
# The project's test command: formatting, vet, the contract lint and the
# whole Go test suite with the race detector. Works on a fresh machine with
# Go and node/npm; installs whatever else the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt wants to change:"; echo "$unformatted"; exit 1
fi
go mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }

echo "== go vet"
go vet ./...

echo "== lint openapi.yaml and sandbox/openapi.yaml"
# Pinned so that a new linter release cannot turn CI red on its own.
npx --yes @redocly/cli@2.77.0 lint --format=stylish openapi.yaml sandbox/openapi.yaml

echo "== chromium for the browser tests of the hosted pages"
# The hosted pages are tested end to end in Debian's headless Chromium
# (sandbox/browser_test.go). PAYMOCK_SKIP_BROWSER=1 skips those tests,
# and this install with them.
if [ "${PAYMOCK_SKIP_BROWSER:-}" != 1 ] && [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

echo "== postgresql for the store tests"
# internal/pgtest starts a throwaway PostgreSQL from Debian's packages;
# PAYMOCK_SKIP_POSTGRES=1 skips those tests and this install.
scripts/postgres.sh

echo "== static binary, built as the Dockerfile builds it, and its healthcheck"
bin="$(mktemp -d)/paymock"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin" ./cmd/paymock
grep -q "CGO_ENABLED=0" <<<"$(go version -m "$bin")" || { echo "the binary is not a CGO_ENABLED=0 build"; exit 1; }
# metrics writes the Prometheus text format itself: the client library's
# package initialisation cost every start about 5 ms.
if grep -q "github.com/prometheus/" <<<"$(go version -m "$bin")"; then echo "the binary links a github.com/prometheus module"; exit 1; fi
addr="127.0.0.1:$(( 20000 + RANDOM % 20000 ))"
"$bin" --addr "$addr" --log-level warn &
pid=$!
for _ in $(seq 100); do "$bin" healthcheck --addr "$addr" >/dev/null 2>&1 && break; sleep 0.1; done
"$bin" healthcheck --addr "$addr"
kill -TERM "$pid"
wait "$pid"
if "$bin" healthcheck --addr "$addr" >/dev/null 2>&1; then
  echo "healthcheck passed against a stopped server"; exit 1
fi
echo "healthcheck: ok while serving, failing once stopped"

echo "== go test -race"
# A package of the HTTP suite runs for minutes on a busy 2-core machine:
# past go test's default 10-minute limit, not past this one.
go test -race -count=1 -timeout 40m ./... "$@"

echo "== fuzz every parser of outside input for a few seconds, from the committed corpus"
# go test above already replays each corpus; this looks for new inputs.
# Anything found is written under testdata/fuzz and fails the run.
# Go's fuzzer sometimes ends a run at its own deadline with "context
# deadline exceeded" and no failing input, when a loaded machine slows its
# workers; such a run, and only such, is tried once more.
fuzz() {
  local out
  if out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "${PAYMOCK_FUZZTIME:-2s}" -fuzzminimizetime 1s "$1" 2>&1); then
    echo "$out"; return 0
  fi
  echo "$out"
  if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
    echo "fuzz $2: the fuzzer's own deadline tripped with no failing input; running it again"
    go test -run '^$' -fuzz "^$2\$" -fuzztime "${PAYMOCK_FUZZTIME:-2s}" -fuzzminimizetime 1s "$1"
    return
  fi
  return 1
}
fuzz ./sandbox FuzzCreatePayment
fuzz ./sandbox FuzzListPayments
fuzz ./sandbox FuzzPathID
fuzz ./mockserver FuzzDecode_TakesWhatTheContractTakes
fuzz ./mockserver FuzzDecodeCreate_ReadsWhatEncodingJSONReads
fuzz ./faults FuzzParseHeader
fuzz ./faults FuzzParse
fuzz ./lifecycle FuzzParseScenarios
fuzz ./cmd/paymock FuzzLoadMerchants
fuzz ./cmd/paymock FuzzParseRetry
fuzz ./contract FuzzCheckJSON
fuzz ./contract FuzzPlainJSON_IsValidAndClean
fuzz ./contract FuzzReadAtMost_ReadsWhatReadAllReads
fuzz ./contract FuzzCompiledCheck_PaymentAgreesWithKin
fuzz ./contract FuzzParams_NeverPassWhatKinRefuses
fuzz ./contract FuzzSegmentRouter_RoutesAsGorillamux
fuzz ./contract FuzzPattern_MatchesAsTheRegexp
fuzz ./contract FuzzPlainURI_OnlyWhatURLParseTakes
fuzz ./contract FuzzPlainDateTime_OnlyWhatKinTakes
fuzz ./contract FuzzPaymentModel_AgreesWithTheByteCheck
fuzz ./contract FuzzCountValues_AgreesWithTheDecoder
fuzz ./contract FuzzAmountForms_AcceptTheSameAmounts
fuzz . FuzzValidEmail_FastFormAgreesWithNetMail
fuzz . FuzzEncode_WritesWhatEncodingJSONWrites
fuzz . FuzzFormatTime_WritesWhatTimeFormatWrites
fuzz . FuzzFormatTimes_AreFormatTimeOfEach
fuzz . FuzzDrawChaCha_DrawsWhatDrawIDDraws
fuzz . FuzzJournalMillis_IsThePrintedMilliseconds
fuzz ./memory FuzzPlainAtSeconds_ReadsWhatTimeParseReads
fuzz . FuzzPlainAmount_ReadsWhatBigRatReads
fuzz . FuzzExactAmount_ReadsWhatBigRatReads
fuzz . FuzzNextJSONStructural_StopsWhereTheBytewiseWalkStops
fuzz . FuzzValidateMetadata_ShortNeedsNoCheck
fuzz . FuzzValidRedirectURL_FastFormAgreesWithURLParse
fuzz . FuzzCompact_WritesWhatJSONCompactWrites
fuzz ./mockserver FuzzMetadataScenario_ReadsAsEncodingJSON

echo "== the examples, each a module of its own"
# go vet ./... of the root skips nested modules; each is vetted and tested here.
for m in examples/merchant-go examples/readme-go examples/testcontainers-go; do
  (cd "$m" && go vet ./... && go test -race -count=1 ./...)
done

echo "== the docker image: built, run, compose, Testcontainers (scripts/docker-test.sh)"
# Lints examples/github-actions.yml, builds the Dockerfile (on local bases
# where no registry is reachable) and checks the running image, both
# compose files and the Testcontainers examples (examples/testcontainers-go
# and examples/testcontainers-node run against the image).
# PAYMOCK_SKIP_DOCKER=1 leaves out all but the lint.
scripts/docker-test.sh

echo "== the HTTP suite again, on PostgreSQL"
# The same tests, every payment kept in a fresh database on a throwaway
# PostgreSQL: the store is a seam, and handlers never learn which one.
if [ "${PAYMOCK_SKIP_POSTGRES:-}" != 1 ]; then
  PAYMOCK_TEST_STORE=postgres go test -count=1 -timeout 40m ./sandbox "$@"
fi

echo "== the HTTP suite again, with the server rotating every response variant"
# Every answer and webhook of the whole HTTP suite is validated
# against the contract while the server sends amounts as strings,
# "succeeded" and no payment_link, chosen per response.
PAYMOCK_TEST_VARIANTS=all go test -count=1 -timeout 40m ./sandbox "$@"
