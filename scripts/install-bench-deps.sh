#!/usr/bin/env bash
# What `make bench` and `make bench-report` need beyond scripts/install-deps.sh:
# GNU time (wall, CPU and peak RSS per run), Debian's matplotlib for the charts, GStreamer
# (gst-launch-1.0 with ximagesrc, videoconvert, x264enc, mp4mux) as the second peer of the
# real-time X11 cases, and the x264 command-line encoder for the encoder-alone limit.
set -euo pipefail
"$(dirname "$0")/install-deps.sh"
missing=()
for p in time python3-matplotlib gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
         gstreamer1.0-plugins-ugly gstreamer1.0-x x264; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "swift-record: installing benchmark packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "swift-record: not root; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
