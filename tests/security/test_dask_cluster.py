"""``python -m app build --dask ADDRESS`` only trusts a cluster the user vouched for (issue 27, store/cluster.py).

Dask returns results as pickles, so a hostile worker runs code in the build. On ef3d3fe
``test_a_hostile_worker_is_refused_unless_trusted`` fails: ``--dask tcp://...`` connected, and the worker's
result ran ``echo pwned > MARK`` in the build process.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from store.cluster import REFUSAL, ClusterTrust, client_from_address
from tests.e2e.serving import ROOT
from workspace.errors import CandorError

HOSTILE = '''
import os

import store.engine as engine

MARK = {mark!r}


class Evil:
    def __reduce__(self):  # unpickled where the result arrives: in the build process
        return (os.system, (f"echo pwned > {{MARK}}",))


def dask_setup(worker):  # a --preload: every chunk task of Candor's returns Evil()
    engine._call = lambda task, start, stop: Evil()
'''


def _build(out, address, *flags):
    return subprocess.run([sys.executable, "-m", "app", "build", "--out", str(out), "--rows", "2", "--chunk-rows",
                           "2", "--skip", "persuasive,surrogates,cohorts", "--dask", address, *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_hostile_worker_is_refused_unless_trusted(tmp_path):
    """A real scheduler and worker on loopback whose worker returns a pickle that runs a shell command: the build
    refuses the tcp:// address in one line (exit 2) and nothing runs; with --trust-cluster it connects, and the
    command does run in the build process (what the flag vouches for)."""
    from distributed import LocalCluster

    mark = tmp_path / "pwned"
    preload = tmp_path / "hostile_preload.py"
    preload.write_text(HOSTILE.format(mark=str(mark)))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                      preload=[str(preload)]) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        refused = _build(tmp_path / "store", address)
        assert refused.returncode == 2, refused.stderr[-2000:]
        assert refused.stderr == f"candor: error: --dask {address}: {REFUSAL}\n"
        assert not mark.exists() and not (tmp_path / "store").exists()

        trusted = _build(tmp_path / "store", address, "--trust-cluster")
        assert mark.read_text() == "pwned\n", trusted.stderr[-2000:]
        assert "candor: warning: --trust-cluster lets the Dask scheduler" in trusted.stderr
        assert trusted.returncode == 2  # the tampered result is then refused as malformed


@pytest.mark.parametrize("address, trust, message", [
    ("tcp://127.0.0.1:1", ClusterTrust(), re.escape(REFUSAL)),
    ("tls://127.0.0.1:1", ClusterTrust(), "a tls:// scheduler needs --dask-tls-cert and --dask-tls-ca"),
    ("tls://127.0.0.1:1", ClusterTrust(trust_cluster=True), "a tls:// scheduler needs --dask-tls-cert"),
    ("tls://127.0.0.1:1", ClusterTrust(tls_cert="c.pem"), "TLS needs --dask-tls-cert and --dask-tls-ca"),
    ("tcp://127.0.0.1:1", ClusterTrust(tls_cert="c.pem", tls_ca="ca.pem"), "--dask-tls-\\* need a tls:// scheduler"),
    ("tls://127.0.0.1:1", ClusterTrust(tls_cert="/nonexistent/c.pem", tls_ca="/nonexistent/ca.pem"),
     "--dask-tls-cert /nonexistent/c.pem: not a readable file"),
    ("local:2", ClusterTrust(trust_cluster=True), "are for a remote scheduler"),
])
def test_unvouched_addresses_are_refused_before_connecting(address, trust, message):
    """Each refusal is one line naming the address or flag; none opens a connection."""
    with pytest.raises(CandorError, match=message) as refused:
        client_from_address(address, trust=trust)
    assert "\n" not in str(refused.value)


def test_the_cli_refuses_tls_flags_without_dask(tmp_path):
    """--trust-cluster alone is a mistake, said in one line (exit 2)."""
    got = subprocess.run([sys.executable, "-m", "app", "build", "--out", str(tmp_path / "s"), "--trust-cluster"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert got.returncode == 2 and got.stderr == "candor: error: --trust-cluster and --dask-tls-* go with --dask\n"


def _certificates(folder, name):
    """A CA and one certificate it signed for 127.0.0.1 (the scheduler's, the worker's and the client's)."""
    folder.mkdir()
    ext = folder / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for args in (["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                  "-subj", f"/CN={name}-ca"],
                 ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr", "-subj",
                  "/CN=127.0.0.1"],
                 ["x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                  "node.pem", "-days", "2", "-extfile", str(ext)]):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)
    return ClusterTrust(str(folder / "node.pem"), str(folder / "node.key"), str(folder / "ca.pem"))


def test_a_tls_scheduler_is_reached_with_the_users_certificates_only(tmp_path):
    """A real TLS cluster on loopback: the user's certificates reach it and run a task; a certificate from
    another CA cannot connect (one line)."""
    from distributed import LocalCluster
    from distributed.security import Security

    ours, theirs = _certificates(tmp_path / "ours", "ours"), _certificates(tmp_path / "theirs", "theirs")
    security = Security(tls_ca_file=ours.tls_ca, tls_scheduler_cert=ours.tls_cert, tls_scheduler_key=ours.tls_key,
                        tls_worker_cert=ours.tls_cert, tls_worker_key=ours.tls_key, tls_client_cert=ours.tls_cert,
                        tls_client_key=ours.tls_key, require_encryption=True)  # the cluster object's own client
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tls", security=security,
                      dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        with client_from_address(address, trust=ours) as client:
            assert client.submit(sum, [1, 2]).result() == 3
        with pytest.raises(CandorError, match=f"--dask {address}: cannot reach the Dask scheduler") as refused:
            client_from_address(address, trust=theirs)
        assert "\n" not in str(refused.value)
