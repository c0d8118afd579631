#!/usr/bin/env bash
# The run command: installs what is missing, builds statgpu.oxt, installs it
# into a private LibreOffice profile (build/profile, so the user's own profile
# is left alone) and shows the sample workbooks:
#   - with a display, LibreOffice Calc opens the start sheet samples/index.ods,
#     which links to every sample;
#   - without one (or with STATGPU_HEADLESS=1), every sample is recalculated
#     headlessly and its check table printed: each statgpu result next to the
#     reference the workbook holds (Calc's built-in, for the order
#     statistics); the script fails if any differs or is an error.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${STATGPU_BUILD_DIR:-$root/build}

bash "$root/scripts/install-dependencies.sh"
bash "$root/scripts/build.sh"

# python3-uno belongs to Debian's own python3, whatever else is on the PATH.
python=/usr/bin/python3
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${STATGPU_HEADLESS:-0}" != 1 ]; then
  exec "$python" "$root/samples/show_sample.py" --oxt "$build_dir/statgpu.oxt" \
       --profile "$build_dir/profile" --open "$root/samples/index.ods"
else
  exec "$python" "$root/samples/show_sample.py" --oxt "$build_dir/statgpu.oxt" \
       --profile "$build_dir/profile" --all
fi
