#!/usr/bin/env bash
# Runs recordings (with and without sound) and conversions under LeakSanitizer
# and fails on any leak whose allocation stack passes through swift-record's own code.
# Leaks reported inside Foundation, XCTest, the Swift runtime's own caches or the codec
# libraries are listed but do not fail the check: they are not ours to fix.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=.build-asan
swift build --sanitize=address --scratch-path "$BUILD" --product swift-record >/dev/null
BIN="$BUILD/debug/swift-record"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

run() {
  local name=$1; shift
  local log="$work/$name.log"
  ASAN_OPTIONS=detect_leaks=1:exitcode=0 LSAN_OPTIONS=report_objects=0 "$BIN" "$@" >"$log" 2>&1 || {
    echo "check-leaks: $name: swift-record failed:"; tail -5 "$log"; status=1; return; }
  local total ours
  total=$(grep -c 'leak of' "$log" || true)
  # A leak is ours when a frame of its stack is in our modules or sources.
  ours=$(awk '/leak of/{s=$0; inleak=1; next} inleak && /^ *#/{s=s"\n"$0; next} inleak{ if (s ~ /s11SwiftRecord|s16SwiftRecordPulse|s12swift_record|Sources\/SwiftRecord|Sources\/swift-record/) print s; inleak=0 }' "$log")
  if [ -n "$ours" ]; then
    echo "check-leaks: $name: leaks in swift-record's code:"; echo "$ours" | head -60; status=1
  else
    echo "check-leaks: $name: no leak in our code ($total reported outside it)"
  fi
}

run record-300 --source synthetic --size 640x360 --frames 300 --quiet -o "$work/record.mp4"
run record-300-mkv --source synthetic --size 640x360 --frames 300 --no-fragments --quiet -o "$work/record.mkv"
run record-300-aac --source synthetic --size 640x360 --frames 300 --audio synthetic --quiet -o "$work/sound.mp4"
run record-300-opus --source synthetic --size 640x360 --frames 300 --audio synthetic --audio-codec opus --quiet -o "$work/sound.mkv"
if "$BIN" --help 2>/dev/null | grep -q "^ *convert"; then
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x240:rate=30 -frames:v 1000 -f rawvideo -pix_fmt yuv420p "$work/in.yuv"
  run convert-1000 convert "$work/in.yuv" --size 320x240 --fps 30 --quiet -o "$work/convert.mp4"
  ffmpeg -nostdin -v error -f lavfi -i sine=frequency=440:sample_rate=44100:duration=34 -ac 2 -c:a pcm_s16le "$work/in.wav"
  run convert-1000-audio convert "$work/in.yuv" --size 320x240 --fps 30 --audio "$work/in.wav" --quiet -o "$work/convert-sound.mp4"
fi
exit $status
