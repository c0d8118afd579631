#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test tier
# (engine tests on the CPU, the CUDA tier -- skipped without a GPU --, and the
# LibreOffice test) through ctest, which prints the counts. Then the sanitizer
# tier: the engine, the tool and their tests built again with AddressSanitizer
# and UndefinedBehaviorSanitizer into build-sanitize/, and run by a second
# ctest; and the thread sanitizer tier: built again with ThreadSanitizer into
# build-tsan/, where a third ctest runs the tests that call the engine from
# several threads at once. The script fails if any run fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${STATGPU_BUILD_DIR:-$root/build}
sanitize_dir=${STATGPU_SANITIZE_BUILD_DIR:-$root/build-sanitize}
thread_sanitize_dir=${STATGPU_THREAD_SANITIZE_BUILD_DIR:-$root/build-tsan}

bash "$root/scripts/install-dependencies.sh"
bash "$root/scripts/build.sh"
# A failure here still lets the sanitizer tier run; the script fails at the end.
main_status=0
(cd "$build_dir" && ctest --output-on-failure --timeout 1800) || main_status=$?

echo "sanitizer tier: building the engine, the tool and the tests with ASan and UBSan into $sanitize_dir"
STATGPU_BUILD_DIR=$sanitize_dir bash "$root/scripts/build.sh" \
  -DSTATGPU_SANITIZE=ON -DSTATGPU_CUDA=OFF -DSTATGPU_ADDIN=OFF
# LeakSanitizer stops the world through ptrace; where that is forbidden (some
# containers) it fails every program at exit, so leaks are then not checked.
if ! probe=$(ASAN_OPTIONS=detect_leaks=1 "$sanitize_dir/bin/statgpu" --version 2>&1) \
    && grep -q "LeakSanitizer has encountered a fatal error" <<<"$probe"; then
  echo "sanitizer tier: LeakSanitizer cannot run on this machine; leaks are not checked"
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
echo "sanitizer tier: running the engine and tool tests under ASan and UBSan"
(cd "$sanitize_dir" && ctest --output-on-failure --timeout 1800)
echo "sanitizer tier: passed"

echo "thread sanitizer tier: building the engine, the tool and the tests with TSan into $thread_sanitize_dir"
STATGPU_BUILD_DIR=$thread_sanitize_dir bash "$root/scripts/build.sh" \
  -DSTATGPU_SANITIZE=thread -DSTATGPU_CUDA=OFF -DSTATGPU_ADDIN=OFF
# ThreadSanitizer's runtime refuses some address-space layouts (it stops every
# program at start); the tier cannot run there, and the script says so.
if ! probe=$("$thread_sanitize_dir/bin/statgpu" --version 2>&1) && grep -q "ThreadSanitizer" <<<"$probe"; then
  echo "thread sanitizer tier: ThreadSanitizer cannot run on this machine; not run: ${probe%%$'\n'*}"
else
  echo "thread sanitizer tier: running the pool, context and concurrency tests under TSan"
  (cd "$thread_sanitize_dir" && ctest --output-on-failure --timeout 1800 -L thread_sanitizer)
  echo "thread sanitizer tier: passed"
fi
exit "$main_status"
