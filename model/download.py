"""Fetch the released Hayai OCR files into the Hugging Face cache (`hayai model download|info|path`).

Only the four data files are fetched (`config.json`, `model.safetensors`, `tokenizer.json`,
`tokenizer_config.json`), never the repositories' `.py` files. v2.1 is pinned to one revision and
every file's size and SHA-256 (docs/model.md, "Release files and hashes") is checked; a mismatch deletes the
file. nova has no pinned revision yet: the newest commit is taken, and its commit and hashes are
recorded in `hayai-manifest.json` next to the files, marked UNVERIFIED.

Storage is the Hugging Face cache, managed by huggingface_hub's public API: `hf_hub_download` places
every file (blob, snapshot link, `refs/main`), `try_to_load_from_cache` finds them, and
`scan_cache_dir` lists what the cache holds. So `HF_HOME` / `HF_HUB_CACHE` move it, `hf cache scan`
sees it, and nothing is written anywhere else. Nothing here prints: the command line (app/engine_cli/model.py)
and the model dialog show what `progress` and `log` report.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from model.config import DATA_FILES, DEFAULT_VARIANT, OPTIONAL_FILES, REQUIRED_FILES, VARIANTS
from model.errors import DownloadCancelled, DownloadError
from model.progress import Progress

MANIFEST = "hayai-manifest.json"
RESUME_ATTEMPTS = 5  # dropped connections survived within one download of one file


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
    # No pinned revision yet (docs/model.md, "Release files and hashes"): pin it here once its config.json
    # has been read.
    "nova": Release("nova", "JustANormalTinkerer/hayai-ocr-v2.5-nova", None, None),
}


UNPINNED_SIZE = 600_000_000  # a release whose files are not pinned yet: about this much


def size_text(n: int) -> str:
    """The one way a size is written: decimal units, whole numbers ("342 B", "1 MB", "624 MB")."""
    if n >= 1e9:
        return f"{n / 1e9:.1f} GB"
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.0f} {unit}"
    return f"{n} B"


def download_size(variant: str) -> str:
    """What `hayai model download` fetches for `variant`, all its files together ("624 MB")."""
    files = release(variant).files
    if not files:
        return f"about {size_text(UNPINNED_SIZE)}"
    return size_text(sum(size for size, _ in files.values()))


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


def _endpoint() -> str | None:
    # read per call: huggingface_hub reads it at import
    return os.environ.get("HF_ENDPOINT") or None


def installed_dir(variant: str = DEFAULT_VARIANT) -> Path | None:
    """The folder of a complete download of `variant`, or None.

    Complete = the loader's files are in the cache (for v2.1 at the pinned revision with the pinned
    sizes; hashes are checked when downloading, not on every start). nova: the revision `main` was
    when it was downloaded.
    """
    from huggingface_hub import try_to_load_from_cache

    rel = release(variant)
    folder = None
    for name in REQUIRED_FILES:
        found = try_to_load_from_cache(
            rel.repo_id, name, cache_dir=cache_root(), revision=rel.revision
        )
        if not isinstance(found, str):  # None, or the hub's "known not to exist" marker
            return None
        path = Path(found)
        if rel.files and path.stat().st_size != rel.files[name][0]:
            return None
        folder = path.parent
    return folder


def cached_revisions(variant: str) -> dict[str, int]:
    """Every revision of `variant` in the cache → its files' bytes on disk (what `hf cache` would list)."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    try:
        scan = scan_cache_dir(cache_root())
    except CacheNotFound:
        return {}
    repo_id = release(variant).repo_id
    return {
        revision.commit_hash: revision.size_on_disk
        for repo in scan.repos
        if repo.repo_id == repo_id and repo.repo_type == "model"
        for revision in repo.revisions
    }


def read_manifest(folder: Path) -> dict | None:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def missing_message(variant: str = DEFAULT_VARIANT, offline: bool = False) -> str:
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
        f"Needed: {', '.join(REQUIRED_FILES)} ({', '.join(OPTIONAL_FILES)} optional), "
        + f"{download_size(variant)},",
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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _mismatch(name: str, expected: tuple[int, str], size: int, digest: str) -> str | None:
    if size != expected[0]:
        return f"{name}: size {size} bytes, expected {expected[0]}"
    if digest != expected[1]:
        return f"{name}: SHA-256 {digest}, expected {expected[1]}"
    return None


def _remove(path: Path) -> None:
    """Delete a snapshot file and, when it is a link, the blob it points to."""
    if path.is_symlink():
        blob = path.resolve()
        path.unlink()
        blob.unlink(missing_ok=True)
    else:
        path.unlink(missing_ok=True)


def _resume(
    url: str, partial: Path, expected: int | None, name: str, progress, cancel, log
) -> None:
    """Complete `partial` from `url` with HTTP Range requests, keeping whatever is already there.

    Our own, because huggingface_hub cannot do it: 2.x downloads into a file name unique to the
    process and deletes it when the download stops (an error, Ctrl+C, the dialog's Cancel), so an
    interrupted 620 MB download would start over. This keeps `blobs/<etag>.incomplete` and continues
    it, on the next run and after a dropped connection.
    """
    import httpx2
    from huggingface_hub import constants, get_session, hf_raise_for_status
    from huggingface_hub.utils import build_hf_headers

    for attempt in range(RESUME_ATTEMPTS):
        done = partial.stat().st_size if partial.exists() else 0
        headers = build_hf_headers()
        if done:
            headers["Range"] = f"bytes={done}-"
            log(f"resuming {name} at {done:,} of {expected or 0:,} bytes")
        try:
            with get_session().stream(
                "GET",
                url,
                headers=headers,
                follow_redirects=True,
                timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT,
            ) as response:
                hf_raise_for_status(response)
                if response.status_code != 206:  # the server ignored the Range: start over
                    done = 0
                with open(partial, "ab" if done else "wb") as f:
                    for chunk in response.iter_bytes(constants.DOWNLOAD_CHUNK_SIZE):
                        # Checked before the chunk is written, so the partial file stays a clean prefix.
                        if cancel is not None and cancel.is_set():
                            raise DownloadCancelled(
                                f"download cancelled during {name}; run it again to resume"
                            )
                        f.write(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(name, done, expected or 0)
            return
        except httpx2.TransportError as e:  # a dropped connection, a stalled read
            if attempt == RESUME_ATTEMPTS - 1:
                raise
            log(f"connection lost during {name} ({e}); trying again")


def _fetch(rel: Release, name: str, commit: str, progress, cancel, log) -> tuple[int, str]:
    """Download one file of `commit` into the cache (resuming a partial one); return (bytes, SHA-256)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.utils import WeakFileLock

    url = hf_hub_url(rel.repo_id, name, revision=commit, endpoint=_endpoint())
    meta = get_hf_file_metadata(url, endpoint=_endpoint())
    if rel.files and meta.size is not None and meta.size != rel.files[name][0]:
        # Caught before spending the bandwidth: the Hub does not serve the pinned file.
        raise DownloadError(
            f"{rel.repo_id} serves {name} with {meta.size} bytes at {commit[:10]}, "
            f"expected {rel.files[name][0]}; nothing was downloaded."
        )
    if not meta.etag:
        raise DownloadError(f"{rel.repo_id} did not say which version of {name} it serves")
    folder = repo_dir(rel.variant)
    blob = folder / "blobs" / meta.etag
    partial = blob.with_name(meta.etag + ".incomplete")
    blob.parent.mkdir(parents=True, exist_ok=True)
    lock = cache_root() / ".locks" / folder.name / f"{meta.etag}.lock"  # the hub's own lock file
    lock.parent.mkdir(parents=True, exist_ok=True)

    with WeakFileLock(lock):
        if blob.exists():  # fetched before (by us or by the hub) but not linked into this snapshot
            size, digest = blob.stat().st_size, sha256_of(blob)
            wrong = rel.files and _mismatch(name, rel.files[name], size, digest)
            if wrong:
                blob.unlink()
                log(f"deleted {blob}: {wrong}; downloading it again")
        if not blob.exists():
            if meta.size is not None and partial.exists() and partial.stat().st_size > meta.size:
                partial.unlink()  # cannot be a prefix of this file: start over
            _resume(meta.location or url, partial, meta.size, name, progress, cancel, log)
            size, digest = partial.stat().st_size, sha256_of(partial)
            wrong = rel.files and _mismatch(name, rel.files[name], size, digest)
            if wrong:
                partial.unlink()
                raise DownloadError(
                    f"checksum mismatch, {wrong}; the file was deleted. Run the download again."
                )
            os.replace(partial, blob)
    # The blob is complete and verified: the hub links it into snapshots/COMMIT/ (a relative symlink,
    # or the file itself where symlinks are not allowed) without downloading anything.
    hf_hub_download(rel.repo_id, name, revision=commit, endpoint=_endpoint())
    if progress is not None:
        progress(name, size, size)
    return size, digest


def _resolve_commit(rel: Release) -> str:
    """The commit to download: the pinned one, or the one `main` points at now.

    For `main`, the hub fetches config.json (342 bytes) and records the commit in `refs/main`;
    offline it answers from the cache, so an installed nova stays usable.
    """
    if rel.revision:
        return rel.revision
    from huggingface_hub import hf_hub_download

    path = hf_hub_download(rel.repo_id, "config.json", revision="main", endpoint=_endpoint())
    return Path(path).parent.name


def _network_errors() -> tuple[type[BaseException], ...]:
    import httpx2
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    # LocalEntryNotFoundError: the hub could not be reached and the file is not in the cache.
    return (
        OfflineModeIsEnabled,
        LocalEntryNotFoundError,
        httpx2.TransportError,
        ConnectionError,
        TimeoutError,
    )


def download(
    variant: str = DEFAULT_VARIANT,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    *,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Fetch (or complete, or re-verify) the four data files of `variant`; return their folder.

    `progress(filename, done_bytes, total_bytes)` and `log(message)` are called from this (the
    downloading) thread; setting `cancel` raises DownloadCancelled (the partial file is kept and
    resumed next time). DownloadError for everything else, with a message for the user.
    """
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError

    rel = release(variant)
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
            size, digest = _fetch(rel, name, commit, progress, cancel, log)
            files[name] = {"size": size, "sha256": digest}
    except (DownloadError, ValueError):
        raise
    except _network_errors() as e:
        # A pinned download that is complete never gets here (it needs no network).
        reason = (
            ""  # HF_HUB_OFFLINE: the message below says it all
            if constants.HF_HUB_OFFLINE
            else f"cannot reach the Hugging Face Hub: {str(e).splitlines()[0]}\n"
        )
        raise DownloadError(reason + missing_message(variant, offline=True)) from None
    except HfHubHTTPError as e:
        raise DownloadError(f"the Hub refused {rel.repo_id}: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise DownloadError(f"could not write the download into {repo_dir(variant)}: {e}") from None
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


__all__ = [
    "RELEASES",
    "cache_root",
    "cached_revisions",
    "download",
    "installed_dir",
    "missing_message",
    "read_manifest",
]
