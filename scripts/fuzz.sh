#!/usr/bin/env bash
# libFuzzer targets for the parsers and decoders that take untrusted input.
#
#   scripts/fuzz.sh --list                  the target names, one per line
#   scripts/fuzz.sh TARGET SECONDS          build TARGET and fuzz it for SECONDS
#   scripts/fuzz.sh --smoke SECONDS         every target for SECONDS each, built at -Onone (CI)
#   scripts/fuzz.sh --build [TARGET...]     only build (all targets when none is named)
#   scripts/fuzz.sh --reproduce TARGET FILE run one input (a crash artifact) through TARGET
#
# Build: SwiftPM's executable link step clashes with libFuzzer's own `main`, so the targets are
# built with swiftc directly. The C shim (clang -fsanitize=fuzzer-no-link,address) and the Swift
# modules under test (swiftc -sanitize=fuzzer,address -enable-testing) are compiled once, with
# coverage instrumentation, into .build/fuzz/; each target is its entry point
# (scripts/fuzz/Targets/TARGET.swift, `@_cdecl("LLVMFuzzerTestOneInput")`) plus
# scripts/fuzz/Support/, linked against those objects and libcrypto. Rebuilt only when a source
# or a flag changes.
#
# Run: the seeds (scripts/fuzz/seeds.py: Vectors/, Keys/ and test-case literals) go to a temporary
# directory; new coverage accumulates in .build/fuzz/corpus/TARGET (git-ignored). A crash, a failed
# invariant, a leak or an input slower than FUZZ_TIMEOUT seconds stops the run with a non-zero
# exit; the input is kept in .build/fuzz/artifacts/TARGET/ and the command to reproduce it printed.
#
# Environment: FUZZ_OPT is the Swift optimisation level of everything built (default -O, and
# -Onone for --smoke, which builds 3-4 times faster and runs 3-6 times slower; objects and
# binaries go to .build/fuzz/build-O or build-Onone);
# FUZZ_TIMEOUT (default 10) the per-input timeout; FUZZ_ARGS extra libFuzzer flags; FUZZ_JOBS
# (default: the number of cores) how many targets a smoke run fuzzes at a time.
set -euo pipefail
# mapfile, and "${array[@]}" of an empty array under set -u, need bash 4.4.
if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4))); then
    echo "fuzz.sh: error: bash 4.4 or later is needed; this is bash $BASH_VERSION" >&2
    exit 1
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ_SRC="$ROOT/scripts/fuzz"
BUILD="$ROOT/.build/fuzz"
TIMEOUT="${FUZZ_TIMEOUT:-10}"
TARGETS=(jws jwe device-signature pending-operations answers http-request backend-router key-import http-date)

TEMP_DIRS=()
cleanup() {
    if ((${#TEMP_DIRS[@]} > 0)); then rm -rf "${TEMP_DIRS[@]}"; fi
}
trap cleanup EXIT

usage() {
    sed -n '4,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# A usage error (exit 64) and a runtime failure (exit 1).
die() {
    echo "fuzz.sh: error: $*" >&2
    exit 64
}

fail() {
    echo "fuzz.sh: error: $*" >&2
    exit 1
}

is_target() {
    local candidate="$1" name
    for name in "${TARGETS[@]}"; do
        [[ "$name" == "$candidate" ]] && return 0
    done
    return 1
}

require_target() {
    is_target "$1" || die "unknown target '$1'; the targets are: ${TARGETS[*]} (scripts/fuzz.sh --list)"
}

require_seconds() {
    [[ "$1" =~ ^[1-9][0-9]*$ ]] || die "SECONDS must be a positive whole number, got '$1'"
}

# The Swift modules a target links, in dependency order.
modules_of() {
    case "$1" in
        pending-operations | answers) echo "DeviceSigning FetchChannelWire FetchChannel" ;;
        http-request | backend-router) echo "DeviceSigning FetchChannelWire FetchChannelEmulator" ;;
        device-signature | http-date) echo "DeviceSigning FetchChannelWire" ;;
        *) echo "DeviceSigning" ;;
    esac
}

# libFuzzer's -max_len per target: a little above the largest input the code accepts, so the
# size limits themselves are exercised (key import: a 64 KiB PEM). The operations answer may be
# 1 MiB, which would slow every run: its bound is above its largest field instead (an 8 KiB
# redeem URL beside a 1 KiB token). So is a JWE's (its 4 KiB header is 5462 characters); its
# 1 MiB limit has a mode of its own that repeats the input to that size. The backend router's
# input is a connection: a few requests with their bodies, room for a dispatch's `data` past its
# 4 KiB limit (the 64 KiB body limit is left to the server's own tests).
max_len_of() {
    case "$1" in
        jws | device-signature) echo 17000 ;;
        jwe) echo 8192 ;;
        pending-operations) echo 10240 ;;
        answers) echo 12288 ;;
        http-request) echo 2048 ;;
        backend-router) echo 16384 ;;
        key-import) echo 66000 ;;
        http-date) echo 96 ;;
    esac
}

# configure OPT: the Swift optimisation level; objects and binaries go to a folder per level,
# so that switching levels does not rebuild.
configure() {
    OPT="$1"
    case "$OPT" in
        -O | -Onone | -Osize) ;;
        *) die "FUZZ_OPT must be -O, -Onone or -Osize, got '$OPT'" ;;
    esac
    OUT="$BUILD/build$OPT"
    SWIFT_FLAGS=(
        -swift-version 6 -package-name fetchchannel -parse-as-library -warnings-as-errors
        -sanitize=fuzzer,address -enable-testing -g "$OPT"
        -I "$OUT/modules" -I "$ROOT/Sources/COpenSSL" -I "$OUT/modules/CDeviceSigningShim"
        -I "$ROOT/Sources/CCurl" -I "$OUT/modules/CCurlShim"
    )
    C_FLAGS=(-g -O1 -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CDeviceSigningShim/include"
        -I "$ROOT/Sources/CCurlShim/include")
}

# Prints a digest of the given files plus the flags: the build stamp.
digest() {
    { printf '%s\n' "${SWIFT_FLAGS[@]}" "${C_FLAGS[@]}" "$(swiftc --version 2>&1)"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

# Sanitizer settings of every run: the leak suppressions (see the file; merged with a
# suppressions file already named in LSAN_OPTIONS, since LeakSanitizer reads only one), and
# symbolized reports.
sanitizer_env() {
    local options=() option rest="" theirs=""
    IFS=: read -ra options <<<"${LSAN_OPTIONS:-}"
    for option in "${options[@]}"; do
        case "$option" in
            suppressions=*) theirs="${option#suppressions=}" ;;
            "") ;;
            *) rest+=":$option" ;;
        esac
    done
    mkdir -p "$BUILD"
    cat "$FUZZ_SRC/lsan.supp" ${theirs:+"$theirs"} >"$BUILD/lsan.supp"
    export LSAN_OPTIONS="suppressions=$BUILD/lsan.supp:print_suppressions=0$rest"
    export ASAN_OPTIONS="${ASAN_OPTIONS:-symbolize=1}"
    # libFuzzer and ASan print the stack of a crash; Swift's own backtracer would only add time.
    export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
}

# True when the stamp file $1 does not hold digest $2: the output must be rebuilt.
stale() {
    [[ ! -f "$1" || "$(cat "$1")" != "$2" ]]
}

swift_sources() {
    find "$1" -name '*.swift' | LC_ALL=C sort
}

# Fails with a clear message when a tool the build or the seeds need is missing. Every build
# command carries its own `|| fail`: a function run on the left of `||` (run_target ... || exit 1)
# runs with `set -e` off, and a failed compile would otherwise leave old objects and a fresh stamp.
require_tools() {
    local tool
    for tool in swiftc clang python3 sha256sum flock nproc; do
        command -v "$tool" >/dev/null 2>&1 || fail "'$tool' is not on PATH (needed to build and seed the fuzz targets)"
    done
    # Without it key-import loses its encrypted and converted seeds: say so, do not fail.
    command -v openssl >/dev/null 2>&1 || echo "fuzz.sh: note: no openssl command; key-import seeds are fewer" >&2
}

build_shim() {
    local sources stamp out
    # The C modules' module maps and headers too: every later stamp includes this one. The
    # libcurl shim (FetchChannel's) is compiled with the OpenSSL one, into the same objects.
    mapfile -t sources < <(find "$ROOT/Sources/CDeviceSigningShim" "$ROOT/Sources/COpenSSL" \
        "$ROOT/Sources/CCurlShim" "$ROOT/Sources/CCurl" -type f | LC_ALL=C sort)
    stamp="$(digest "${sources[@]}")"
    out="$OUT/obj/CDeviceSigningShim"
    stale "$out.stamp" "$stamp" || return 0
    echo "== fuzz: compiling CDeviceSigningShim" >&2
    rm -rf "$out" && mkdir -p "$out" "$OUT/modules/CDeviceSigningShim" "$OUT/modules/CCurlShim"
    local file
    for file in "${sources[@]}"; do
        [[ "$file" == *.c ]] || continue
        clang "${C_FLAGS[@]}" -c "$file" -o "$out/$(basename "$file" .c).o" || fail "compiling $file failed"
    done
    # The module map SwiftPM would generate for the C target's include/ folder.
    cat >"$OUT/modules/CDeviceSigningShim/module.modulemap" <<EOF
module CDeviceSigningShim {
    umbrella header "$ROOT/Sources/CDeviceSigningShim/include/CDeviceSigningShim.h"
    export *
}
EOF
    cat >"$OUT/modules/CCurlShim/module.modulemap" <<EOF
module CCurlShim {
    umbrella header "$ROOT/Sources/CCurlShim/include/CCurlShim.h"
    export *
}
EOF
    echo "$stamp" >"$out.stamp"
}

# build_module NAME [STAMP...]: Sources/NAME as an instrumented, testable module (whole-module,
# one object); the stamps are those of the modules it imports, built before it.
build_module() {
    local name="$1" sources stamp
    shift
    mapfile -t sources < <(swift_sources "$ROOT/Sources/$name")
    stamp="$(digest "${sources[@]}" "$OUT/obj/CDeviceSigningShim.stamp" "$@")"
    stale "$OUT/obj/$name.o.stamp" "$stamp" || return 0
    echo "== fuzz: compiling $name ($OPT)" >&2
    mkdir -p "$OUT/obj" "$OUT/modules"
    swiftc "${SWIFT_FLAGS[@]}" -module-name "$name" -wmo \
        -emit-module -emit-module-path "$OUT/modules/$name.swiftmodule" \
        -c -o "$OUT/obj/$name.o" "${sources[@]}" || fail "compiling $name failed"
    echo "$stamp" >"$OUT/obj/$name.o.stamp"
}

build_target() {
    require_tools
    mkdir -p "$BUILD"
    # One build at a time per checkout: two runs started together would write the same objects.
    exec 9>"$BUILD/.lock"
    flock 9
    build_target_locked "$1"
    flock -u 9
}

build_target_locked() {
    local target="$1" module objects=() stamps=() sources stamp binary
    build_shim
    for module in $(modules_of "$target"); do
        build_module "$module" "${stamps[@]}"
        objects+=("$OUT/obj/$module.o")
        stamps+=("$OUT/obj/$module.o.stamp")
    done
    objects+=("$OUT"/obj/CDeviceSigningShim/*.o)
    mapfile -t sources < <(swift_sources "$FUZZ_SRC/Support")
    sources+=("$FUZZ_SRC/Targets/$target.swift")
    binary="$OUT/bin/fuzz-$target"
    stamp="$(digest "${sources[@]}" "${stamps[@]}")"
    stale "$binary.stamp" "$stamp" || return 0
    echo "== fuzz: linking fuzz-$target" >&2
    mkdir -p "$OUT/bin"
    swiftc "${SWIFT_FLAGS[@]}" -module-name "Fuzz_${target//-/_}" \
        -use-ld=lld "${sources[@]}" "${objects[@]}" -lssl -lcrypto -lcurl -o "$binary" || fail "linking fuzz-$target failed"
    echo "$stamp" >"$binary.stamp"
}

# run_target TARGET SECONDS [quiet]: returns libFuzzer's status (0: no finding). libFuzzer's output
# goes to .build/fuzz/logs/TARGET.log, and also to the terminal unless "quiet" (the smoke run,
# which shows the log's end only when a target fails).
run_target() {
    local target="$1" seconds="$2" quiet="${3:-}" seeds corpus artifacts log status=0
    build_target "$target"
    seeds="$(mktemp -d "${TMPDIR:-/tmp}/fuzz-seeds-$target.XXXXXX")"
    TEMP_DIRS+=("$seeds")
    python3 "$FUZZ_SRC/seeds.py" "$target" "$seeds"
    # Seeds come from the vectors and the tests' literals; none means the script lost its sources.
    [ -n "$(find "$seeds" -type f -print -quit)" ] || fail "seeds.py wrote no seed for $target"
    corpus="$BUILD/corpus/$target"
    artifacts="$BUILD/artifacts/$target"
    log="$BUILD/logs/$target.log"
    mkdir -p "$corpus" "$artifacts" "$BUILD/logs"
    local command=("$OUT/bin/fuzz-$target" -max_total_time="$seconds" -timeout="$TIMEOUT" -rss_limit_mb=2048
        -max_len="$(max_len_of "$target")" -print_final_stats=1 -artifact_prefix="$artifacts/")
    # shellcheck disable=SC2206  # FUZZ_ARGS is a whitespace-separated list of flags
    command+=(${FUZZ_ARGS:-} "$corpus" "$seeds")
    echo "== fuzz: $target for ${seconds}s ($(date -u '+%Y-%m-%d %H:%M UTC'))" >&2
    if [[ -n "$quiet" ]]; then
        "${command[@]}" >"$log" 2>&1 || status=$?
    else
        set +e
        "${command[@]}" 2>&1 | tee "$log"
        status="${PIPESTATUS[0]}"
        set -e
    fi
    local runs rate
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    if ((status == 0)); then
        echo "== fuzz: $target: ${runs:-?} executions (${rate:-?}/s), corpus $(find "$corpus" -type f | wc -l) inputs, no findings" >&2
    else
        [[ -z "$quiet" ]] || tail -n 60 "$log" >&2
        echo "== fuzz: $target FAILED after ${runs:-?} executions (libFuzzer exit status $status; log: $log)" >&2
        local file
        find "$artifacts" -type f -newer "$seeds" | while read -r file; do
            echo "   input kept: $file" >&2
            echo "   reproduce:  FUZZ_OPT=$OPT scripts/fuzz.sh --reproduce $target '$file'" >&2
        done
    fi
    # Removed here as well as by the exit trap: a smoke run runs this in a subshell, whose
    # TEMP_DIRS the trap never sees.
    rm -rf "$seeds"
    return "$status"
}

main() {
    (($# > 0)) || { usage >&2; exit 64; }
    # libFuzzer reads a value that is not a number as 0, which turns the timeout off.
    [[ "$TIMEOUT" =~ ^[1-9][0-9]{0,4}$ ]] || die "FUZZ_TIMEOUT must be a whole number of seconds (1 to 99999), got '$TIMEOUT'"
    configure "${FUZZ_OPT:--O}"
    case "$1" in
        -h | --help)
            usage
            ;;
        --list)
            (($# == 1)) || die "--list takes no arguments"
            printf '%s\n' "${TARGETS[@]}"
            ;;
        --build)
            shift
            local target
            if (($# == 0)); then set -- "${TARGETS[@]}"; fi
            for target in "$@"; do require_target "$target"; done
            for target in "$@"; do build_target "$target"; done
            ;;
        --smoke)
            (($# == 2)) || die "usage: scripts/fuzz.sh --smoke SECONDS"
            require_seconds "$2"
            # A smoke run builds at -Onone unless told otherwise: about 20 s instead of 70 s of
            # building on 2 cores, for 3-6 times fewer executions per second.
            configure "${FUZZ_OPT:--Onone}"
            local target failed=() jobs="${FUZZ_JOBS:-$(nproc)}" i j pids names
            [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "FUZZ_JOBS must be a positive whole number, got '$jobs'"
            for target in "${TARGETS[@]}"; do build_target "$target"; done
            # FUZZ_JOBS targets at a time (default: one per core); each libFuzzer process uses one core.
            for ((i = 0; i < ${#TARGETS[@]}; i += jobs)); do
                pids=() names=()
                for target in "${TARGETS[@]:i:jobs}"; do
                    run_target "$target" "$2" quiet &
                    pids+=("$!") names+=("$target")
                done
                for j in "${!pids[@]}"; do
                    wait "${pids[j]}" || failed+=("${names[j]}")
                done
            done
            if ((${#failed[@]} > 0)); then
                echo "== fuzz smoke: FAILED: ${failed[*]}" >&2
                exit 1
            fi
            echo "== fuzz smoke: ${#TARGETS[@]} targets, ${2}s each, no findings" >&2
            ;;
        --reproduce)
            (($# == 3)) || die "usage: scripts/fuzz.sh --reproduce TARGET FILE"
            require_target "$2"
            [[ -f "$3" ]] || die "no such input file: $3"
            build_target "$2"
            "$OUT/bin/fuzz-$2" -runs=1 "$3"
            ;;
        -*)
            die "unknown option '$1' (see scripts/fuzz.sh --help)"
            ;;
        *)
            (($# == 2)) || die "usage: scripts/fuzz.sh TARGET SECONDS"
            require_target "$1"
            require_seconds "$2"
            run_target "$1" "$2" || exit 1
            ;;
    esac
}

sanitizer_env
main "$@"
