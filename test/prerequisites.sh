#!/bin/sh
# npm test's pretest: installs what the tests need that `npm ci` does not.
#
# test/report.test.ts opens `synthd report`'s HTML in headless Chromium through playwright-core,
# which never downloads a browser of its own: it uses Debian's `chromium` (/usr/bin/chromium), or
# the executable SYNTHD_TEST_CHROMIUM names. When neither is there, this installs Debian's package
# with apt-get (as root, where apt-get exists), or else says what to do and fails, before any test runs.
set -eu
chromium="${SYNTHD_TEST_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$chromium" ]; then
  exit 0
fi
if [ -n "${SYNTHD_TEST_CHROMIUM:-}" ]; then
  echo "pretest: SYNTHD_TEST_CHROMIUM=$chromium is not an executable file" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "pretest: installing Debian's chromium for test/report.test.ts (apt-get install chromium)" >&2
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
  exit 0
fi
cat >&2 <<MSG
pretest: test/report.test.ts needs Chromium at $chromium and this script can install it only as
root on a Debian-like system (apt-get). Install it (sudo apt-get install chromium), or point
SYNTHD_TEST_CHROMIUM at a Chromium or Chrome executable, then run npm test again.
MSG
exit 1
