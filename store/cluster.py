"""The Dask client of ``python -m app build --dask ADDRESS``, and who may be one.

Why a rule: Dask moves tasks and results as pickles, so whoever runs the scheduler or any of its workers
runs code in the build process (issue 27: a worker started with a hostile ``--preload`` made Candor's
chunk task return an object whose ``__reduce__`` is ``os.system``, and the command ran here when the
result arrived), and the task itself carries the model and the data to them. So:

- ``local`` / ``local:N``: a cluster of this user's processes that Candor starts and closes itself;
- ``tls://HOST:PORT`` with the user's certificates (``--dask-tls-cert``, ``--dask-tls-key``,
  ``--dask-tls-ca``): Dask's mutual TLS (:class:`distributed.security.Security`, encryption required),
  so only endpoints holding a certificate signed by that CA can be the scheduler or join as workers;
- any other address only with ``--trust-cluster`` (the user vouches for the scheduler and every worker);
- otherwise refused in one line before anything is imported or sent.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from workspace import settings
from workspace.errors import CandorError

LOCAL = re.compile(r"local(?::(\d+))?")
LOCAL_WORKERS = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                 "distributed.worker.profile.enabled": False,
                 "distributed.admin.tick.interval": "1s", "distributed.admin.system-monitor.interval": "5s",
                 "distributed.worker.memory.monitor-interval": "1s"}
"""Dask settings of a ``local`` cluster (its workers, nannies and scheduler; issue 23). Dask starts workers with
``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off glibc's adaptive mmap threshold: every array past 128 KiB is
mapped and unmapped again (LIME's neighbourhoods on Adult: about 3,900 page faults and 13-20 ms of system CPU a row
instead of 70 and 1-3), and its statistical profiler samples the running task's stack every 10 ms; the build needs
neither. With both off, a worker's CPU a row of Adult's SHAP and LIME went from 150 to 109 ms (two workers, 4 chunks
of 128 rows, load 14-15). Its housekeeping wakes each process every 20 ms (the event loop's health tick), every
100 ms (each nanny's and worker's memory check) and every 500 ms (the system monitor, for a dashboard the build does
not start): an idle ``local:2`` cluster took 6.5-7 % of a core (the build's process 3.4-3.7 %, each worker 1.5-1.7 %),
1.2 % with these at 1 s, 1 s and 5 s; on two busy cores that is CPU the build's own work waits for."""


@dataclass(frozen=True)
class ClusterTrust:
    """What the user gave to vouch for a remote cluster.

    Parameters
    ----------
    tls_cert, tls_key, tls_ca : str, optional
        PEM files: this client's certificate, its private key (omit it if the certificate file holds it too),
        and the certificate authority that signed the scheduler's and workers' certificates.
    trust_cluster : bool, default=False
        ``--trust-cluster``: accept a scheduler without TLS.
    """

    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    trust_cluster: bool = False

    def tls_given(self) -> bool:
        """Whether any TLS file was named."""
        return any((self.tls_cert, self.tls_key, self.tls_ca))


REFUSAL = ("a Dask scheduler and its workers can run code in this process (results come back as pickles) "
           "and read the model and data; give a tls:// address with --dask-tls-cert, --dask-tls-key and "
           "--dask-tls-ca, or --trust-cluster if you control the scheduler and every worker")


def security_for(address: str, trust: ClusterTrust):
    """The :class:`distributed.security.Security` to reach ``address`` with, or None for no TLS.

    Parameters
    ----------
    address : str
        A scheduler's address (not ``local``).
    trust : ClusterTrust
        The user's certificates or ``--trust-cluster``.

    Returns
    -------
    distributed.security.Security or None
        Mutual TLS with encryption required when certificates are given; None under ``--trust-cluster``
        without them.

    Raises
    ------
    CandorError
        A non-TLS address without ``--trust-cluster``, a ``tls://`` address without a certificate and CA
        (even under ``--trust-cluster``),
        certificates with a non-``tls://`` address, or a certificate file that cannot be read.
    """
    if trust.tls_given():
        if not address.startswith("tls://"):
            raise CandorError(f"--dask {address}: --dask-tls-* need a tls:// scheduler address")
        if not (trust.tls_cert and trust.tls_ca):
            raise CandorError(f"--dask {address}: TLS needs --dask-tls-cert and --dask-tls-ca "
                              "(and --dask-tls-key unless the certificate file holds the key)")
        for flag, path in (("--dask-tls-cert", trust.tls_cert), ("--dask-tls-key", trust.tls_key),
                           ("--dask-tls-ca", trust.tls_ca)):
            if path and not (Path(path).is_file() and os.access(path, os.R_OK)):
                raise CandorError(f"{flag} {path}: not a readable file")
        from distributed.security import Security

        return Security(tls_ca_file=trust.tls_ca, tls_client_cert=trust.tls_cert,
                        tls_client_key=trust.tls_key or None, require_encryption=True)
    if address.startswith("tls://"):
        raise CandorError(f"--dask {address}: a tls:// scheduler needs --dask-tls-cert and --dask-tls-ca "
                          "(TLS without your CA authenticates nobody)")
    if trust.trust_cluster:
        return None
    raise CandorError(f"--dask {address}: {REFUSAL}")


def client_from_address(address: str, *, n_workers: int = 2, trust: ClusterTrust | None = None):
    """A Dask client for ``--dask ADDRESS``: ``"local"`` starts a LocalCluster, else a scheduler's address.

    Parameters
    ----------
    address : str
        ``"local"`` (or ``"local:N"`` for N workers) for a ``LocalCluster`` of single-threaded worker
        processes on this machine, closed with the client; otherwise a running scheduler's address,
        ``tls://host:8786`` with certificates or, under ``--trust-cluster``, e.g. ``tcp://10.0.0.5:8786``.
    n_workers : int
        Workers of a ``"local"`` cluster when the address names none.
    trust : ClusterTrust, optional
        Certificates or ``--trust-cluster`` for a remote scheduler; default none (only ``local``).

    Returns
    -------
    distributed.Client
        Use it as a context manager (``with client_from_address(a) as client: ...``) so a local
        cluster is shut down at the end.

    Raises
    ------
    CandorError
        A remote address the user has not vouched for (:func:`security_for`), dask.distributed not
        installed, a worker count that is not a positive integer, or a scheduler that cannot be reached
        (or refuses the certificates) within 10 seconds.
    """
    address = address.strip()
    trust = trust or ClusterTrust()
    local = LOCAL.fullmatch(address)
    if not local and "://" not in address:
        raise CandorError(f"--dask {address!r}: give 'local', 'local:N' or a scheduler address such as "
                          "tls://host:8786")
    if local and (trust.tls_given() or trust.trust_cluster):
        raise CandorError(f"--dask {address}: --dask-tls-* and --trust-cluster are for a remote scheduler; "
                          "a local cluster is this user's own processes")
    security = None if local else security_for(address, trust)  # refused before distributed is imported
    try:
        from distributed import Client
    except ImportError:
        raise CandorError("--dask needs dask[distributed]: pip install -r requirements.txt") from None
    if local:
        n = int(local.group(1)) if local.group(1) else n_workers
        if n < 1:
            raise CandorError(f"--dask {address}: a local cluster needs at least one worker")
        import dask

        dask_default = dask.config.get("distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_", None)
        if dask_default is not None:  # left in this process's environment by an earlier nanny: not for our workers
            settings.drop_dask_trim_setting(str(dask_default))
        with dask.config.set(LOCAL_WORKERS):
            return Client(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        return Client(address, timeout=10, security=security)
    except (OSError, TimeoutError, ValueError) as exc:
        raise CandorError(f"--dask {address}: cannot reach the Dask scheduler ({exc})") from None
