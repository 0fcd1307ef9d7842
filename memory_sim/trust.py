"""Whom a data folder trusts (docs/reliability.md, "Threat model"): the user who runs memory-sim and that user's
own processes; never another local user, never anything off this machine.

    own_folder_problem(data)     why a folder is not this user's own (another owner, others may write it), or None
    write_private(folder, name)  a file of the folder written no-follow and exclusive (0600), then renamed in place
    read_private(folder, name)   a file of the folder read no-follow, only when this user owns it and others cannot
                                 write it (`secret`: nor read it)
    loopback_endpoint(address)   (host, port) of an owner's address, only when it names a loopback IP
    listener_is(pid, host, port) whether process `pid` is the one listening there (psutil: the process's sockets)
    holds_lock(pid, lock)        whether `pid` holds the flock on the folder's lock file (/proc/locks; None elsewhere)

A folder opened by descriptor and its files read relative to it: what is checked is what is read, even if a path
component is swapped meanwhile.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import stat
from pathlib import Path
from urllib.parse import urlsplit

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class Untrusted(Exception):
    """What makes a folder, a record or an owner untrustworthy, in words for the user."""


def _me() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1


def _problem(what: str, info: os.stat_result, *, secret: bool = False) -> str | None:
    if _me() < 0:  # no POSIX owners here (Windows): the platform's ACLs decide
        return None
    if info.st_uid != _me():
        return f"{what} belongs to uid {info.st_uid}, not to you (uid {_me()})"
    mode = stat.S_IMODE(info.st_mode)
    if mode & _OTHERS_WRITE:
        return f"others can write {what} (mode {mode:04o})"
    if secret and mode & 0o077:
        return f"others can read {what} (mode {mode:04o}; 0600 expected)"
    return None


def own_folder_problem(data: str | Path) -> str | None:
    """Why `data` (an existing folder) is not this user's own to keep data in, or None when it is."""
    return _problem(f"the data folder {data}", os.stat(data))


def open_folder(data: str | Path) -> int:
    """A descriptor of the folder itself (a symlinked data folder is followed: its target is what gets checked)."""
    return os.open(data, os.O_RDONLY | _DIRECTORY)


def write_private(folder: str | Path, name: str, text: str) -> None:
    """`name` in `folder` holds `text`, readable by this user only: written to a new file (O_EXCL|O_NOFOLLOW, so a
    link planted under the temporary name is never followed) and renamed over `name` (a rename replaces a link
    there, never its target). A reader sees the old file or the new one, never half of one."""
    partial = Path(folder) / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, Path(folder) / name)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def is_partial(name: str, of: str) -> bool:
    """Whether `name` is a file `write_private` is writing (or a crash left) for `of`."""
    return name.startswith(f".{of}.")


def read_private(folder_fd: int, name: str, *, secret: bool = False) -> str | None:
    """The text of `name` in the folder open as `folder_fd`, None when there is none; Untrusted when it is a link,
    not a plain file, not this user's, writable by others (or, `secret`, readable by them)."""
    try:
        descriptor = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symbolic link where the file should be
        raise Untrusted(f"{name} cannot be opened as a plain file ({exc.strerror or exc})") from None
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Untrusted(f"{name} is not a plain file")
        problem = _problem(name, info, secret=secret)
        if problem is not None:
            raise Untrusted(problem)
        try:
            return file.read(64 * 1024).decode("utf-8")
        except UnicodeDecodeError:
            raise Untrusted(f"{name} is not UTF-8 text") from None


def check_folder(folder_fd: int, label: str | Path) -> None:
    """Untrusted unless the open folder is this user's and others cannot write it."""
    problem = _problem(f"the data folder {label}", os.fstat(folder_fd))
    if problem is not None:
        raise Untrusted(problem)


def loopback_endpoint(address: str) -> tuple[str, int]:
    """The IP and port of an owner's `http://IP:PORT/...` address; Untrusted unless the IP is a loopback one (a
    name is not taken: what it resolves to is not the record's to say)."""
    try:
        parts = urlsplit(address)
        host, port = parts.hostname or "", parts.port
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise Untrusted(f"its address {address} does not name a loopback IP") from None
    if parts.scheme != "http" or port is None or not ip.is_loopback:
        raise Untrusted(f"its address {address} is not on loopback")
    return str(ip), port


def process_problem(pid: int) -> str | None:
    """Why process `pid` is not one of this user's, or None (psutil: its real and effective uids)."""
    import psutil

    try:
        uids = psutil.Process(pid).uids()
    except psutil.NoSuchProcess:
        return f"pid {pid} is not running"
    except psutil.AccessDenied:
        return f"pid {pid} is not a process of yours"
    if _me() >= 0 and uids.effective != _me():
        return f"pid {pid} runs as uid {uids.effective}, not as you (uid {_me()})"
    return None


def listener_is(pid: int, host: str, port: int) -> bool:
    """Whether process `pid` holds the socket listening on `host:port` (or on every address, at that port)."""
    import psutil

    unspecified = {"0.0.0.0", "::"}
    try:
        sockets = psutil.Process(pid).net_connections(kind="inet")
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return any(s.status == psutil.CONN_LISTEN and s.laddr and s.laddr.port == port
               and _same_ip(s.laddr.ip, host, unspecified) for s in sockets)


def _same_ip(bound: str, host: str, unspecified: set[str]) -> bool:
    if bound in unspecified:
        return True
    try:
        ip = ipaddress.ip_address(bound.split("%")[0])
        mapped = getattr(ip, "ipv4_mapped", None)
        return str(mapped or ip) == host
    except ValueError:
        return False


def holds_lock(pid: int, lock_inode: int) -> bool | None:
    """Whether `pid` holds a lock on the file with inode `lock_inode` (Linux: /proc/locks); None where the system
    does not say (no /proc/locks, or no lock shown on that file: a file system whose locks do not show there).
    Only the inode is compared: overlay file systems report a device of their own there. flock() on NFS is shown
    as a POSIX lock."""
    try:
        lines = Path("/proc/locks").read_text("ascii").splitlines()
    except OSError:
        return None
    holders = set()
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and "->" not in fields and fields[5].rsplit(":", 1)[-1] == str(lock_inode):
            holders.add(fields[4])  # "->" marks a process waiting for the lock, not holding it
    return None if not holders else str(pid) in holders
