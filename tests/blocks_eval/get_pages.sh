#!/usr/bin/env bash
# Copies the evaluation's pages (sources.json) out of a clone of their repository, at the pinned
# commit, and checks each file's SHA-256. Nothing here touches the network: clone it first, e.g.
#   git clone https://github.com/mantra-inc/open-mantra-dataset
# usage: tests/blocks_eval/get_pages.sh CLONE [DEST]
#   DEST defaults to $HAYAI_BLOCKS_EVAL_PAGES, else ~/.cache/hayai/blocks_eval_pages (evaluate.py's
#   default). The pages are CC BY-NC 4.0: keep them out of this repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
clone="${1:?usage: get_pages.sh CLONE [DEST]}"
dest="${2:-${HAYAI_BLOCKS_EVAL_PAGES:-$HOME/.cache/hayai/blocks_eval_pages}}"
mkdir -p "$dest"
python3 -c '
import json, sys
for page, s in json.load(open(sys.argv[1])).items():
    print(page, s["commit"], s["path"], s["sha256"])
' "$here/sources.json" | while read -r page commit path sha; do
  git -C "$clone" show "$commit:$path" > "$dest/$page.jpg.part"
  echo "$sha  $dest/$page.jpg.part" | sha256sum --check --quiet
  mv "$dest/$page.jpg.part" "$dest/$page.jpg"
done
echo "pages in $dest"
