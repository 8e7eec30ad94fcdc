#!/usr/bin/env bash
# Installs the system packages swift-record needs to build, run and test.
# Idempotent: installs only what is missing. As root it runs apt-get
# (one `apt-get update` first); otherwise it prints the command to run.
set -euo pipefail

packages=(
  pkg-config
  python3
  libavcodec-dev libavformat-dev libswscale-dev libavutil-dev libswresample-dev libavdevice-dev
  libx11-dev libxext-dev libxfixes-dev libxdamage-dev libxrandr-dev x11-xserver-utils x11-utils
  ffmpeg
  xvfb
  libpulse-dev pulseaudio pulseaudio-utils
  nginx-light libnginx-mod-rtmp
  chromium
  mediainfo
  gstreamer1.0-tools gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav
  libpipewire-0.3-dev libsystemd-dev
  pipewire pipewire-bin wireplumber mutter dbus-daemon weston xdg-desktop-portal
  python3-dbus python3-gi gstreamer1.0-pipewire
  groff-base man-db zsh fish
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "swift-record: installing system packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "swift-record: not root; run this, then try again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
