#!/usr/bin/env bash
# Build the one-folder app dist/hayai/hayai with PyInstaller, then smoke-test the result.
#
#   pip install -e ".[package]"      # once: PyInstaller
#   bash packaging/build.sh           # build + smoke test
#   bash packaging/build.sh --smoke   # smoke-test an existing dist/hayai only
#
# The smoke test runs the bundle from another folder (so nothing comes from the checkout):
# --version, every sub-command's --help, the Qt platform plugins present, the desktop entry, a
# dictionary lookup (bundled JMdict/CC-CEDICT data), `hayai blocks` (the bundled text detector),
# `hayai bench --blocks` (the int8 detector made in the bundle), and `hayai ocr` +
# `hayai bench` on a tiny random checkpoint written by `python -m model.random_checkpoint`
# (real OCR through the bundled torch, tokenizers and safetensors; bench reads the sample crop
# from the bundled resources), `hayai bench --app` and, under Xvfb, `--watch --load` (processes
# spawned by multiprocessing from the bundle). Weights are never bundled.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${HAYAI_DIST:-$ROOT/dist}
APP=$DIST/hayai/hayai
PYTHON=${PYTHON:-python}

fail() { echo "SMOKE TEST FAILED: $*" >&2; exit 1; }

build() {
  if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    echo "PyInstaller is not installed: pip install -e \".[package]\"" >&2
    exit 2
  fi
  local start=$SECONDS
  "$PYTHON" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$DIST" --workpath "$ROOT/build/pyinstaller" packaging/hayai.spec
  echo "built $APP in $((SECONDS - start)) s; size $(du -sh "$DIST/hayai" | cut -f1)"
}

smoke() {
  [ -x "$APP" ] || fail "$APP is missing: build first"
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  cd "$work"  # run from elsewhere: the bundle must not need the checkout

  local version
  version=$("$APP" --version) || fail "--version exited $?"
  [[ $version == hayai\ * ]] || fail "--version printed '$version'"
  echo "ok  $version"
  "$APP" --help >/dev/null || fail "--help"
  for cmd in capture ocr bench model lookup; do
    "$APP" "$cmd" --help >/dev/null || fail "$cmd --help"
  done
  echo "ok  --help of every sub-command"

  # Qt loads its platform plugin at run time: make sure the ones we support were collected.
  for plugin in libqxcb.so libqoffscreen.so; do
    [ -n "$(find "$DIST/hayai" -name "$plugin" -print -quit)" ] || fail "Qt plugin $plugin not in the bundle"
  done
  for data in resources/icons/hayai.svg resources/samples/sample_ja_horizontal.png resources/hayai.desktop; do
    [ -n "$(find "$DIST/hayai" -path "*/$data" -print -quit)" ] || fail "$data not in the bundle"
  done
  echo "ok  Qt platform plugins (xcb, offscreen) and resources bundled"

  # Desktop entry from the bundle: Exec= must be the bundle's own binary (sys.frozen).
  XDG_DATA_HOME="$work/xdg" "$APP" --install-desktop-entry >/dev/null || fail "--install-desktop-entry"
  grep -qx "Exec=$APP" "$work/xdg/applications/hayai.desktop" || fail "desktop entry Exec= is not $APP"
  echo "ok  --install-desktop-entry points at the bundle"

  # The tray app itself on a real X server: Qt's xcb plugin, pynput's X11 backend and mss must load
  # from the bundle. -v logs the system-info block once everything is up (no weights: that is fine).
  if command -v xvfb-run >/dev/null; then
    setsid xvfb-run -a -s "-screen 0 1280x800x24" env HAYAI_CONFIG_DIR="$work/gui-config" HF_HOME="$work/hf" \
      HF_HUB_OFFLINE=1 QT_QPA_PLATFORM=xcb "$APP" -v >"$work/gui.log" 2>&1 &
    local gui=$! up=0
    for _ in $(seq 120); do
      if grep -q "qt_platform: xcb" "$work/gui.log"; then up=1; break; fi
      kill -0 "$gui" 2>/dev/null || break
      sleep 0.5
    done
    kill -TERM -- "-$gui" 2>/dev/null || true
    wait "$gui" 2>/dev/null || true
    [ "$up" = 1 ] || fail "the app did not come up under Xvfb:\n$(tail -20 "$work/gui.log")"
    grep -q "hotkey backend: pynput" "$work/gui.log" || fail "pynput's X11 backend did not load: $(tail -20 "$work/gui.log")"
    echo "ok  the tray app starts under Xvfb (xcb, pynput, mss from the bundle)"
  else
    echo "SKIP the tray app under Xvfb: xvfb-run not installed"
  fi

  # Dictionary data (jamdict DB, KANJIDIC2, CC-CEDICT) and Sudachi: builds the index once (~15 s).
  local entries
  entries=$(HAYAI_CONFIG_DIR="$work/config" "$APP" lookup 食べました --json 2>/dev/null) || fail "hayai lookup exited $?"
  "$PYTHON" -c 'import json, sys; e = json.loads(sys.argv[1]); assert e and e[0]["headword"] == "食べる", e[:1]' \
    "$entries" || fail "hayai lookup 食べました printed: ${entries:0:300}"
  echo "ok  hayai lookup 食べました -> 食べる (dictionary data bundled)"
  # 行った is 行く before 行う only when the analyser (SudachiPy + its dictionary) runs
  entries=$(HAYAI_CONFIG_DIR="$work/config" "$APP" lookup 行った --json 2>/dev/null) || fail "hayai lookup exited $?"
  "$PYTHON" -c 'import json, sys; e = json.loads(sys.argv[1]); assert e and e[0]["headword"] == "行く", e[:1]' \
    "$entries" || fail "hayai lookup 行った printed: ${entries:0:300}"
  echo "ok  hayai lookup 行った -> 行く (the analyser bundled)"

  # The text detector: onnxruntime and rapidocr's model file, checked against its pinned hash.
  local sample found
  sample=$(find "$DIST/hayai" -path "*/resources/samples/sample_ja_vertical.png" -print -quit)
  found=$("$APP" blocks --json "$sample" 2>&1) || fail "hayai blocks exited $?: ${found:0:300}"
  "$PYTHON" -c 'import json, sys; r = json.loads(sys.argv[1]); assert r["blocks"], r' \
    "$found" || fail "hayai blocks found nothing on the vertical sample: ${found:0:300}"
  echo "ok  hayai blocks finds the vertical sample's text (detector bundled)"

  # The int8 detector (what the CPU runs for pages, the selection and Hover to read): made in the
  # bundle by onnx and onnxruntime's quantizer from the ranges beside app/blocks/int8.py; the bench
  # says which model ran each row, so a float fallback fails here
  local quick
  quick=$(HAYAI_CONFIG_DIR="$work/int8" "$APP" bench --blocks --runs 1 --json 2>&1) \
    || fail "hayai bench --blocks exited $?: ${quick:0:300}"
  "$PYTHON" -c 'import json, sys; p = json.loads(sys.argv[1].splitlines()[-1])["pages"]["drawn screen 1920×1080"]; assert p["precision"] == "int8" and p["blocks"], p' \
    "$quick" || fail "hayai bench --blocks found nothing with the int8 detector: ${quick: -600}"
  echo "ok  the int8 detector is made in the bundle (onnx and the quantizer bundled)"

  if ! (cd "$ROOT" && "$PYTHON" -c "import model.random_checkpoint" 2>/dev/null); then
    if [ "${HAYAI_SMOKE_ALLOW_NO_CHECKPOINT:-0}" = 1 ]; then
      echo "SKIP hayai ocr: model.random_checkpoint is not there yet"
      return 0
    fi
    fail "model.random_checkpoint is missing: cannot smoke-test hayai ocr"
  fi
  (cd "$ROOT" && "$PYTHON" -m model.random_checkpoint "$work/tiny" --size tiny --variant v2.1 >/dev/null) \
    || fail "python -m model.random_checkpoint"
  local out
  # exact precision on the CPU: the path with golden results, the same on every build machine
  out=$(HF_HUB_OFFLINE=1 "$APP" ocr --json --model "$work/tiny" --device cpu --precision exact --max-new-tokens 8 \
        "$ROOT/resources/samples/sample_ja_horizontal.png") || fail "hayai ocr exited $?"
  "$PYTHON" -c 'import json, sys; r = json.loads(sys.argv[1]); assert isinstance(r["text"], str) and r["token_ids"], r' \
    "$out" || fail "hayai ocr printed: $out"
  echo "ok  hayai ocr on a tiny random checkpoint: ${out:0:120}"
  HF_HUB_OFFLINE=1 "$APP" bench --model "$work/tiny" --runs 1 --max-new-tokens 4 >/dev/null \
    || fail "hayai bench on the bundled sample crop"
  echo "ok  hayai bench on the bundled sample crop"
  # multiprocessing's spawn from the bundle (sys.executable is hayai itself; packaging/entry.py calls
  # freeze_support): bench --app's start-up probe is a spawned process, as --watch's busy ones are
  out=$(HF_HUB_OFFLINE=1 QT_QPA_PLATFORM=offscreen "$APP" bench --app --model "$work/tiny" --device cpu --runs 1 --json) \
    || fail "hayai bench --app exited $?"
  "$PYTHON" -c 'import json, sys; r = json.loads(sys.argv[1].splitlines()[-1])["startup"]; assert r["ready"] and r["torch_imported"], r' \
    "$out" || fail "hayai bench --app printed: ${out:0:300}"
  echo "ok  hayai bench --app: its start-up probe spawned from the bundle"
  if command -v xvfb-run >/dev/null; then
    out=$(HF_HUB_OFFLINE=1 xvfb-run -a -s "-screen 0 1280x800x24" "$APP" bench --watch --model "$work/tiny" \
          --device cpu --max-new-tokens 8 --runs 1 --load 1 --json) || fail "hayai bench --watch exited $?"
    "$PYTHON" -c 'import json, sys; r = json.loads(sys.argv[1].splitlines()[-1])["loaded"]; assert r["busy_cpu_percent"] > 0, r' \
      "$out" || fail "hayai bench --watch printed: ${out:0:300}"
    echo "ok  hayai bench --watch --load: its busy process spawned from the bundle and ran"
  fi
}

if [ "${1:-}" != "--smoke" ]; then
  build
fi
smoke
echo "smoke test passed: $APP"
