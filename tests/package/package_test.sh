#!/usr/bin/env bash
# Tests of the installed package (CTest label `package`), one step per call:
#   package_test.sh build    BUILD_DIR SCRATCH   cpack -G DEB, then dpkg-deb -x into SCRATCH/root
#   package_test.sh depends  BUILD_DIR SCRATCH   Depends names the package of every linked library
#   package_test.sh cli      BUILD_DIR SCRATCH   the installed oxport exports (and verifies) the sample
#   package_test.sh consumer BUILD_DIR SCRATCH   a CMake project builds against find_package(Oxport)
#   package_test.sh manpage  BUILD_DIR SCRATCH   the man page is installed and lists every --help flag
#   package_test.sh docs     BUILD_DIR SCRATCH   /usr/share/doc/oxport: copyright and changelog.Debian.gz
#   package_test.sh studio   BUILD_DIR SCRATCH   oxport-studio, its desktop entry, icon and MIME type
# SCRATCH lives outside the source tree (under TMPDIR), so Node cannot find the repository's
# node_modules by walking up from the installed runner: verification must work through NODE_PATH.
set -euo pipefail

step=$1 build=$2 scratch=$3
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
root="$scratch/root"
fail() { printf 'package_test %s: FAIL: %s\n' "$step" "$*" >&2; exit 1; }
say() { printf 'package_test %s: %s\n' "$step" "$*"; }
unset LD_LIBRARY_PATH OXPORT_ORT_RUNNER NODE_PATH

case "$step" in
build)
  rm -rf "$scratch"
  mkdir -p "$scratch/cpack"
  cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/cpack" >"$scratch/cpack.log" 2>&1 \
    || { cat "$scratch/cpack.log"; fail "cpack failed"; }
  deb=$(ls "$scratch"/cpack/*.deb 2>/dev/null | head -1)
  [[ -n "$deb" ]] || fail "cpack wrote no .deb (see $scratch/cpack.log)"
  dpkg-deb -x "$deb" "$root"
  cp "$deb" "$scratch/oxport.deb"
  say "$(basename "$deb"): $(stat -c %s "$deb") bytes"
  dpkg-deb -I "$deb" | sed -n '/Package:/,$p'
  dpkg-deb -c "$deb" | awk '{print $6}'
  ;;

depends)
  depends=$(dpkg-deb -f "$scratch/oxport.deb" Depends)
  say "Depends: $depends"
  names=$(tr ',|' '\n\n' <<<"$depends" | awk '{print $1}')
  checked=0
  while IFS= read -r elf; do
    while IFS= read -r so; do
      [[ "$so" == liboxport-core.so* ]] && continue
      path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !p {p = $NF} END {print p}')
      [[ -n "$path" ]] || fail "$elf needs $so, which ldconfig does not know"
      owner=""
      for p in "$path" "/usr${path#/usr}" "${path#/usr}" "$(readlink -f "$path")"; do
        owner=$(dpkg -S "$p" 2>/dev/null | awk -F: 'NR == 1 {print $1}' || true)
        [[ -n "$owner" ]] && break
      done
      [[ -n "$owner" ]] || fail "no Debian package owns $path ($so, needed by $elf)"
      [[ "$owner" == *-dev ]] && fail "$so resolves to the -dev package $owner"
      grep -qxF "$owner" <<<"$names" || fail "$elf needs $so from $owner, which Depends lacks"
      checked=$((checked + 1))
    done < <(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}')
  done < <(find "$root/usr/bin" "$root/usr/lib" -type f \( -name 'oxport*' -o -name '*.so*' \))
  ((checked > 0)) || fail "no NEEDED entries found"
  say "$checked NEEDED entries, each owned by a package in Depends"
  ;;

cli)
  ox="$root/usr/bin/oxport"
  [[ -x "$ox" ]] || fail "$ox is missing"
  core=$(ldd "$ox" | awk '/liboxport-core/ {print $3}')
  [[ "$core" == "$root"/* ]] || fail "installed oxport loads the core from '$core', not from the package"
  "$ox" --version | grep -E '^oxport [0-9]+\.[0-9]+\.[0-9]+ \(libtorch' || fail "--version"
  samples="$root/usr/share/oxport/samples"
  out="$scratch/cli"
  rm -rf "$out" && mkdir -p "$out"
  "$ox" export "$samples/sample_cnn.pt" --preset "$samples/sample_cnn.preset.json" -o "$out/sample.onnx" \
    >"$out/export.txt" 2>&1 || { cat "$out/export.txt"; fail "export failed"; }
  cat "$out/export.txt"
  grep -Eq "^wrote .*sample.onnx \([0-9]+ bytes" "$out/export.txt" || fail "export printed no 'wrote' line"
  [[ -s "$out/sample.onnx" ]] || fail "no sample.onnx"
  # Verification without onnxruntime-node: a clear message, not a crash.
  set +e
  HOME="$out" "$ox" verify "$samples/sample_cnn.pt" "$out/sample.onnx" --preset "$samples/sample_cnn.preset.json" \
    >"$out/noort.txt" 2>&1
  rc=$?
  set -e
  cat "$out/noort.txt"
  ((rc == 1)) || fail "verify without onnxruntime-node exited $rc, expected 1"
  grep -q "runtime-missing" "$out/noort.txt" || fail "verify without onnxruntime-node did not say runtime-missing"
  # With onnxruntime-node on NODE_PATH (the repository's npm install), through the installed runner.
  if [[ -f "$src/node_modules/onnxruntime-node/package.json" ]] && command -v node >/dev/null; then
    NODE_PATH="$src/node_modules" "$ox" export "$samples/sample_cnn.pt" --preset "$samples/sample_cnn.preset.json" \
      -o "$out/verified.onnx" --verify >"$out/verify.txt" 2>&1 || { cat "$out/verify.txt"; fail "export --verify failed"; }
    cat "$out/verify.txt"
    grep -qi "pass" "$out/verify.txt" || fail "verify did not report a pass"
  else
    say "onnxruntime-node not installed in $src/node_modules; NODE_PATH verification skipped"
  fi
  ;;

consumer)
  if grep -rEq '#include <(torch|ATen|c10|onnx|google)/' "$root/usr/include/oxport"; then
    fail "installed public headers include libtorch/ONNX/protobuf headers"
  fi
  cb="$scratch/consumer"
  rm -rf "$cb"
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$src/tests/consumer" -B "$cb" "${gen[@]}" -DCMAKE_PREFIX_PATH="$root/usr" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=Release >"$scratch/consumer-configure.log" 2>&1 \
    || { cat "$scratch/consumer-configure.log"; fail "configuring the consumer failed"; }
  grep -q "Oxport_DIR:PATH=$root/usr/" "$cb/CMakeCache.txt" || fail "find_package(Oxport) did not use the scratch install"
  cmake --build "$cb" >"$scratch/consumer-build.log" 2>&1 || { cat "$scratch/consumer-build.log"; fail "building the consumer failed"; }
  if grep -Eq 'torch|onnx|protobuf' "$cb/compile_commands.json"; then
    cat "$cb/compile_commands.json"
    fail "the consumer's compile line mentions libtorch/ONNX/protobuf"
  fi
  samples="$root/usr/share/oxport/samples"
  "$cb/oxport_consumer" "$samples/sample_cnn.pt" "$samples/sample_cnn.preset.json" | tee "$scratch/consumer.txt"
  grep -Eq '^exported [1-9][0-9]* bytes' "$scratch/consumer.txt" || fail "consumer did not export"
  ;;

python)
  # The installed Python package, found by the system Python from the package's dist-packages,
  # loading the core from the package (its RPATH), exporting the bundled sample.
  pkgdir="$root/usr/lib/python3/dist-packages"
  [[ -f "$pkgdir/oxport/__init__.py" ]] || { say "no Python package in the .deb (built without python3-dev/pybind11)"; exit 0; }
  ext=$(ls "$pkgdir"/oxport/_oxport*.so | head -1)
  core=$(ldd "$ext" | awk '/liboxport-core/ {print $3}')
  [[ "$core" == "$root"/* ]] || fail "the installed extension loads the core from '$core', not from the package"
  out="$scratch/python"
  rm -rf "$out" && mkdir -p "$out"
  PYTHONPATH="$pkgdir" /usr/bin/python3 - "$root/usr/share/oxport/samples/sample_cnn.pt" "$out/sample.onnx" "$root" <<'PY' \
    || fail "the installed Python package cannot export the sample"
import sys, torch, oxport
assert oxport.__file__.startswith(sys.argv[3]), oxport.__file__
m = torch.jit.load(sys.argv[1])
r = oxport.export_to_onnx(m, (torch.randn(1, 3, 32, 32),), sys.argv[2])
print("python:", r)
PY
  [[ -s "$out/sample.onnx" ]] || fail "no sample.onnx from the Python package"
  ;;

manpage)
  man="$root/usr/share/man/man1/oxport.1.gz"
  [[ -f "$man" ]] || fail "$man is missing"
  page=$(gzip -dc "$man")
  missing=0
  for flag in $("$root/usr/bin/oxport" export --help | grep -oE -- '(^|[ ,])--?[a-z][a-z-]*' | tr -d ' ,' | sort -u); do
    esc=${flag//-/\\\\-}
    grep -q -- "$esc" <<<"$page" || { say "man page lacks $flag"; missing=1; }
  done
  ((missing == 0)) || fail "the man page misses flags of oxport export --help"
  if command -v man >/dev/null; then man -l "$man" >/dev/null 2>&1 || fail "man cannot format the page"; fi
  say "man page covers every flag of oxport export --help"
  ;;

docs)
  doc="$root/usr/share/doc/oxport"
  copyright="$doc/copyright"
  [[ -f "$copyright" ]] || fail "$copyright is missing"
  # Debian's machine-readable format, never compressed, naming the license and where its text is.
  head -1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
    || fail "copyright does not start with the copyright-format 1.0 Format line"
  grep -qx 'License: Apache-2.0' "$copyright" || fail "copyright names no Apache-2.0 License paragraph"
  grep -q '/usr/share/common-licenses/Apache-2.0' "$copyright" || fail "copyright does not point to common-licenses"
  grep -q 'https://www.apache.org/licenses/LICENSE-2.0' "$src/LICENSE" || fail "LICENSE does not name the license's URL"
  changelog="$doc/changelog.Debian.gz"
  [[ -f "$changelog" ]] || fail "$changelog is missing"
  gzip -t "$changelog" || fail "changelog.Debian.gz is not valid gzip"
  # gzip -9n: no file name or time stamp in the header (reproducible, as dh_compress does it).
  flags=$(od -An -tu1 -j3 -N1 "$changelog" | tr -d ' ')
  mtime=$(od -An -tu4 -j4 -N4 "$changelog" | tr -d ' ')
  (( (flags & 8) == 0 && mtime == 0 )) || fail "changelog.Debian.gz carries a name or time stamp (flags $flags, mtime $mtime)"
  version=$(dpkg-deb -f "$scratch/oxport.deb" Version)
  top=$(gzip -dc "$changelog" | head -1)
  [[ "$top" =~ ^oxport\ \(([^\)]+)\)\ [a-z-]+\;\ urgency=[a-z]+$ ]] || fail "changelog's first line is not a Debian entry: $top"
  [[ "${BASH_REMATCH[1]}" == "$version" ]] || fail "changelog's latest version ${BASH_REMATCH[1]} is not the package's $version"
  if command -v dpkg-parsechangelog >/dev/null; then
    gzip -dc "$changelog" >"$scratch/changelog"
    dpkg-parsechangelog -l "$scratch/changelog" -S Maintainer >/dev/null 2>"$scratch/parsechangelog.err" \
      || { cat "$scratch/parsechangelog.err"; fail "dpkg-parsechangelog cannot read the changelog"; }
    if [[ -s "$scratch/parsechangelog.err" ]]; then
      cat "$scratch/parsechangelog.err"
      fail "dpkg-parsechangelog warns about the changelog"
    fi
  fi
  say "copyright (Apache-2.0) and changelog.Debian.gz ($version) are installed"
  ;;

studio)
  studio="$root/usr/bin/oxport-studio"
  [[ -x "$studio" ]] || fail "$studio is missing"
  core=$(ldd "$studio" | awk '/liboxport-core/ {print $3}')
  [[ "$core" == "$root"/* ]] || fail "installed oxport-studio loads the core from '$core', not from the package"
  QT_QPA_PLATFORM=offscreen "$studio" --version | grep -Eq '^oxport[- ][Ss]tudio [0-9]+\.[0-9]+\.[0-9]+' \
    || fail "oxport-studio --version"
  desktop="$root/usr/share/applications/oxport-studio.desktop"
  [[ -f "$desktop" ]] || fail "$desktop is missing"
  entry() { awk -F= -v k="$1" '$1 == k {print substr($0, length(k) + 2); exit}' "$desktop"; }
  exe=$(entry Exec | awk '{print $1}')
  [[ -x "$root/usr/bin/$exe" ]] || fail "the desktop entry runs '$exe', which the package does not install in /usr/bin"
  icon=$(entry Icon)
  [[ -f "$root/usr/share/icons/hicolor/scalable/apps/$icon.svg" ]] || fail "the desktop entry's icon '$icon' is not installed"
  if command -v xmllint >/dev/null; then
    xmllint --noout "$root/usr/share/icons/hicolor/scalable/apps/$icon.svg" || fail "the icon is not well-formed SVG"
  fi
  mimes=$(entry MimeType)
  [[ -n "$mimes" ]] || fail "the desktop entry declares no MimeType"
  for mime in ${mimes//;/ }; do
    grep -rqF "type=\"$mime\"" "$root/usr/share/mime/packages" || fail "MIME type $mime is not defined in usr/share/mime/packages"
  done
  if command -v xmllint >/dev/null; then
    for x in "$root"/usr/share/mime/packages/*.xml; do xmllint --noout "$x" || fail "$x is not well-formed"; done
  fi
  if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$desktop" || fail "desktop-file-validate"; fi
  say "oxport-studio runs; $(basename "$desktop") starts it, icon $icon, MIME types ${mimes%;}"
  ;;

*) fail "unknown step" ;;
esac
