#!/usr/bin/env bash
# What only the tests need from the system (Debian): Chromium, which Playwright drives in the
# browser tests (it never downloads a browser here), and gcc, which builds the fake
# libnvidia-ml.so.1 that the GPU tests load through the real NVML bindings. Neither is needed
# to use ludwig_nb, so scripts/setup.sh does not install them; the first CI stage does.
#
# Installing needs root: as root it runs apt-get, as another user `sudo apt-get` (sudo may
# ask for a password); without either it fails, naming the command to run. With both
# present it only checks.
#
#   bash scripts/setup/system_packages.sh
set -euo pipefail
need=()
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || need+=(chromium)
command -v "${CC:-gcc}" >/dev/null || need+=(gcc)
if [[ ${#need[@]} -eq 0 ]]; then
  echo "system-deps: chromium and gcc are installed"
  exit 0
fi
if [[ $(id -u) == 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  echo "system-deps: the tests need ${need[*]}, and installing them needs root (no sudo here):" >&2
  echo "  as root: apt-get update && apt-get install -y ${need[*]}" >&2
  exit 1
fi
echo "system-deps: ${as_root[*]:+${as_root[*]} }apt-get install ${need[*]}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
