"""Atomic file writes (a reader never sees a half-written artifact) and strict JSON and YAML
reading (a repeated key is an error, not a silent overwrite)."""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from selfreflect.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path: str | os.PathLike) -> None:
    """Fail with one line naming ``path`` unless it can be created (checked before any work;
    creates nothing)."""
    path = Path(path).absolute()
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"{path}: cannot write here ({folder} is not a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot write here ({folder} is not writable)")


# a temporary file untouched this long is a dead writer's, whichever machine wrote it
STALE_AFTER = 24 * 3600
# this machine, as temporary files name their writer (a writer elsewhere cannot be asked if
# it is alive)
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it into place only if the block succeeds.

    The file gets the mode a plain ``open`` would give it (0666 less the umask). A write that
    fails (full disk, read-only folder) raises one ``InputError`` naming ``path`` and leaves
    any earlier ``path`` as it was. The temporary file is this writer's own (its name holds
    the machine and process), so writers of one path at once never disturb each other: the
    last complete write wins. On success, temporary files of dead writers are removed
    (:func:`_sweep_temp_files`).
    """
    path = Path(path)
    tmp = _temp_file(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as err:
        raise _cannot_write(path, err) from None
    finally:
        tmp.unlink(missing_ok=True)
    _sweep_temp_files(path)


@contextmanager
def scratch_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for what its writer reads back before it writes
    ``path``; removed when the block ends (one a killed writer left is swept as
    :func:`atomic_path`'s are)."""
    tmp = _temp_file(Path(path))
    try:
        yield tmp
    finally:
        tmp.unlink(missing_ok=True)


def _temp_file(path: Path) -> Path:
    """A new empty file beside ``path``, named for this machine and process, with the mode a
    plain ``open`` would give it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{path.name}.{_HOST}.{os.getpid()}."
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise _cannot_write(path, err) from None
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    return Path(tmp)


def _sweep_temp_files(path: Path) -> None:
    """Remove the temporary files of ``path`` that dead writers left: those untouched for
    :data:`STALE_AFTER`, and those of a process of this machine that has ended (a name
    without a writer, as older versions wrote them, is judged by age alone)."""
    writer = r"(?:(?P<host>[0-9a-f]{8})\.(?P<pid>\d+)\.)?"  # absent in older versions' names
    own = re.compile(rf"\.{re.escape(path.name)}\.{writer}[a-z0-9_]{{8}}\.tmp")
    for temp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        if (found := own.fullmatch(temp.name)) and _stale(temp, found["host"], found["pid"]):
            temp.unlink(missing_ok=True)


def _stale(temp: Path, host: str | None, pid: str | None) -> bool:
    """Whether the file ``temp``, written by process ``pid`` on ``host`` (None: unknown), was
    left by a dead writer."""
    try:
        info = temp.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if time.time() - info.st_mtime > STALE_AFTER:
        return True
    return host == _HOST and pid is not None and not _alive(int(pid))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine is running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


def _apply_umask(folder: Path) -> None:
    """Give ``folder``, its subfolders and files the modes ``mkdir`` and ``open`` would give
    them (0777 or 0666, less the umask; executable files keep their execute bits)."""
    mask = _umask()
    for item in [folder, *folder.rglob("*")]:
        full = 0o777 if item.is_dir() or item.stat().st_mode & 0o111 else 0o666
        item.chmod(full & ~mask)


def _write_errors() -> tuple[type[Exception], ...]:
    """What a failed write raises: ``OSError``, or safetensors' own error (models are saved
    with it; it reports a full disk as ``... (os error 28)``)."""
    from safetensors import SafetensorError

    return OSError, SafetensorError


def _reason(err: OSError) -> str:
    return err.strerror or " ".join(str(err).split())


def _cannot_write(path: Path, err: OSError) -> InputError:
    """One line for a failed write of ``path``: a file where a folder above it should be is
    named (the system's reason, "File exists" or "Not a directory", names none)."""
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking:  # as check_writable says it
        return InputError(f"{path}: cannot write here ({blocking} is not a folder)")
    return InputError(f"{path}: cannot write ({_reason(err)})")


def write_atomic(path: str | os.PathLike, write: Callable[[Path], Any]) -> None:
    """Call ``write(tmp_path)`` and atomically rename the result to ``path``."""
    with atomic_path(path) as tmp:
        write(tmp)


def write_text(path: str | os.PathLike, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


# the shared locks this process holds until it ends (:func:`write_text_held`), by lock file
_HELD_LOCKS: dict[Path, int] = {}


def write_text_held(
    path: str | os.PathLike, text: str, compatible: Callable[[str], bool] | None = None
) -> bool:
    """Write ``text`` to ``path`` (unless it holds it already) and hold a shared ``flock`` of
    ``.<name>.lock`` beside it until this process ends. While another process holds it, the
    file is not rewritten: True if what it holds is ``compatible`` (default: ``text`` alone),
    else False. The system releases the lock of a killed process; the lock is not passed to
    child processes."""
    path = Path(path)
    lock = path.parent / f".{path.name}.lock"
    fd = _HELD_LOCKS.get(lock)
    if fd is None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as err:
            raise _cannot_write(path, err) from None
        fcntl.flock(fd, fcntl.LOCK_SH)
        _HELD_LOCKS[lock] = fd
    if _held_text(path) == text:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fcntl.flock(fd, fcntl.LOCK_SH)  # a failed conversion may have let it go
        held = _held_text(path)
        if held is not None and (compatible or text.__eq__)(held):
            return True
        del _HELD_LOCKS[lock]
        os.close(fd)
        return False
    try:
        if _held_text(path) != text:
            write_text(path, text)
    finally:
        fcntl.flock(fd, fcntl.LOCK_SH)
    return True


def _held_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


class BadJson(ValueError):
    """JSON that parses but holds what no input should; the message says what and where."""


class DuplicateKey(BadJson):
    """A JSON object or YAML mapping names one key twice (the last would silently win)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping: dict[str, Any] = {}
    for key, value in pairs:
        if key in mapping:
            raise DuplicateKey(f"duplicate key '{key}' in an object")
        mapping[key] = value
    return mapping


def lone_surrogate(value: Any, where: str = "") -> str | None:
    """Where in parsed JSON ``value`` a string holds a lone UTF-16 surrogate (an escape such
    as ``\\ud800``: text cut inside a character, which no UTF-8 file or table can hold), as
    ``[0]["question"]``; None if nowhere."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "the value"
        return None
    if not isinstance(value, dict | list):
        return None
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        found = lone_surrogate(item, f"{where}[{json.dumps(key, ensure_ascii=False)}]")
        if found:
            return found
    return None


# what a surrogate in parsed JSON comes from: an escape of one, or one in the text itself
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def loads_json(text: str) -> Any:
    """Parse JSON text, refusing an object with a repeated key (:class:`DuplicateKey`) and a
    string holding a lone surrogate (:class:`BadJson`; the parsed value is searched only if
    the text could hold one)."""
    value = json.loads(text, object_pairs_hook=_unique_keys)
    where = _SURROGATE.search(text) and lone_surrogate(value)
    if where:
        raise BadJson(f"{where}: a lone UTF-16 surrogate escape (text cut inside a character)")
    return value


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; a missing, malformed or ambiguous file raises one clear ``InputError``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        return loads_json(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: malformed JSON at line {err.lineno}: {err.msg}") from None
    except BadJson as err:
        raise InputError(f"{path}: {err}") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text ({err.reason})") from None


# what aliases may add, in nodes and characters of their scalars: more is an alias bomb, not a
# config (a config's anchors repeat a few model or dataset entries)
ALIAS_EXPANSION_LIMIT = 100_000


class _StrictYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml if built
    """YAML's safe loader, refusing a mapping with a repeated key and aliases that expand
    past :data:`ALIAS_EXPANSION_LIMIT` (a "billion laughs" file, or a long text aliased many
    times, would otherwise keep every reader walking it busy for hours)."""

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            _AliasBudget().size(node, parent=node)
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base` keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                continue  # an unhashable key is the safe loader's own error
            if key in seen:
                problem = f"duplicate key '{key}'"
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _AliasBudget:
    """Measures a composed YAML graph once its aliases are expanded: its nodes and the
    characters of its scalars."""

    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}  # node id -> expanded size (-1: being walked)
        self.added = 0  # nodes the aliases add

    def size(self, node: yaml.Node, parent: yaml.Node) -> int:
        """The expanded size of ``node``; refuses an alias of a node that contains it, or
        aliases adding more than the limit (``parent``: the node holding this reference)."""
        known = self.sizes.get(id(node))
        if known == -1:
            raise _alias_error("an alias refers to a node that contains it", parent)
        if known is not None:  # a second reference: an alias
            self.added += known
            if self.added > ALIAS_EXPANSION_LIMIT:
                problem = (
                    f"aliases expand to more than {ALIAS_EXPANSION_LIMIT} nodes and characters"
                )
                raise _alias_error(problem, parent)
            return known
        self.sizes[id(node)] = -1
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [item for pair in node.value for item in pair]
        own = 1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0)
        self.sizes[id(node)] = own + sum(self.size(child, node) for child in children)
        return self.sizes[id(node)]


def _alias_error(problem: str, node: yaml.Node) -> yaml.composer.ComposerError:
    return yaml.composer.ComposerError(None, None, problem, node.start_mark)


def read_yaml(path: str | os.PathLike) -> Any:
    """Read a YAML file safely; a missing, malformed or ambiguous (repeated key) file, or one
    whose aliases expand without bound, raises one ``InputError`` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        return yaml.load(path.read_text(encoding="utf-8-sig"), Loader=_StrictYamlLoader)
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else "?"
        raise InputError(f"{path}: malformed YAML at line {line}: {err.problem}") from None
    except yaml.YAMLError as err:
        raise InputError(f"{path}: malformed YAML: {' '.join(str(err).split())}") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text ({err.reason})") from None
    except ValueError as err:  # a scalar no Python value holds (an integer of 5000 digits)
        raise InputError(f"{path}: malformed YAML: {' '.join(str(err).split())}") from None


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's content."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


OWNER_MARKER = ".selfreflect-output"  # in a folder a command wrote: its name, then its entries
SNAKEMAKE_STAMP = ".snakemake_timestamp"  # in a folder Snakemake made: its time, Snakemake's


def _marker_lines(path: Path) -> list[str]:
    try:
        return (path / OWNER_MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def folder_owner(path: str | os.PathLike) -> str | None:
    """The command whose marker the folder ``path`` holds (None: no marker)."""
    lines = _marker_lines(Path(path))
    return lines[0].strip() or None if lines else None


def _foreign_entry(path: Path) -> Path | None:
    """An entry of the folder ``path`` that its marker does not list as written by its owner
    (None: all were; a marker that lists nothing, as older ones, vouches for the folder).
    Snakemake's timestamp file, in a folder output of a workflow job, is not foreign."""
    written = set(_marker_lines(path)[1:])
    if not written:
        return None
    for entry in sorted(path.rglob("*")):
        name = entry.relative_to(path).as_posix()
        if name not in {OWNER_MARKER, SNAKEMAKE_STAMP} and name not in written:
            return entry
    return None


def check_replaceable(path: str | os.PathLike, owner: str) -> None:
    """Refuse, with one line naming ``path``, to replace anything but a missing or empty
    folder or one that ``owner`` wrote and nothing else has changed since: its marker names
    ``owner`` and lists every entry (what another command or a person put there is never
    deleted); then check that ``path`` can be written. Touches nothing."""
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise InputError(f"{path}: exists and is not a folder {owner} wrote; not replaced")
    if Path.cwd().is_relative_to(path.resolve()):
        raise InputError(f"{path}: holds the working directory; {owner} does not replace it")
    if path.is_dir() and any(path.iterdir()) and folder_owner(path) != owner:
        found = folder_owner(path)
        whose = f"was written by {found}" if found else f"has no {OWNER_MARKER} marker"
        raise InputError(
            f"{path}: exists and {whose}; {owner} replaces only an empty folder or its own "
            "output (choose another folder, or remove it yourself)"
        )
    if path.is_dir() and (foreign := _foreign_entry(path)):
        raise InputError(
            f"{path}: holds {foreign.relative_to(path)}, which {owner} did not write; not "
            "replaced (move it out, or remove the folder yourself)"
        )
    check_writable(path)


SHARED_LIST = ".selfreflect-files"  # in a folder commands share with others: what they wrote


def _listed(folder: Path) -> set[str]:
    try:
        return set((folder / SHARED_LIST).read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return set()


@contextmanager
def shared_files(paths: Iterable[str | os.PathLike], owner: str) -> Iterator[None]:
    """While ``owner`` writes ``paths`` into folders it shares with other files. Before the
    block: refuse, with one line naming the file, any of them that cannot be written, or that
    exists and was not written there by a command of this package (listed in its folder's
    :data:`SHARED_LIST`). After the block succeeds: list those it wrote. What a person put in
    the folder is never overwritten; a refusal touches nothing, a failure lists nothing."""
    paths = [Path(path) for path in paths]
    for path in paths:
        if path.exists() and path.name not in _listed(path.parent):
            raise InputError(
                f"{path}: exists and was not written by {owner}; not replaced (choose another "
                "folder, or remove the file yourself)"
            )
        check_writable(path)
    yield
    for folder in dict.fromkeys(path.parent for path in paths):
        listed = _listed(folder)
        new = [p.name for p in paths if p.parent == folder and p.exists() and p.name not in listed]
        if new:
            try:
                with open(folder / SHARED_LIST, "a", encoding="utf-8") as listing:
                    listing.write("".join(f"{name}\n" for name in new))
            except OSError as err:
                raise _cannot_write(folder, err) from None


def check_apart(first: str | os.PathLike, second: str | os.PathLike) -> None:
    """Refuse, with one line, two output folders of which one is or holds the other."""
    a, b = (Path(os.path.abspath(path)) for path in (first, second))
    if a.is_relative_to(b) or b.is_relative_to(a):
        raise InputError(f"{first}, {second}: one output folder is or holds the other")


@contextmanager
def atomic_dir(path: str | os.PathLike, owner: str) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; swap it into place if the block succeeds.

    ``path`` may be missing, an empty folder or an earlier output of the command ``owner``
    (its marker, :data:`OWNER_MARKER`, is written into the new folder); anything else is
    refused before the block runs (:func:`check_replaceable`). One writer at a time: while
    the block runs, the writer holds ``path``'s lock (:func:`_folder_lock`), and another is
    refused with one line. Temporary folders of killed writers are removed first, and
    SIGTERM removes this one (:func:`_cleaned_up_on_sigterm`). Everything in it gets the mode
    the umask gives (libraries such as safetensors write 0600). A write that fails (full
    disk) raises one ``InputError`` naming ``path``.
    """
    path = Path(path)
    check_replaceable(path, owner)
    parent = Path(os.path.abspath(path)).parent
    with _cleaned_up_on_sigterm(), _folder_lock(path, parent):
        _sweep_temp_dirs(path.name, parent)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=parent))
        except OSError as err:
            raise _cannot_write(path, err) from None
        try:
            yield tmp
            written = sorted(entry.relative_to(tmp).as_posix() for entry in tmp.rglob("*"))
            marker = "".join(f"{line}\n" for line in [owner, *written])
            (tmp / OWNER_MARKER).write_text(marker, "utf-8")
            _apply_umask(tmp)
            check_replaceable(path, owner)  # nothing else moved in while the block ran
            if path.exists():
                shutil.rmtree(path)
            os.replace(tmp, path)
        except _write_errors() as err:
            reason = _reason(err) if isinstance(err, OSError) else " ".join(str(err).split())
            raise InputError(f"{path}: cannot write ({reason})") from None
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)


@contextmanager
def _folder_lock(path: Path, parent: Path) -> Iterator[None]:
    """Hold the lock of the folder output ``path``: an exclusive ``flock`` of the file
    ``.<name>.lock`` beside it (in ``parent``), removed when done; the system releases it if
    the writer is killed. A lock another writer holds is refused with one ``InputError``."""
    lock = parent / f".{path.name}.lock"
    while True:
        try:
            parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o666)
        except OSError as err:
            raise _cannot_write(path, err) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError(
                f"{path}: another writer is writing it now (it holds {lock}); not replaced "
                "(try again once it is done)"
            ) from None
        if _is_open_as(lock, fd):
            break
        os.close(fd)  # its holder removed it after we opened it: lock the file there now
    try:
        yield
    finally:
        if _is_open_as(lock, fd):  # removed while held: a writer that opened it finds it gone
            lock.unlink()
        os.close(fd)


def _is_open_as(path: Path, fd: int) -> bool:
    """Whether ``path`` is the file open as ``fd``."""
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _sweep_temp_dirs(name: str, parent: Path) -> None:
    """Remove the temporary folders that killed writers of the folder ``name`` left in
    ``parent`` (called holding its lock: no live writer has one)."""
    own = re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}")  # as tempfile.mkdtemp names them
    for temp in parent.glob(f".{glob.escape(name)}.*"):
        if own.fullmatch(temp.name) and temp.is_dir() and not temp.is_symlink():
            shutil.rmtree(temp, ignore_errors=True)


class _Terminated(BaseException):
    """SIGTERM, raised where the program is so that the ``finally`` blocks run."""


@contextmanager
def _cleaned_up_on_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM unwinds it (its ``finally`` blocks remove what they made)
    and then ends the process as SIGTERM does. Left as it is where the program handles
    SIGTERM itself, or outside the main thread (where no handler can be set)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    pid = os.getpid()

    def terminate(signum: int, frame: Any) -> None:
        if os.getpid() != pid:  # a forked child: it dies, leaving its parent's folder be
            _die_of_sigterm()
        raise _Terminated

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    except _Terminated:
        _die_of_sigterm()
        raise  # only if SIGTERM is blocked in this thread
    finally:
        if signal.getsignal(signal.SIGTERM) is terminate:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _die_of_sigterm() -> None:
    """End this process as SIGTERM ends it when nothing handles it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def shown_path(path: str) -> str:
    """``path`` relative to the working directory where it lies below it, else as given (an
    absolute path from Snakemake, a traceback's file)."""
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return path if relative.startswith("..") else relative
