#!/usr/bin/env bash
# Installs, from Debian 12's own packages, everything statgpu needs to build,
# run in LibreOffice and test. The CUDA backend is built only where the CUDA
# toolkit (nvcc) is already installed; without it everything runs on the CPU.
set -euo pipefail

packages=(
  build-essential cmake pkg-config           # the build
  libcmocka-dev                              # engine tests
  libreoffice-calc libreoffice-dev libreoffice-dev-common   # Calc and its SDK
  libreoffice-script-provider-python python3-uno            # Python-UNO for tests and samples
  locales                                    # a locale of decimal commas for the LibreOffice check of it
  xvfb                                       # a display for the LibreOffice checks of an office with windows
  zip                                        # packing statgpu.oxt
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "statgpu: all build and test dependencies are installed"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "statgpu: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "statgpu: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
