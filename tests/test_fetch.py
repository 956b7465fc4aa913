import functools
import hashlib
import http.server
import socket
import threading

import pytest

from xcbench.data import Source
from xcbench.data.fetch import ChecksumError, DataError, fetch


@pytest.fixture
def http_dir(tmp_path):
    """A folder served over HTTP on 127.0.0.1 for the duration of one test."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_download_with_checksum(http_dir, tmp_path):
    served, base = http_dir
    (served / "f.txt").write_bytes(b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    data = tmp_path / "data"
    path, got = fetch(Source("sub/f.txt", url=f"{base}/f.txt", sha256=digest), data)
    assert path == data / "sub" / "f.txt" and path.read_bytes() == b"hello" and got == digest
    # present now: no second download needed, still verified
    (served / "f.txt").unlink()
    assert fetch(Source("sub/f.txt", url=f"{base}/f.txt", sha256=digest), data)[1] == digest


def test_download_checksum_mismatch_leaves_nothing(http_dir, tmp_path):
    served, base = http_dir
    (served / "f.txt").write_bytes(b"tampered")
    data = tmp_path / "data"
    with pytest.raises(ChecksumError, match="failed its checksum"):
        fetch(Source("f.txt", url=f"{base}/f.txt", sha256="0" * 64), data)
    assert not data.exists() or list(data.iterdir()) == []


def test_offline_download_names_url_and_path(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/aloi.scale.bz2"
    data = tmp_path / "data"
    with pytest.raises(DataError) as err:
        fetch(Source("aloi/aloi.scale.bz2", url=url), data)
    assert url in str(err.value) and str(data / "aloi" / "aloi.scale.bz2") in str(err.value)
    assert not (data / "aloi").exists() or list((data / "aloi").iterdir()) == []


def test_local_file_checksum_mismatch_names_both_hashes(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"abc")
    actual = hashlib.sha256(b"abc").hexdigest()
    with pytest.raises(ChecksumError, match=f"expected {'1' * 64}, got {actual}"):
        fetch(Source("f.txt", sha256="1" * 64), tmp_path)


def test_missing_file_without_url_says_where_to_put_it(tmp_path):
    with pytest.raises(DataError, match=f"place the file at {tmp_path / 'x' / 'y.csv'}"):
        fetch(Source("x/y.csv"), tmp_path)


def test_fallback_source_is_used(http_dir, tmp_path):
    served, base = http_dir
    (served / "plain.txt").write_bytes(b"words")
    src = Source("c.txt.xz", sha256="2" * 64,
                 fallback=Source("plain.txt", url=f"{base}/plain.txt"))
    path, digest = fetch(src, tmp_path)
    assert path.name == "plain.txt" and digest == hashlib.sha256(b"words").hexdigest()


def test_unpinned_source_is_trusted_on_first_use_then_a_changed_file_is_refused(
        http_dir, tmp_path, monkeypatch):
    """aloi's recipe pins no hash (known_hash=None): any later file was accepted silently."""
    from xcbench.data.fetch import ACCEPT_NEW_SOURCE

    monkeypatch.setenv("XCBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(ACCEPT_NEW_SOURCE, raising=False)
    served, base = http_dir
    (served / "aloi.bz2").write_bytes(b"first")
    source = Source("aloi/aloi.bz2", url=f"{base}/aloi.bz2")
    data = tmp_path / "data"
    path, first = fetch(source, data)
    assert first == hashlib.sha256(b"first").hexdigest()
    assert fetch(source, data)[1] == first  # the same file again: fine
    path.write_bytes(b"another version")
    with pytest.raises(ChecksumError, match=f"first seen {first}.*{ACCEPT_NEW_SOURCE}=1"):
        fetch(source, data)
    monkeypatch.setenv(ACCEPT_NEW_SOURCE, "1")
    second = fetch(source, data)[1]
    assert second == hashlib.sha256(b"another version").hexdigest()
    monkeypatch.delenv(ACCEPT_NEW_SOURCE)
    assert fetch(source, data)[1] == second  # the accepted file is now the recorded one
