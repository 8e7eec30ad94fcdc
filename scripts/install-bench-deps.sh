#!/usr/bin/env bash
# What `make bench` and `make bench-report` need beyond scripts/install-deps.sh:
# GNU time (wall, CPU and peak RSS per run) and Debian's matplotlib for the chart.
set -euo pipefail
"$(dirname "$0")/install-deps.sh"
missing=()
for p in time python3-matplotlib; do
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
