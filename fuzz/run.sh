#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a fixed budget (FUZZ_SECONDS, default 30).
# A crash is copied to fuzz/regressions/<target>/ (replayed by the test suite from then on)
# and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-30}
out=.build-fuzz
mkdir -p "$out"
status=0
# The Swift runtime's crash backtracer would wait on a hung child; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no

build() {  # name, sources…
  local name=$1; shift
  rm -f "$out/$name"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name SwiftRecord -package-name swift_record \
    -I Sources/CFFmpeg "$@" -o "$out/$name" 2>&1 | grep -v "Cannot export local symbol" || true
  # (an old binary must not pass for a new build)
  [ -x "$out/$name" ] || { echo "fuzz: could not build $name"; exit 1; }
}

run() {  # name
  local name=$1
  # New inputs go to the scratch corpus (first directory); the committed seeds and
  # regressions are read only.
  mkdir -p "fuzz/corpus/$name" "fuzz/regressions/$name" "$out/artifacts-$name" "$out/corpus-$name"
  echo "fuzz: $name for ${SECONDS_EACH}s"
  if ! timeout -s KILL $((SECONDS_EACH + 60)) "$out/$name" -max_total_time="$SECONDS_EACH" -max_len=256 \
      -artifact_prefix="$out/artifacts-$name/" "$out/corpus-$name" "fuzz/corpus/$name" "fuzz/regressions/$name" >"$out/$name.log" 2>&1; then
    echo "fuzz: $name found a crash:"; grep -E "ERROR|SUMMARY|Test unit written|contract" "$out/$name.log" | head -10
    cp "$out/artifacts-$name"/crash-* "fuzz/regressions/$name/" 2>/dev/null || true
    status=1
  else
    tail -1 "$out/$name.log"
  fi
}

core=(Sources/SwiftRecord/Parsing/ValueParsing.swift Sources/SwiftRecord/Parsing/ValueParsingChecks.swift
      Sources/SwiftRecord/Parsing/OptionValueParsing.swift Sources/SwiftRecord/Parsing/AudioChoice.swift
      Sources/SwiftRecord/Support/SwiftRecordError.swift Sources/SwiftRecord/Time/MediaTime.swift
      Sources/SwiftRecord/Formats/VideoSize.swift Sources/SwiftRecord/Capture/Y4MHeader.swift
      Sources/SwiftRecord/Capture/RawPixelFormat.swift Sources/SwiftRecord/Formats/PixelFormat.swift
      fuzz/FFmpegLogStub.swift)
build values fuzz/ValueParsersFuzz.swift "${core[@]}"
run values
build y4m fuzz/Y4MHeaderFuzz.swift "${core[@]}"
run y4m
# The broadcast protocol's parser stands alone (the standard library only).
build broadcast fuzz/BroadcastMessageFuzz.swift Sources/SwiftRecordBroadcastWire/BroadcastMessage.swift \
  Sources/SwiftRecordBroadcastWire/BroadcastMessage+Coding.swift
run broadcast
exit $status
