"""`model/download.py` against a fake Hugging Face Hub served on 127.0.0.1 (no network).

The fake speaks the few things huggingface_hub needs: HEAD/GET on /OWNER/NAME/resolve/REV/FILE with
X-Repo-Commit, ETag (the SHA-256, as the Hub does for LFS files), Content-Length and Range requests.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from pathlib import Path

import pytest

huggingface_hub = pytest.importorskip("huggingface_hub")
from huggingface_hub import constants as hub_constants  # noqa: E402

from app.cli import main as hayai  # noqa: E402
from model import download as dl  # noqa: E402
from model.config import DATA_FILES, REQUIRED_FILES  # noqa: E402
from model.errors import DownloadCancelled, DownloadError  # noqa: E402

COMMIT_V21 = "3608bb2075b9b39cb9f63e57251bca665de248cd"
COMMIT_NOVA = "e34d7755" + "0" * 32


def fake_files(tag: str) -> dict[str, bytes]:
    return {
        "config.json": f'{{"model_type": "hayai", "tag": "{tag}"}}'.encode(),
        "model.safetensors": bytes(range(256)) * 40 + tag.encode(),  # ~10 kB
        "tokenizer.json": b'{"version": "1.0"}',
        "tokenizer_config.json": b"{}",
        "modeling_hayai.py": b"raise SystemExit('never download or run me')",
    }


class FakeHub:
    def __init__(self):
        self.repos = {
            "JustANormalTinkerer/hayai-ocr-v2": (COMMIT_V21, fake_files("v2.1")),
            "JustANormalTinkerer/hayai-ocr-v2.5-nova": (COMMIT_NOVA, fake_files("nova")),
        }
        self.requests: list[tuple[str, str, str | None]] = []  # (method, filename, Range header)
        self.cut_after: dict[
            str, int
        ] = {}  # filename -> bytes sent before the first GET is dropped
        self.ignore_range = False  # answer every GET with the whole file (200), as some proxies do
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self.serve(body=False)

            def do_GET(self):
                self.serve(body=True)

            def serve(self, body: bool):
                parts = self.path.split("/")  # '', owner, name, 'resolve', rev, file
                repo = "/".join(parts[1:3])
                filename = "/".join(parts[5:])
                hub.requests.append((self.command, filename, self.headers.get("Range")))
                if repo not in hub.repos or len(parts) < 6 or parts[3] != "resolve":
                    return self.fail(404, "RepoNotFound")
                commit, files = hub.repos[repo]
                if parts[4] not in (commit, "main") or filename not in files:
                    return self.fail(404, "EntryNotFound")
                data = files[filename]
                start = 0
                if body and self.headers.get("Range") and not hub.ignore_range:
                    start = int(self.headers["Range"].split("=")[1].split("-")[0])
                self.send_response(206 if start else 200)
                self.send_header("X-Repo-Commit", commit)
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(data) - start))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if not body:
                    return
                cut = hub.cut_after.pop(filename, None)
                if cut is not None:  # a dropped connection half way through the body
                    self.wfile.write(data[start:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data[start:])

            def fail(self, status, code):
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def gets(self, filename: str | None = None):
        return [
            r for r in self.requests if r[0] == "GET" and (filename is None or r[1] == filename)
        ]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def pinned_to(files: dict[str, bytes]) -> dict[str, tuple[int, str]]:
    return {
        name: (len(data), hashlib.sha256(data).hexdigest())
        for name, data in files.items()
        if name in DATA_FILES
    }


@pytest.fixture
def hub(tmp_path, monkeypatch):
    fake = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setattr(
        hub_constants, "HF_HUB_OFFLINE", False
    )  # the fake is local: "online" is safe here
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(hub_constants, "DOWNLOAD_CHUNK_SIZE", 1024)  # several chunks per fake file
    # The real pinned hashes are in docs/model.md; the fake files get their own.
    v21 = dl.RELEASES["v2.1"]
    monkeypatch.setitem(
        dl.RELEASES,
        "v2.1",
        dl.Release(v21.variant, v21.repo_id, v21.revision, pinned_to(fake.repos[v21.repo_id][1])),
    )
    yield fake
    fake.close()


def snapshot(tmp_path, repo, commit) -> Path:
    return tmp_path / "hub" / ("models--" + repo.replace("/", "--")) / "snapshots" / commit


def test_download_verifies_and_installs_in_hub_layout(hub, tmp_path, capsys):
    # GIVEN an empty cache WHEN v2.1 is downloaded with a progress callback
    seen = []
    folder = dl.download(
        "v2.1", progress=lambda name, done, total: seen.append((name, done, total))
    )
    # THEN the four data files are in the pinned snapshot, byte for byte, and nothing else was fetched
    assert folder == snapshot(tmp_path, "JustANormalTinkerer/hayai-ocr-v2", COMMIT_V21)
    files = hub.repos["JustANormalTinkerer/hayai-ocr-v2"][1]
    for name in DATA_FILES:
        assert (folder / name).read_bytes() == files[name]
        assert (folder / name).is_symlink()  # the hub's own layout: snapshot links to blobs/<etag>
    assert not (folder / "modeling_hayai.py").exists()
    assert all(r[1] != "modeling_hayai.py" for r in hub.requests)
    assert dl.installed_dir("v2.1") == folder
    manifest = dl.read_manifest(folder)
    assert manifest["verified"] is True and manifest["revision"] == COMMIT_V21
    assert (
        manifest["files"]["model.safetensors"]["sha256"]
        == hashlib.sha256(files["model.safetensors"]).hexdigest()
    )
    # progress: several calls for the big file, ending at its full size
    big = [s for s in seen if s[0] == "model.safetensors"]
    assert len(big) > 3 and big[-1][1] == big[-1][2] == len(files["model.safetensors"])
    # the hub's own lookup finds our files
    found = huggingface_hub.try_to_load_from_cache(
        "JustANormalTinkerer/hayai-ocr-v2",
        "config.json",
        cache_dir=str(tmp_path / "hub"),
        revision=COMMIT_V21,
    )
    assert Path(found).read_bytes() == files["config.json"]
    # nothing written outside the cache, and nothing printed: printing is the command line's job
    assert {p.name for p in tmp_path.iterdir()} == {"hub"}
    assert capsys.readouterr() == ("", "")


def test_second_download_needs_no_network(hub, monkeypatch):
    folder = dl.download("v2.1")
    hub.requests.clear()
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    assert dl.download("v2.1") == folder  # verified from disk, no request at all
    assert hub.requests == []


def test_checksum_mismatch_deletes_the_file_and_fails(hub, tmp_path, monkeypatch, capsys):
    # GIVEN a pinned hash that the served model.safetensors does not have
    pinned = dict(dl.RELEASES["v2.1"].files)
    pinned["model.safetensors"] = (pinned["model.safetensors"][0], "0" * 64)
    monkeypatch.setitem(
        dl.RELEASES, "v2.1", dl.Release("v2.1", dl.RELEASES["v2.1"].repo_id, COMMIT_V21, pinned)
    )
    # WHEN it is downloaded through the CLI
    code = hayai(["model", "download", "--variant", "v2.1"])
    # THEN exit 1, the message names the file and says it was deleted, and no copy is left anywhere
    err = capsys.readouterr().err
    assert code == 1
    assert "checksum mismatch" in err and "model.safetensors" in err and "deleted" in err
    repo = tmp_path / "hub" / "models--JustANormalTinkerer--hayai-ocr-v2"
    content = hub.repos["JustANormalTinkerer/hayai-ocr-v2"][1]["model.safetensors"]
    leftovers = [p for p in repo.rglob("*") if p.is_file() and p.stat().st_size == len(content)]
    assert leftovers == []
    assert not (repo / "snapshots" / COMMIT_V21 / "model.safetensors").exists()
    assert dl.installed_dir("v2.1") is None


def test_corrupt_file_already_in_cache_is_replaced(hub, capsys):
    folder = dl.download("v2.1")
    (folder / "model.safetensors").resolve().write_bytes(b"x" * 10)  # truncated on disk
    dl.read_manifest(folder)  # manifest says another size, so the file is re-hashed
    assert hayai(["model", "download", "--variant", "v2.1"]) == 0
    assert "deleted" in capsys.readouterr().err
    assert (folder / "model.safetensors").read_bytes() == hub.repos[
        "JustANormalTinkerer/hayai-ocr-v2"
    ][1]["model.safetensors"]


def test_resume_after_a_dropped_connection(hub):
    # GIVEN a server that drops the first transfer of the weights after 3000 bytes
    hub.cut_after["model.safetensors"] = 3000
    folder = dl.download("v2.1")
    # THEN the transfer continued where the written data ended (a Range request within those 3000
    # bytes: the torn last chunk is not kept), and the file is intact and verified
    ranges = [r[2] for r in hub.gets("model.safetensors")]
    assert ranges[0] is None and len(ranges) == 2
    assert 0 < int(ranges[1].removeprefix("bytes=").rstrip("-")) <= 3000
    assert (folder / "model.safetensors").read_bytes() == hub.repos[
        "JustANormalTinkerer/hayai-ocr-v2"
    ][1]["model.safetensors"]


def test_cancel_keeps_the_partial_and_the_next_run_resumes(hub, tmp_path):
    # GIVEN a download cancelled after the weights' second chunk
    cancel = threading.Event()

    def progress(name, done, total):
        if name == "model.safetensors" and done >= 2048:
            cancel.set()

    with pytest.raises(DownloadCancelled):
        dl.download("v2.1", progress=progress, cancel=cancel)
    partials = list((tmp_path / "hub").rglob("*.incomplete"))
    assert len(partials) == 1 and partials[0].stat().st_size == 2048
    assert dl.installed_dir("v2.1") is None
    # WHEN it runs again THEN it asks only for the rest and ends complete
    folder = dl.download("v2.1")
    assert hub.gets("model.safetensors")[-1][2] == "bytes=2048-"
    assert (folder / "model.safetensors").read_bytes() == hub.repos[
        "JustANormalTinkerer/hayai-ocr-v2"
    ][1]["model.safetensors"]
    assert list((tmp_path / "hub").rglob("*.incomplete")) == []


def test_partial_from_an_earlier_process_is_resumed(hub, tmp_path):
    content = hub.repos["JustANormalTinkerer/hayai-ocr-v2"][1]["model.safetensors"]
    blobs = tmp_path / "hub" / "models--JustANormalTinkerer--hayai-ocr-v2" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / (hashlib.sha256(content).hexdigest() + ".incomplete")).write_bytes(content[:5000])
    folder = dl.download("v2.1")
    assert [r[2] for r in hub.gets("model.safetensors")] == ["bytes=5000-"]
    assert (folder / "model.safetensors").read_bytes() == content


def test_nova_takes_the_newest_commit_and_is_unverified(hub, tmp_path, capsys):
    assert hayai(["model", "download", "--variant", "nova"]) == 0
    folder = snapshot(tmp_path, "JustANormalTinkerer/hayai-ocr-v2.5-nova", COMMIT_NOVA)
    assert capsys.readouterr().out.strip() == str(folder)
    manifest = dl.read_manifest(folder)
    assert manifest["verified"] is False and "UNVERIFIED" in manifest["verification"]
    assert manifest["revision"] == COMMIT_NOVA
    files = hub.repos["JustANormalTinkerer/hayai-ocr-v2.5-nova"][1]
    assert (
        manifest["files"]["tokenizer.json"]["sha256"]
        == hashlib.sha256(files["tokenizer.json"]).hexdigest()
    )
    assert dl.installed_dir("nova") == folder
    assert hayai(["model", "info", "--variant", "nova"]) == 0
    out = capsys.readouterr().out
    assert "nova: installed" in out and COMMIT_NOVA in out and "UNVERIFIED" in out
    assert "v2.1: not installed" in out


def test_nova_offline_keeps_the_installed_revision(hub, monkeypatch):
    folder = dl.download("nova")
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    assert dl.download("nova") == folder


def test_info_and_path(hub, tmp_path, capsys):
    assert hayai(["model", "path", "--variant", "v2.1"]) == 1
    err = capsys.readouterr().err
    assert "hayai model download" in err and "--model DIR" in err
    folder = dl.download("v2.1")
    assert hayai(["model", "path", "--variant", "v2.1"]) == 0
    assert capsys.readouterr().out.strip() == str(folder)
    assert hayai(["model", "info", "--variant", "v2.1"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "hub") in out
    assert (
        "v2.1: installed" in out
        and str(folder) in out
        and COMMIT_V21 in out
        and "verified: yes" in out
    )
    assert "nova: not installed" in out


def test_offline_message(hub, tmp_path, monkeypatch, capsys):
    # GIVEN HF_HUB_OFFLINE=1 and no weights
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    # WHEN downloading THEN a clear message: which files, where, the --model alternative; exit 1
    with pytest.raises(DownloadError) as caught:
        dl.download("v2.1")
    message = str(caught.value)
    for needed in (
        "Offline",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "--model DIR",
        "hayai model download",
        COMMIT_V21,
    ):
        assert needed in message
    assert hayai(["model", "download", "--variant", "v2.1"]) == 1
    assert "Traceback" not in capsys.readouterr().err
    assert hub.requests == []
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # nothing written


def test_nova_offline_and_not_installed_says_so(hub, monkeypatch):
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(DownloadError) as caught:
        dl.download("nova")
    message = str(caught.value)
    assert message.startswith("Offline, so the Hayai OCR nova weights") and "--model DIR" in message
    assert hub.requests == []


def test_hub_errors_become_messages(hub):
    del hub.repos["JustANormalTinkerer/hayai-ocr-v2.5-nova"]
    with pytest.raises(
        DownloadError, match="the Hub refused JustANormalTinkerer/hayai-ocr-v2.5-nova"
    ):
        dl.download("nova")


def test_wrong_size_on_the_hub_is_refused_before_downloading(hub, monkeypatch):
    pinned = dict(dl.RELEASES["v2.1"].files)
    pinned["model.safetensors"] = (622502784, pinned["model.safetensors"][1])
    monkeypatch.setitem(
        dl.RELEASES, "v2.1", dl.Release("v2.1", dl.RELEASES["v2.1"].repo_id, COMMIT_V21, pinned)
    )
    with pytest.raises(DownloadError, match="expected 622502784; nothing was downloaded"):
        dl.download("v2.1")
    assert hub.gets("model.safetensors") == []


def test_unreachable_hub(hub, monkeypatch):
    hub.close()  # nothing listens on that port any more
    with pytest.raises(DownloadError, match="cannot reach the Hugging Face Hub"):
        dl.download("v2.1")


def test_every_variant_has_a_release():
    from model.config import VARIANTS

    assert tuple(dl.RELEASES) == VARIANTS
    assert all(dl.release(v).variant == v for v in VARIANTS)


def test_missing_message_and_unknown_variant():
    message = dl.missing_message("nova")
    assert "not installed" in message and "--variant nova" in message and "--model DIR" in message
    message = dl.missing_message(
        "v2.1"
    )  # the pinned release also names the cache folder it is looked up in
    assert "624 MB" in message and str(Path("snapshots") / COMMIT_V21) in message
    with pytest.raises(ValueError, match="unknown variant"):
        dl.installed_dir("v9")


def test_installed_dir_requires_pinned_sizes(hub, tmp_path):
    # files placed by hand into the pinned snapshot count, if they have the pinned sizes
    folder = snapshot(tmp_path, "JustANormalTinkerer/hayai-ocr-v2", COMMIT_V21)
    folder.mkdir(parents=True)
    files = hub.repos["JustANormalTinkerer/hayai-ocr-v2"][1]
    for name in REQUIRED_FILES:
        (folder / name).write_bytes(files[name])
    assert dl.installed_dir("v2.1") == folder
    (folder / "model.safetensors").write_bytes(b"short")
    assert dl.installed_dir("v2.1") is None


def test_partial_is_restarted_when_the_server_ignores_the_range(hub, tmp_path):
    # GIVEN half a file from an earlier run and a server that answers a Range request with 200
    content = hub.repos["JustANormalTinkerer/hayai-ocr-v2"][1]["model.safetensors"]
    blobs = tmp_path / "hub" / "models--JustANormalTinkerer--hayai-ocr-v2" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / (hashlib.sha256(content).hexdigest() + ".incomplete")).write_bytes(content[:5000])
    hub.ignore_range = True
    # WHEN downloading THEN the whole body replaces the partial instead of being appended to it
    folder = dl.download("v2.1")
    assert [r[2] for r in hub.gets("model.safetensors")] == ["bytes=5000-"]
    assert (folder / "model.safetensors").read_bytes() == content


def test_a_newer_nova_revision_is_installed_and_the_older_one_listed(hub, tmp_path, capsys):
    # GIVEN nova downloaded at one commit, WHEN `main` moves on and it is downloaded again
    old = dl.download("nova")
    newer = "f" * 40
    hub.repos["JustANormalTinkerer/hayai-ocr-v2.5-nova"] = (newer, fake_files("nova-2"))
    new = dl.download("nova")
    # THEN the new commit is the installed one (refs/main, written by the hub) and info names both
    assert new.name == newer and old.name == COMMIT_NOVA
    assert dl.installed_dir("nova") == new
    assert set(dl.cached_revisions("nova")) == {COMMIT_NOVA, newer}
    assert hayai(["model", "info"]) == 0
    out = capsys.readouterr().out
    assert f"revision: {newer}" in out and f"also in the cache: {COMMIT_NOVA[:10]}" in out


def test_command_line_download_reports_progress_and_the_folder(hub, capsys):
    assert hayai(["model", "download"]) == 0
    captured = capsys.readouterr()
    folder = dl.installed_dir("v2.1")
    assert captured.out.strip() == str(folder)  # stdout: only the folder, for scripts
    assert "Downloading Hayai OCR v2.1" in captured.err and "SHA-256 verified" in captured.err
    assert "model.safetensors" in captured.err  # the terminal bar of the one big file
