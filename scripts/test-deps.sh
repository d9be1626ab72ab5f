#!/usr/bin/env bash
# Installs the Debian packages some tests drive (they are real programs, not mocks): Chromium (the
# console and page tests), Perl's OpenAPI::Client and PCRE2 (the OpenAPI document outside
# JavaScript), Prometheus (the metrics tests), nginx and openssl (the deploy/nginx recipe in front of
# Pigeon, with a certificate made by the test), swaks (with Net::SSLeay for its TLS), msmtp and
# python3 (SMTP submission driven by clients no one here wrote). Run by `pnpm test` and `.ci/run`.
#
# It installs only what is missing, and only as root or with password-less sudo on a Debian or
# Ubuntu machine. Otherwise it says, one line per package, which tests will be skipped, and exits 0:
# the rest of the suite runs (each skipped test names the package it needs). CI then refuses the
# run, because `.ci/run` fails when any test was skipped.
set -uo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }
missing=()
have chromium || [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=("chromium")
perl -MOpenAPI::Client -e1 >/dev/null 2>&1 || missing+=("libopenapi-client-perl")
have pcre2grep || missing+=("pcre2-utils")
{ have prometheus && have promtool; } || missing+=("prometheus")
[ -x "${NGINX_PATH:-/usr/sbin/nginx}" ] || missing+=("nginx")
have openssl || missing+=("openssl")
have swaks || missing+=("swaks")
perl -MNet::SSLeay -e1 >/dev/null 2>&1 || missing+=("libnet-ssleay-perl")
have msmtp || missing+=("msmtp")
have python3 || missing+=("python3")
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if have sudo && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
fi
if [ "$SUDO" != "none" ] && have apt-get; then
  echo "test-deps: installing ${missing[*]} from Debian's packages…"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || { $SUDO apt-get update >/dev/null 2>&1 && $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; } \
    || echo "test-deps: apt-get could not install ${missing[*]}"
fi

still=()
have chromium || [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || still+=("chromium: the console and browser tests are skipped")
perl -MOpenAPI::Client -e1 >/dev/null 2>&1 || still+=("libopenapi-client-perl: the Perl OpenAPI client test is skipped")
have pcre2grep || still+=("pcre2-utils: the OpenAPI pattern test (PCRE2) is skipped")
{ have prometheus && have promtool; } || still+=("prometheus: the Prometheus scrape and alert-rule tests are skipped")
[ -x "${NGINX_PATH:-/usr/sbin/nginx}" ] || still+=("nginx: the deploy/nginx test is skipped")
have openssl || still+=("openssl: the deploy/nginx test is skipped")
have swaks || still+=("swaks: the SMTP submission test with swaks is skipped")
perl -MNet::SSLeay -e1 >/dev/null 2>&1 || still+=("libnet-ssleay-perl: the SMTP submission test with swaks (its TLS) is skipped")
have msmtp || still+=("msmtp: the SMTP submission test with msmtp is skipped")
have python3 || still+=("python3: the SMTP submission test with Python's smtplib is skipped")
for line in "${still[@]}"; do echo "test-deps: missing Debian package $line (install it as root: apt-get install ${line%%:*})"; done
exit 0
