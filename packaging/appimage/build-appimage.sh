#!/usr/bin/env bash
# Wrap the PyInstaller one-folder app (dist/hayai) into an AppImage: dist/Hayai-<version>-<arch>.AppImage.
# Step by step, and what to download first: packaging/appimage/README.md.
#
#   bash packaging/build.sh                          # 1. the one-folder app
#   bash packaging/appimage/build-appimage.sh        # 2. AppDir, then the AppImage when a packer is found:
#        appimagetool on PATH, or APPIMAGE_RUNTIME=/path/to/runtime-x86_64 with mksquashfs (squashfs-tools)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DIST=${HAYAI_DIST:-$ROOT/dist}
APPDIR=${HAYAI_APPDIR:-$ROOT/build/appimage/Hayai.AppDir}
ARCH=$(uname -m)

[ -x "$DIST/hayai/hayai" ] || { echo "no $DIST/hayai/hayai: run bash packaging/build.sh first" >&2; exit 2; }
VERSION=$("$DIST/hayai/hayai" --version | cut -d' ' -f2)
OUT=$DIST/Hayai-$VERSION-$ARCH.AppImage

echo "== AppDir $APPDIR =="
rm -rf "$APPDIR"
mkdir -p "$APPDIR/usr/lib" "$APPDIR/usr/share/applications" "$APPDIR/usr/share/icons/hicolor/scalable/apps"
# Hard links when dist/ and build/ share a file system: the bundle is ~1.5 GB.
cp -al "$DIST/hayai" "$APPDIR/usr/lib/hayai" 2>/dev/null || cp -a "$DIST/hayai" "$APPDIR/usr/lib/hayai"

cat > "$APPDIR/AppRun" <<'APPRUN'
#!/bin/sh
# The AppImage runtime mounts the image and runs this with APPIMAGE (the .AppImage file) and APPDIR set.
HERE="$(dirname "$(readlink -f "$0")")"
exec "$HERE/usr/lib/hayai/hayai" "$@"
APPRUN
chmod +x "$APPDIR/AppRun"

# The desktop entry and icon at the AppDir root are what appimagetool and desktop integrators
# (appimaged, AppImageLauncher, Gear Lever) read; Exec=hayai is rewritten to the AppImage by them,
# and `hayai --install-desktop-entry` run from the AppImage writes $APPIMAGE into Exec=.
cp resources/hayai.desktop "$APPDIR/hayai.desktop"
cp resources/hayai.desktop "$APPDIR/usr/share/applications/hayai.desktop"
cp resources/icons/hayai.svg "$APPDIR/hayai.svg"
cp resources/icons/hayai.svg "$APPDIR/usr/share/icons/hicolor/scalable/apps/hayai.svg"
cp resources/icons/hayai-256.png "$APPDIR/.DirIcon"  # rendered by packaging/make_icons.py

# Smoke test of the AppDir exactly as the runtime would start it.
version=$(cd /tmp && APPDIR="$APPDIR" "$APPDIR/AppRun" --version)
[ "$version" = "hayai $VERSION" ] || { echo "AppRun --version printed '$version'" >&2; exit 1; }
echo "ok  $APPDIR/AppRun --version: $version"

if command -v appimagetool >/dev/null; then
  echo "== appimagetool =="
  ARCH=$ARCH appimagetool --no-appstream "$APPDIR" "$OUT"
elif [ -n "${APPIMAGE_RUNTIME:-}" ]; then
  echo "== mksquashfs + runtime $APPIMAGE_RUNTIME =="
  command -v mksquashfs >/dev/null || { echo "mksquashfs missing: apt-get install squashfs-tools" >&2; exit 2; }
  squash=$ROOT/build/appimage/hayai.squashfs
  rm -f "$squash"
  # zstd: what the current type2 runtime reads fastest; -root-owned: files must not belong to the builder
  mksquashfs "$APPDIR" "$squash" -root-owned -noappend -comp zstd -quiet
  cat "$APPIMAGE_RUNTIME" "$squash" > "$OUT"
  chmod +x "$OUT"
else
  echo "AppDir ready. To pack it, put appimagetool on PATH or set APPIMAGE_RUNTIME (packaging/appimage/README.md)."
  exit 0
fi
echo "built $OUT ($(du -h "$OUT" | cut -f1))"
# Running it needs FUSE 2 (libfuse2 / fuse2); containers often lack it: then only the AppDir was tested.
if "$OUT" --version; then
  echo "ok  $OUT --version"
else
  echo "could not run $OUT here (no FUSE?); try: $OUT --appimage-extract-and-run --version" >&2
fi
