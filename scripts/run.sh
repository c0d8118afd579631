#!/usr/bin/env bash
# The run command: installs what is missing, builds statgpu.oxt, installs it
# into a private LibreOffice profile (build/profile, so the user's own profile
# is left alone) and shows the sample workbook samples/order-statistics.ods:
#   - with a display, LibreOffice Calc opens the workbook;
#   - without one, the workbook is recalculated headlessly and each function's
#     result is printed next to Calc's built-in.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${STATGPU_BUILD_DIR:-$root/build}

bash "$root/scripts/install-dependencies.sh"
bash "$root/scripts/build.sh"

# python3-uno belongs to Debian's own python3, whatever else is on the PATH.
python=/usr/bin/python3
sample=$root/samples/order-statistics.ods
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${STATGPU_HEADLESS:-0}" != 1 ]; then
  exec "$python" "$root/samples/show_sample.py" --oxt "$build_dir/statgpu.oxt" \
       --profile "$build_dir/profile" --open "$sample"
else
  exec "$python" "$root/samples/show_sample.py" --oxt "$build_dir/statgpu.oxt" \
       --profile "$build_dir/profile" "$sample"
fi
