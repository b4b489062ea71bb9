"""Fetch the released Hayai OCR files into the Hugging Face cache: `hayai model download|info|path`.

Only the four data files are fetched (`config.json`, `model.safetensors`, `tokenizer.json`,
`tokenizer_config.json`), never the repositories' `.py` files. v2.1 is pinned to one revision and
every file's size and SHA-256 (hayai-model.md §15) is checked; a mismatch deletes the file. nova has
no pinned revision yet: the newest commit is taken, and its commit and hashes are recorded in
`hayai-manifest.json` next to the files, marked UNVERIFIED.

Storage is the Hugging Face cache in its own layout (`models--OWNER--NAME/blobs`, `snapshots/COMMIT`,
`refs/main`), so `HF_HOME` / `HF_HUB_CACHE` move it, `hf cache scan` sees it and
`hf_hub_download(..., local_files_only=True)` finds the files. Nothing is written anywhere else.

Why not plain `hf_hub_download`: huggingface_hub 2.x deletes a partial file when a download stops,
so an interrupted 620 MB download would start over. We keep the partial as
`blobs/<etag>.incomplete` and continue it with an HTTP Range request (hub's `http_get`) on the
next run, behind the same per-file lock the hub uses.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
REQUIRED_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
)  # what the loader cannot do without
MANIFEST = "hayai-manifest.json"
VARIANTS = ("v2.1", "nova")


@dataclass(frozen=True)
class Release:
    variant: str
    repo_id: str
    revision: str | None  # a pinned commit, or None for the newest ("main")
    files: dict[str, tuple[int, str]] | None  # name -> (bytes, SHA-256) when pinned

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo_id}"


RELEASES = {
    "v2.1": Release(
        "v2.1",
        "JustANormalTinkerer/hayai-ocr-v2",
        "3608bb2075b9b39cb9f63e57251bca665de248cd",
        {
            "config.json": (
                342,
                "581b762f1dfd55d0108f3f84e3f157bc762524af37fb0c19a7172a18b75582e2",
            ),
            "model.safetensors": (
                622502784,
                "4c645b221db8428cda04991be234c18133bb8861142a3d87cba04c5099b02328",
            ),
            "tokenizer.json": (
                1247253,
                "f8a0a909c628a684fe463094614e236a8b1d3609e7770f77e7beafaf1056bf13",
            ),
            "tokenizer_config.json": (
                244,
                "6fb6c69afaedf1275872d3e62e276fd4467bd00da7a84cbbb5566a2cd28f58f6",
            ),
        },
    ),
    # No pinned revision yet (hayai-model.md §15): pin it here once its config.json has been read.
    "nova": Release("nova", "JustANormalTinkerer/hayai-ocr-v2.5-nova", None, None),
}

Progress = Callable[[str, int, int], None]


class DownloadError(RuntimeError):
    """A download failed: offline, not found, checksum mismatch, disk full, ..."""


class DownloadCancelled(DownloadError):
    """The caller set the `cancel` event; the partial file is kept and the next download resumes it."""


# ---- where things are -----------------------------------------------------------------------------


def release(variant: str) -> Release:
    try:
        return RELEASES[variant]
    except KeyError:
        raise ValueError(
            f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}"
        ) from None


def cache_root() -> Path:
    """The Hugging Face hub cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def repo_dir(variant: str) -> Path:
    return cache_root() / ("models--" + release(variant).repo_id.replace("/", "--"))


def _installed_commit(variant: str) -> str | None:
    rel = release(variant)
    if rel.revision:
        return rel.revision
    ref = repo_dir(variant) / "refs" / "main"
    try:
        return ref.read_text().strip() or None
    except OSError:
        return None


def installed_dir(variant: str = "v2.1") -> Path | None:
    """The folder of a complete download of `variant`, or None.

    Complete = the loader's files are there (for v2.1 at the pinned revision with the pinned sizes;
    hashes are checked when downloading, not on every start).
    """
    commit = _installed_commit(variant)
    if not commit:
        return None
    folder = repo_dir(variant) / "snapshots" / commit
    pinned = release(variant).files
    for name in REQUIRED_FILES:
        path = folder / name
        if not path.is_file():
            return None
        if pinned and path.stat().st_size != pinned[name][0]:
            return None
    return folder


def read_manifest(folder: Path) -> dict | None:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def missing_message(variant: str = "v2.1", offline: bool = False) -> str:
    """What to tell a user who has no weights: the files, where they go, and the two ways to get them."""
    rel = release(variant)
    revision = f"revision {rel.revision[:10]}" if rel.revision else "its newest revision"
    lines = [
        (
            "Offline, so the Hayai OCR %s weights cannot be downloaded now."
            if offline
            else "The Hayai OCR %s weights are not installed."
        )
        % variant,
        f"Needed: {', '.join(REQUIRED_FILES)} (tokenizer_config.json optional), "
        + ("622.5 MB," if rel.files else "about 600 MB,"),
        f"from {rel.url} ({revision}).",
        f"  - download them:  hayai model download --variant {variant}",
        "  - or put the files in any folder and pass it:  hayai --model DIR  (also hayai ocr --model DIR)",
    ]
    if rel.revision:
        lines.append(f"  - or copy them into {repo_dir(variant) / 'snapshots' / rel.revision}")
    if offline:
        lines.append(
            "Downloading needs network access to huggingface.co (and HF_HUB_OFFLINE unset)."
        )
    return "\n".join(lines)


# ---- downloading ------------------------------------------------------------------------------------


def _network_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    try:  # huggingface_hub 2.x talks HTTP through httpx2
        import httpx2

        errors.append(httpx2.TransportError)
    except ImportError:
        pass
    return tuple(errors)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _bar_class(
    filename: str, progress: Progress | None, cancel: threading.Event | None, show_bar: bool
):
    """A tqdm class for hub's `http_get`: draws the terminal bar, reports progress, honours `cancel`."""
    from tqdm.auto import tqdm

    class Bar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = not show_bar
            kwargs["desc"] = filename
            kwargs.pop("name", None)
            super().__init__(*args, **kwargs)
            self.bytes_done = int(kwargs.get("initial") or 0)
            self.bytes_total = int(kwargs.get("total") or 0)

        def update(self, n=1):
            # Checked before the chunk is written, so the partial file stays a clean prefix.
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled(
                    f"download cancelled during {filename}; run it again to resume"
                )
            self.bytes_done += n
            if progress is not None:
                progress(filename, self.bytes_done, self.bytes_total)
            return super().update(n)

    return Bar


def _link_into_snapshot(blob: Path, target: Path) -> None:
    """Place a finished blob at snapshots/COMMIT/NAME as the hub does: a relative symlink, else a move."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    try:
        target.symlink_to(os.path.relpath(blob, target.parent))
    except (
        OSError
    ):  # no symlinks (Windows without developer mode): the file itself lives in the snapshot
        os.replace(blob, target)


def _remove(path: Path) -> None:
    """Delete a snapshot file and, when it is a link, the blob it points to."""
    if path.is_symlink():
        blob = path.resolve()
        path.unlink()
        blob.unlink(missing_ok=True)
    else:
        path.unlink(missing_ok=True)


def _mismatch(name: str, expected: tuple[int, str], size: int, digest: str) -> str | None:
    if size != expected[0]:
        return f"{name}: size {size} bytes, expected {expected[0]}"
    if digest != expected[1]:
        return f"{name}: SHA-256 {digest}, expected {expected[1]}"
    return None


def _fetch(
    rel: Release, name: str, commit: str, progress, cancel, show_bar, log
) -> tuple[int, str]:
    """Download one file of `commit` into the cache (resuming a partial one); return (bytes, SHA-256)."""
    from huggingface_hub.file_download import get_hf_file_metadata, hf_hub_url, http_get
    from huggingface_hub.utils import WeakFileLock, build_hf_headers

    endpoint = os.environ.get("HF_ENDPOINT") or None
    url = hf_hub_url(rel.repo_id, name, revision=commit, endpoint=endpoint)
    headers = build_hf_headers()
    meta = get_hf_file_metadata(url, headers=headers, endpoint=endpoint)
    if rel.files and meta.size is not None and meta.size != rel.files[name][0]:
        # Caught before spending the bandwidth: the Hub does not serve the pinned file.
        raise DownloadError(
            f"{rel.repo_id} serves {name} with {meta.size} bytes at {commit[:10]}, "
            f"expected {rel.files[name][0]}; nothing was downloaded."
        )
    etag = meta.etag or hashlib.sha256(f"{commit}/{name}".encode()).hexdigest()
    folder = repo_dir(rel.variant)
    blob = folder / "blobs" / etag
    partial = blob.with_name(etag + ".incomplete")
    blob.parent.mkdir(parents=True, exist_ok=True)
    lock = cache_root() / ".locks" / folder.name / f"{etag}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)

    with WeakFileLock(lock):
        if blob.exists():  # fetched before (by us or by the hub) but not linked into this snapshot
            size, digest = blob.stat().st_size, sha256_of(blob)
            wrong = rel.files and _mismatch(name, rel.files[name], size, digest)
            if not wrong:
                _link_into_snapshot(blob, folder / "snapshots" / commit / name)
                if progress is not None:
                    progress(name, size, size)
                return size, digest
            blob.unlink()
            log(f"deleted {blob}: {wrong}; downloading it again")
        done = partial.stat().st_size if partial.exists() else 0
        if (
            meta.size is not None and done > meta.size
        ):  # cannot be a prefix of this file: start over
            partial.unlink()
            done = 0
        if done:
            log(f"resuming {name} at {done:,} of {meta.size or 0:,} bytes")
        with open(partial, "ab") as f:
            http_get(
                meta.location or url,
                f,
                resume_size=done,
                headers=headers,
                expected_size=meta.size,
                displayed_filename=name,
                tqdm_class=_bar_class(name, progress, cancel, show_bar),
            )
        size, digest = partial.stat().st_size, sha256_of(partial)
        wrong = rel.files and _mismatch(name, rel.files[name], size, digest)
        if wrong:
            partial.unlink()
            raise DownloadError(
                f"checksum mismatch, {wrong}; the file was deleted. Run the download again."
            )
        os.replace(partial, blob)
        _link_into_snapshot(blob, folder / "snapshots" / commit / name)
    return size, digest


def _resolve_commit(rel: Release) -> str:
    """The commit to download: the pinned one, or the one `main` points at now."""
    if rel.revision:
        return rel.revision
    from huggingface_hub.file_download import get_hf_file_metadata, hf_hub_url

    endpoint = os.environ.get("HF_ENDPOINT") or None
    meta = get_hf_file_metadata(
        hf_hub_url(rel.repo_id, "config.json", revision="main", endpoint=endpoint),
        endpoint=endpoint,
    )
    if not meta.commit_hash:
        raise DownloadError(f"{rel.repo_id} did not say which commit `main` is")
    return meta.commit_hash


def download(
    variant: str = "v2.1",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    *,
    show_bar: bool | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Fetch (or complete, or re-verify) the four data files of `variant`; return their folder.

    `progress(filename, done_bytes, total_bytes)` is called from this (the downloading) thread;
    setting `cancel` raises DownloadCancelled (the partial file is kept and resumed next time).
    A terminal bar is drawn when no `progress` callback is given (or `show_bar=True`).
    """
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    rel = release(variant)
    show_bar = progress is None if show_bar is None else show_bar
    log = log or (lambda message: None)
    try:
        commit = _resolve_commit(rel)
        folder = repo_dir(variant) / "snapshots" / commit
        known = (read_manifest(folder) or {}).get("files", {})
        files: dict[str, dict] = {}
        for name in DATA_FILES:
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled("download cancelled")
            path = folder / name
            if path.is_file():
                size = path.stat().st_size
                recorded = known.get(name, {})
                # A file we verified before keeps its recorded hash; anything else is hashed now.
                digest = recorded.get("sha256") if recorded.get("size") == size else sha256_of(path)
                wrong = rel.files and _mismatch(name, rel.files[name], size, digest)
                if not wrong:
                    files[name] = {"size": size, "sha256": digest}
                    if progress is not None:
                        progress(name, size, size)
                    continue
                _remove(path)
                log(f"deleted {path}: {wrong}; downloading it again")
            size, digest = _fetch(rel, name, commit, progress, cancel, show_bar, log)
            files[name] = {"size": size, "sha256": digest}
    except (DownloadError, ValueError):
        raise
    except (OfflineModeIsEnabled, *_network_errors()) as e:
        # Offline, a pinned download that is complete never gets here (it needs no network);
        # an unpinned one cannot learn the newest commit, so the installed one stays.
        installed = installed_dir(variant)
        if installed is not None and not rel.revision:
            log(f"cannot reach the Hub, keeping the installed {variant} ({installed.name})")
            return installed
        reason = (
            ""
            if isinstance(e, OfflineModeIsEnabled)
            else f"cannot reach the Hugging Face Hub: {e}\n"
        )
        raise DownloadError(reason + missing_message(variant, offline=True)) from None
    except HfHubHTTPError as e:
        raise DownloadError(f"the Hub refused {rel.repo_id}: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise DownloadError(f"could not write the download into {repo_dir(variant)}: {e}") from None

    if not rel.revision:  # remember which commit `main` was, as the hub does
        ref = repo_dir(variant) / "refs" / "main"
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(commit)
    _write_manifest(rel, commit, folder, files)
    return folder


def _write_manifest(rel: Release, commit: str, folder: Path, files: dict[str, dict]) -> None:
    manifest = {
        "variant": rel.variant,
        "repo_id": rel.repo_id,
        "revision": commit,
        "pinned": rel.revision is not None,
        "verified": rel.files is not None,
        "verification": "size and SHA-256 of every file matched the values pinned in model/download.py"
        if rel.files
        else "UNVERIFIED: no pinned hashes for this variant; the hashes below were recorded at download",
        "downloaded_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "files": files,
    }
    tmp = folder / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)


# ---- `hayai model download|info|path` -------------------------------------------------------------


def _human(size: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size} B"


def describe(variant: str) -> str:
    """The `hayai model info` paragraph for one variant."""
    rel = release(variant)
    folder = installed_dir(variant)
    if folder is None:
        return f"{variant}: not installed (hayai model download --variant {variant})"
    manifest = read_manifest(folder) or {}
    if manifest.get("verified"):
        verified = f"yes: SHA-256 matched the pinned values ({manifest.get('downloaded_at', '?')})"
    elif manifest:
        verified = (
            f"no: UNVERIFIED, hashes recorded at download ({manifest.get('downloaded_at', '?')})"
        )
    else:
        verified = "not checked: files placed by another tool; `hayai model download` verifies them"
    sizes = ", ".join(
        f"{name} {_human((folder / name).stat().st_size)}"
        for name in DATA_FILES
        if (folder / name).is_file()
    )
    pin = " (pinned)" if rel.revision else " (newest when downloaded)"
    return "\n".join(
        [
            f"{variant}: installed",
            f"  folder:   {folder}",
            f"  repo:     {rel.repo_id}",
            f"  revision: {folder.name}{pin}",
            f"  verified: {verified}",
            f"  files:    {sizes}",
        ]
    )


def cli(action: str, variant: str = "v2.1") -> int:
    """`hayai model download|info|path [--variant]`; returns the exit code."""
    if action == "path":
        folder = installed_dir(variant)
        if folder is None:
            print(missing_message(variant), file=sys.stderr)
            return 1
        print(folder)
        return 0
    if action == "info":
        print(f"Hugging Face cache: {cache_root()}  (HF_HOME or HF_HUB_CACHE move it)")
        for name in VARIANTS:
            print(describe(name))
        return 0
    if action != "download":
        print(f"unknown action {action!r}: use download, info or path", file=sys.stderr)
        return 2

    rel = release(variant)
    revision = rel.revision or "newest revision"
    print(
        f"Downloading Hayai OCR {variant} from {rel.repo_id} ({revision}) into {cache_root()}",
        file=sys.stderr,
    )
    try:
        folder = download(variant, log=lambda message: print(message, file=sys.stderr))
    except DownloadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "interrupted; the partial file is kept, run the same command to resume", file=sys.stderr
        )
        return 130
    manifest = read_manifest(folder) or {}
    state = (
        "SHA-256 verified"
        if manifest.get("verified")
        else f"UNVERIFIED, revision {folder.name} recorded"
    )
    print(f"Installed in {folder} ({state})", file=sys.stderr)
    print(folder)
    return 0


__all__ = [
    "DATA_FILES",
    "REQUIRED_FILES",
    "RELEASES",
    "DownloadCancelled",
    "DownloadError",
    "cli",
    "download",
    "installed_dir",
    "missing_message",
    "describe",
    "cache_root",
]
