#!/usr/bin/env bash
# Runs the load benchmark (cmd/paymock-load) against paymock on the memory
# store, on PostgreSQL, and as two replicas over one PostgreSQL database,
# for the same time each, and prints one table of create, retrieve and list
# throughput with p99s, the CPU time per request, paymock's context
# switches per request, the database round trips per request, and each
# figure against its target (issue 24). The database is a throwaway cluster of Debian's
# postgresql (initdb into a temporary folder, a free loopback port), with a
# fresh database per setup; everything started is stopped and removed at
# the end, on failure too. About 40 seconds at the default duration.
#
#   scripts/bench-postgres.sh
#   BENCH_DURATION=20s scripts/bench-postgres.sh   # each setup's load time
#   BENCH_CLIENTS=16 scripts/bench-postgres.sh     # load clients in all (split over two replicas)
#   BENCH_DURABLE=1 scripts/bench-postgres.sh      # keep PostgreSQL's fsync on
#   BENCH_REV=HEAD scripts/bench-postgres.sh       # build a commit, not the working tree
#   BENCH_FLAGS='--journal-size 0' scripts/bench-postgres.sh   # more paymock flags, every setup
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${BENCH_DURATION:-8s}
[[ $duration =~ ^[0-9]+$ ]] && duration=${duration}s
clients=${BENCH_CLIENTS:-8}
read -ra flags <<<"${BENCH_FLAGS:-}"
if ! [[ $clients =~ ^[0-9]+$ ]] || ((clients < 2 || clients % 2)); then
	echo "BENCH_CLIENTS=$clients: want an even number, at least 2 (two replicas get half each)" >&2
	exit 2
fi

pgbin=$(compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -1 || true)
if [ -z "$pgbin" ]; then
	echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run scripts/postgres.sh" >&2
	exit 1
fi
pgbin=$(dirname "$pgbin")

work=$(mktemp -d)   # binaries, logs, load outputs
pgdir=$(mktemp -d)  # the cluster: data, socket, log (owned by the server's user)
pids=()             # paymock processes
loads=()            # paymock-load processes running in the background
pg_started=""
cleanup() {
	for p in "${loads[@]%%:*}" "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "$pg_started" ]; then
		pg pg_ctl stop -D "$pgdir/data" -m fast -w >/dev/null 2>&1 ||
			{ [ -f "$pgdir/data/postmaster.pid" ] && kill -9 "$(head -1 "$pgdir/data/postmaster.pid")" 2>/dev/null; } || true
	fi
	rm -rf "$work" "$pgdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# pg runs one of PostgreSQL's programs; as root, as the postgres user (the
# server refuses to run as root), like internal/pgtest does.
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$pgdir"
	pg() { local p=$1; shift; runuser -u postgres -- "$pgbin/$p" "$@"; }
else
	pg() { local p=$1; shift; "$pgbin/$p" "$@"; }
fi

# port finds a free loopback port, below Linux's ephemeral range (32768
# and up), where the load's own outgoing connections would take it.
port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port" >&2
	exit 1
}

echo "building..." >&2
src=.
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "${BENCH_REV:-}" ]; then
	# A commit's tree, untouched by edits in progress in the working tree.
	rev=$(git rev-parse --short=12 "$BENCH_REV")
	mkdir "$work/src"
	git archive "$rev" | tar -x -C "$work/src"
	src=$work/src
elif [ -n "$(git status --porcelain 2>/dev/null)" ]; then
	rev="$rev + uncommitted changes"
fi
(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$work/paymock" ./cmd/paymock &&
	CGO_ENABLED=0 go build -trimpath -o "$work/paymock-load" ./cmd/paymock-load)
# nocap raises the payment cap of a build that has one (a BENCH_REV from
# before it has none) past what the load makes: the load is one
# merchant's and may pass the default cap. Raised, not lifted, so that
# the cap's check is still paid for in what is measured.
nocap=()
help=$("$work/paymock" -h 2>&1 || true)
[[ $help == *--max-payments* ]] && nocap=(--max-payments 1000000000)
maxconns=$(sed -n 's/^const DefaultMaxConns = \([0-9]*\)$/\1/p' "$src/postgres/store.go")
pooldoc="postgres.DefaultMaxConns"
if [ -n "$maxconns" ] && grep -q '^func DefaultPoolSize' "$src/postgres/store.go"; then
	# Two per core the paymock may use, from 4 to DefaultMaxConns.
	cap=$maxconns
	maxconns=$((2 * $(nproc)))
	((maxconns < 4)) && maxconns=4
	((maxconns > cap)) && maxconns=$cap
	pooldoc="postgres.DefaultPoolSize: 2 per core, 4 to $cap"
fi

echo "starting PostgreSQL ($("$pgbin/postgres" --version))..." >&2
pg initdb -D "$pgdir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$pgdir/initdb.log" 2>&1 ||
	{ cat "$pgdir/initdb.log" >&2; exit 1; }
if [ "${BENCH_DURABLE:-}" = 1 ]; then
	durability="fsync on (PostgreSQL's defaults)"
	pgopts=""
else
	# The database is dropped at the end: durability would measure this
	# machine's disk, not paymock. Said in the output.
	durability="fsync=off, full_page_writes=off (a throwaway database; BENCH_DURABLE=1 keeps fsync on)"
	pgopts="-c fsync=off -c full_page_writes=off"
fi
for attempt in 1 2 3; do # a free port can be taken before the server binds it
	pgport=$(port)
	if pg pg_ctl start -D "$pgdir/data" -w -t 60 -l "$pgdir/postgres.log" \
		-o "-h 127.0.0.1 -p $pgport -k $pgdir $pgopts" >/dev/null 2>&1; then
		pg_started=1
		break
	fi
	if [ "$attempt" = 3 ]; then
		echo "PostgreSQL did not start:" >&2
		cat "$pgdir/postgres.log" >&2
		exit 1
	fi
done

psql=$(command -v psql || echo "$pgbin/psql")

# xacts prints how many transactions database $1 has run: each statement
# or pipelined batch a request sends outside a transaction is one, and one
# round trip (a pgx batch is one implicit transaction). PostgreSQL counts
# a session's at its end at the latest: read after the paymocks stopped.
xacts() {
	"$psql" -qAt -h 127.0.0.1 -p "$pgport" -U postgres -d postgres \
		-c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'"
}

# newdb creates an empty database and prints its URL.
newdb() {
	"$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres "$1"
	echo "postgres://postgres@127.0.0.1:$pgport/$1?sslmode=disable"
}

# serve starts a paymock on a free port with the given flags (default
# otherwise: open mode, the journal at its default size) and sets addr once
# it answers /healthz. Not in a subshell: pids must keep it. Another
# process can take the port between port and the bind: then it tries
# another.
serve() {
	local log pid attempt
	for attempt in 1 2 3; do
		addr=127.0.0.1:$(port)
		log=$work/paymock-${#pids[@]}.log
		"$work/paymock" --addr "$addr" "${nocap[@]}" "${flags[@]}" "$@" >"$log" 2>&1 &
		pid=$!
		pids+=("$pid")
		for _ in $(seq 600); do # up to 30 s: migrations run at start
			if curl -fsS "http://$addr/healthz" >/dev/null 2>&1; then
				return
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null || ! grep -q 'address already in use' "$log" || [ "$attempt" = 3 ]; then
			break
		fi
		wait "$pid" || true
		unset 'pids[-1]'
	done
	echo "paymock did not start:" >&2
	cat "$log" >&2
	exit 1
}

# stopall stops every paymock started so far.
stopall() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}

# load starts paymock-load against addr $1 with $2 clients, its output
# into file $3; waitloads waits for every load started and fails, showing
# its output, if one did.
load() {
	"$work/paymock-load" --url "http://$1" --clients "$2" --duration "$duration" >"$3" 2>&1 &
	loads+=("$!:$3")
}
waitloads() {
	local l failed=0
	for l in "${loads[@]}"; do
		if ! wait "${l%%:*}"; then
			echo "paymock-load failed:" >&2
			cat "${l#*:}" >&2
			failed=1
		fi
	done
	loads=()
	return "$failed"
}

# row sums req/s and takes the worst p99 of one or more paymock-load
# outputs, and prints the table's row for setup $1.
row() {
	local setup=$1
	shift
	awk -v setup="$setup" '
		function us(v) { # a Go duration as microseconds
			if (sub(/ms$/, "", v)) return v * 1000
			if (sub(/µs$/, "", v)) return v
			if (sub(/ns$/, "", v)) return v / 1000
			if (sub(/s$/, "", v)) return v * 1000000
			return -1
		}
		$1 == "create" || $1 == "list" || $1 == "retrieve" {
			rps[$1] += $3
			if (us($6) > p99[$1]) p99[$1] = us($6)
		}
		END {
			printf "| %s | %d | %.2f ms | %d | %.2f ms | %d |\n", setup,
				rps["create"], p99["create"] / 1000, rps["retrieve"], p99["retrieve"] / 1000, rps["list"]
		}' "$@"
}

# ticks prints the CPU time (user and system, in clock ticks) that the
# paymocks running and the database's processes have used so far. Of the
# postmaster it takes its reaped children's too, so that a backend that
# ended between two samples still counts.
ticks() {
	local p pm pg=0 own=0
	for p in "${pids[@]}"; do own=$((own + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	pm=$(head -1 "$pgdir/data/postmaster.pid")
	pg=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
	for p in $(pgrep -P "$pm"); do
		pg=$((pg + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$own $pg"
}

# switches prints how many times the paymocks' threads have switched
# context so far (voluntary and not, every thread): on this VM each switch
# is expensive, and a request on PostgreSQL hands off between goroutines
# and threads more than one on the memory store.
switches() {
	local p n=0
	for p in "${pids[@]}"; do
		n=$((n + $(cat /proc/"$p"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}')))
	done
	echo "$n"
}

# reqs prints how many requests the paymock-load outputs given served.
reqs() { awk '$1 == "create" || $1 == "list" || $1 == "retrieve" { n += $2 } END { print n + 0 }' "$@"; }

# cpurow prints the CPU time per request of setup $1, from the ticks
# before ($2) and after ($3) its load and the load's outputs (the rest).
cpurow() {
	local setup=$1 t0=$2 t1=$3
	shift 3
	awk -v setup="$setup" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" -v pgused="${setup%%,*}" '
		$1 == "create" || $1 == "list" || $1 == "retrieve" { n += $2 }
		END {
			split(t0, a, " "); split(t1, b, " ")
			own = (b[1] - a[1]) / hz * 1e6 / n; pg = (b[2] - a[2]) / hz * 1e6 / n
			if (pgused == "memory store") printf "| %s | %.0f µs | - | %.0f µs |\n", setup, own, own
			else printf "| %s | %.0f µs | %.0f µs | %.0f µs |\n", setup, own, pg, own + pg
		}' "$@"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)

echo "(a) one paymock, memory store, $clients clients, $duration..." >&2
serve
t0=$(ticks)
s0=$(switches)
load "$addr" "$clients" "$work/a.txt"
waitloads
ta=("$t0" "$(ticks)")
sa=$(($(switches) - s0))
stopall

echo "(b) one paymock, PostgreSQL, $clients clients, $duration..." >&2
url=$(newdb bench_one)
serve --store "$url"
t0=$(ticks)
s0=$(switches)
x0=$(xacts bench_one)
load "$addr" "$clients" "$work/b.txt"
waitloads
tb=("$t0" "$(ticks)")
sb=$(($(switches) - s0))
stopall
sleep 1 # the sessions' last counts reach the statistics
xb=$(($(xacts bench_one) - x0))

echo "(c) two paymock replicas, one PostgreSQL database, $((clients / 2)) clients each, $duration..." >&2
url=$(newdb bench_two)
serve --store "$url"
c1=$addr
serve --store "$url"
c2=$addr
t0=$(ticks)
s0=$(switches)
x0=$(xacts bench_two)
load "$c1" $((clients / 2)) "$work/c1.txt"
load "$c2" $((clients / 2)) "$work/c2.txt"
waitloads
tc=("$t0" "$(ticks)")
sc=$(($(switches) - s0))
stopall
sleep 1
xc=$(($(xacts bench_two) - x0))

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "paymock on PostgreSQL, $(date -u +%Y-%m-%d), $(nproc) cores: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(go env GOVERSION), paymock $rev"
echo "load: paymock-load, $clients clients in all, $duration per setup, the mix of creates, lists and retrieves; $("$pgbin/postgres" --version)"
echo "PostgreSQL: $durability"
echo "pool: ${maxconns:-?} connections per replica ($pooldoc)"
echo "paymock flags: default but --addr and --store${nocap[*]:+, and ${nocap[*]}}${BENCH_FLAGS:+, and $BENCH_FLAGS}"
echo "load average (1, 5, 15 min): before $load_before, after $load_after"
echo
echo "| setup | create req/s | create p99 | retrieve req/s | retrieve p99 | list req/s |"
echo "|---|---|---|---|---|---|"
row "memory store, one paymock" "$work/a.txt"
row "PostgreSQL, one paymock" "$work/b.txt"
row "PostgreSQL, two replicas" "$work/c1.txt" "$work/c2.txt"
echo
echo "CPU time per request, all operations (user and system; it depends on a busy machine much less than req/s does):"
echo
echo "| setup | paymock | PostgreSQL | both |"
echo "|---|---|---|---|"
cpurow "memory store, one paymock" "${ta[@]}" "$work/a.txt"
cpurow "PostgreSQL, one paymock" "${tb[@]}" "$work/b.txt"
cpurow "PostgreSQL, two replicas" "${tc[@]}" "$work/c1.txt" "$work/c2.txt"
echo
echo "paymock's context switches per request (every thread, voluntary and not):"
echo
echo "| setup | switches |"
echo "|---|---|"
perreq() { awk -v s="$1" -v n="$2" 'BEGIN {printf "%.2f", s / n}'; }
echo "| memory store, one paymock | $(perreq "$sa" "$(reqs "$work/a.txt")") |"
echo "| PostgreSQL, one paymock | $(perreq "$sb" "$(reqs "$work/b.txt")") |"
echo "| PostgreSQL, two replicas | $(perreq "$sc" "$(reqs "$work/c1.txt" "$work/c2.txt")") |"
echo

# The figures against the targets: throughput is all operations' req/s,
# CPU both sides' per request, round trips the database's transactions
# per request (the background sweeps and deliveries included, so a
# little over the requests' own; postgres/roundtrips_test.go counts each
# operation's exactly, on the wire).
rps() { awk '$1 == "create" || $1 == "list" || $1 == "retrieve" { n += $3 } END { print n + 0 }' "$@"; }
cpu() { # CPU µs per request of the setup: paymock, PostgreSQL
	local t0=$1 t1=$2
	shift 2
	awk -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" -v n="$(reqs "$@")" 'BEGIN {
		split(t0, a, " "); split(t1, b, " ")
		printf "%.0f %.0f\n", (b[1] - a[1]) / hz * 1e6 / n, (b[2] - a[2]) / hz * 1e6 / n }'
}
ratio() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN {
	r = v / t; met = (dir == "ge" && r >= 1) || (dir == "le" && r <= 1)
	printf "%.2fx of target, %s", r, met ? "met" : "NOT met" }'; }
target_rows() { # setup label, throughput ratio, cpu "own pg", round trips
	local own=${3% *} pg=${3#* }
	echo "| $1: req/s vs the memory store, same run | $(printf '%.2f' "$2")x | >= 0.4x | $(ratio "$2" 0.4 ge) |"
	echo "| $1: CPU per request, paymock + PostgreSQL | $((own + pg)) µs ($own + $pg) | <= 500 µs | $(ratio $((own + pg)) 500 le) |"
	echo "| $1: database round trips per request | $4 | <= 2 | $(ratio "$4" 2 le) |"
}
mem_rps=$(rps "$work/a.txt")
echo "Against the targets (issue 24):"
echo
echo "| figure | measured | target | ratio |"
echo "|---|---|---|---|"
target_rows "PostgreSQL, one paymock" "$(awk -v a="$(rps "$work/b.txt")" -v m="$mem_rps" 'BEGIN {print a / m}')" \
	"$(cpu "${tb[@]}" "$work/b.txt")" "$(awk -v x="$xb" -v n="$(reqs "$work/b.txt")" 'BEGIN {printf "%.2f", x / n}')"
target_rows "PostgreSQL, two replicas" "$(awk -v a="$(rps "$work/c1.txt" "$work/c2.txt")" -v m="$mem_rps" 'BEGIN {print a / m}')" \
	"$(cpu "${tc[@]}" "$work/c1.txt" "$work/c2.txt")" "$(awk -v x="$xc" -v n="$(reqs "$work/c1.txt" "$work/c2.txt")" 'BEGIN {printf "%.2f", x / n}')"
echo
for f in a b c1 c2; do
	case $f in
	a) echo "    (a) memory store" ;;
	b) echo "    (b) PostgreSQL, one paymock" ;;
	c1) echo "    (c) PostgreSQL, replica 1" ;;
	c2) echo "    (c) PostgreSQL, replica 2" ;;
	esac
	sed 's/^/    /' "$work/$f.txt"
done
