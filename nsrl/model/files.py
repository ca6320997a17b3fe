"""Model files: .npz without pickle, written atomically, sizes checked before reading.

Format (keys of the archive): ``next_states`` (int64, S x A x b) and ``probs`` (float64,
S x A x b) in canonical form, ``R`` (S x A), ``gamma`` (0-d), ``start`` (S), and either
``features`` (S x p; S x 0 for none) or ``features_draw``, the JSON recipe of a Garnet's
lazily drawn Phi (bit generator, its state after the rewards, shape). Files of earlier
versions hold a dense ``P`` (S x A x S) instead of the successor lists; they still load.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from nsrl.model.memory import check_memory, format_bytes

if TYPE_CHECKING:
    from collections.abc import Callable

# A nsrl.model.mdp.FiniteMDP, which imports this module to save and load itself.
FiniteMDP = Any


@dataclass(frozen=True)
class FeatureDraw:
    """Phi ~ U[0, 1]^(n_states x n_features), drawn from a saved bit-generator state.

    ``state`` is the JSON of ``bit_generator.state`` where a Garnet's draw reached its
    features, so :meth:`draw` gives the numbers an eager draw would have given.
    """

    bit_generator: str
    state: str
    n_states: int
    n_features: int

    @classmethod
    def here(cls, rng: np.random.Generator, n_states: int, n_features: int) -> FeatureDraw:
        """The recipe for drawing Phi from ``rng``'s current state."""
        bitgen = rng.bit_generator
        return cls(type(bitgen).__name__, json.dumps(bitgen.state), n_states, n_features)

    def draw(self) -> np.ndarray:
        """Draw Phi (checking first that n_states x n_features floats fit in memory)."""
        check_memory(8.0 * self.n_states * self.n_features,
                     f"the features Phi ({self.n_states} x {self.n_features})",
                     "draw the Garnet with fewer features (n_features=...)")
        bitgen = getattr(np.random, self.bit_generator)()
        bitgen.state = json.loads(self.state)
        return np.random.Generator(bitgen).random((self.n_states, self.n_features))

    def to_json(self) -> str:
        """The recipe as one JSON string (stored in model files)."""
        return json.dumps({"bit_generator": self.bit_generator, "state": json.loads(self.state),
                           "shape": [self.n_states, self.n_features]})

    @classmethod
    def from_json(cls, text: str, n_states: int) -> FeatureDraw:
        """Read :meth:`to_json`'s output, refusing anything but a numpy bit generator."""
        try:
            d = json.loads(text)
            name, state, (rows, cols) = d["bit_generator"], d["state"], d["shape"]
            if name not in ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937"):
                raise ValueError(f"unknown bit generator {name!r}")
            if rows != n_states or not isinstance(cols, int) or cols < 1:
                raise ValueError(f"shape {rows} x {cols} does not fit {n_states} states")
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"the features_draw entry is not a feature recipe: {exc}") from None
        try:  # a bad state is refused here, not on the first read of the features
            getattr(np.random, name)().state = state
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"the features_draw entry holds no valid {name} state "
                             f"({type(exc).__name__})") from None
        return cls(name, json.dumps(state), int(rows), int(cols))


# Phi larger than this is saved as its recipe rather than as numbers.
_EAGER_FEATURE_BYTES = 64 * 2**20


_COMPRESS_MAX_BYTES = 64 * 2**20  # larger models are saved uncompressed


def npz_path(path: str | Path) -> Path:
    """``path`` with the ``.npz`` suffix numpy would add when saving under that name."""
    path = Path(path)
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def atomic_write(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it over ``path``.

    An interrupted write leaves the previous file (if any) untouched and no partial file
    under ``path``; a symbolic link at ``path`` is replaced, its target never written.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_mdp(mdp: FiniteMDP, path: str | Path) -> Path:
    """Write ``mdp`` to ``path`` (.npz added if missing) atomically; return the path.

    Compressed up to 64 MiB of arrays, uncompressed above (10x faster at 10^6 states).
    """
    path = npz_path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot save the model to {str(path)!r}: the folder "
                                f"{str(path.parent)!r} does not exist; create it first "
                                f"(Path(...).mkdir(parents=True)) or save elsewhere.")
    nxt, probs = mdp.successors
    arrays = {"next_states": nxt, "probs": probs, "R": mdp.R, "gamma": np.float64(mdp.gamma),
              "start": mdp.start}
    draw = mdp._feature_draw
    if mdp._features is None and draw is not None and (
            8 * draw.n_states * draw.n_features > _EAGER_FEATURE_BYTES):
        arrays["features_draw"] = np.array(draw.to_json())
    else:
        arrays["features"] = (mdp.features if mdp.features is not None
                              else np.zeros((mdp.n_states, 0)))
    # zlib gains little on random indices and probabilities and costs minutes at 10^6 states
    total = sum(np.asarray(x).nbytes for x in arrays.values())
    # typed loosely: numpy's stubs match **arrays against savez's allow_pickle: bool too
    save: Callable[..., None] = (np.savez_compressed if total <= _COMPRESS_MAX_BYTES
                                 else np.savez)
    atomic_write(path, lambda f: save(f, **arrays))
    return path


# zlib's largest compression ratio: a deflated entry cannot expand beyond this.
_DEFLATE_MAX_RATIO = 1032


def _headers(z: zipfile.ZipFile, real_size: int) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Shape and dtype of every array of an .npz, read from the headers only.

    Each array's declared size is compared with what its entry can hold, given the file's
    real size (stored: its bytes; deflated: 1032 times them), so a small file declaring a
    huge array is refused before anything is allocated.
    """
    out = {}
    for info in z.infolist():
        if not info.filename.endswith(".npy"):
            continue
        with z.open(info) as f:
            version = np.lib.format.read_magic(f)
            reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)
            shape, _, dtype = reader(f)
            offset = f.tell()
        shape, dtype = tuple(int(n) for n in shape), np.dtype(dtype)
        stored = min(info.compress_size, real_size)
        room = stored if info.compress_type == zipfile.ZIP_STORED else _DEFLATE_MAX_RATIO * stored
        declared = offset + dtype.itemsize * float(np.prod(shape, dtype=np.float64))
        if declared > room + 64:
            raise ValueError(f"entry {info.filename[:-4]!r} declares an array of shape {shape} "
                             f"({format_bytes(declared)}) but the file holds at most "
                             f"{format_bytes(room)} for it: the file is damaged or forged "
                             f"(write it again with FiniteMDP.save)")
        out[info.filename[:-4]] = (shape, dtype)
    return out


def _check_layout(path: Path, heads: dict) -> None:
    dense = "P" in heads
    needed = {"R", "gamma"} | ({"P"} if dense else {"next_states", "probs"})
    missing = needed - set(heads)
    if missing:
        raise ValueError(f"{path} is not an nsrl MDP file: keys {sorted(missing)} are missing.")
    for key, (_, dtype) in heads.items():
        if dtype.hasobject:
            raise ValueError(f"{path}: entry {key!r} holds Python objects; nsrl never unpickles.")
        if dtype.kind not in "biuf" and key != "features_draw":
            raise ValueError(f"{path}: entry {key!r} has dtype {dtype}, not real numbers; the "
                             f"file was not written by FiniteMDP.save (save the model again).")
    if heads["gamma"][0] != ():
        raise ValueError(f"{path}: gamma should be one number, got an array of shape "
                         f"{heads['gamma'][0]}; the file was not written by FiniteMDP.save.")
    shape = heads["P"][0] if dense else heads["next_states"][0]
    if len(shape) != 3 or (not dense and heads["probs"][0] != shape):
        raise ValueError(f"{path}: the transitions have shape {shape}, expected "
                         f"(n_states, n_actions, {'n_states' if dense else 'b'}).")
    if "features" in heads and len(heads["features"][0]) != 2:
        raise ValueError(f"{path}: features should be a 2-d array (n_states, p), got shape "
                         f"{heads['features'][0]}; save Phi as a matrix, one row per state.")
    total = sum(8.0 * np.prod(s, dtype=np.float64) for s, _ in heads.values())
    check_memory(2 * total, f"reading {path} (its arrays declare {format_bytes(total)})",
                 "check that the file is an nsrl model and not damaged")


def load_mdp(cls: type[FiniteMDP], path: str | Path) -> FiniteMDP:
    """Read a model file (see the module docstring) into ``cls`` (a FiniteMDP).

    Raises:
        FileNotFoundError: no file at ``path`` (nor at ``path`` + ``.npz``).
        ValueError: anything wrong with the file (not an .npz, damaged, a declared size the
            file cannot hold, bad entries), in one message naming the file.
    """
    path = Path(path)
    if not path.is_file() and npz_path(path).is_file():
        path = npz_path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no MDP file at {str(path)!r}; create one with `nsrl garnet`.")
    try:
        with zipfile.ZipFile(path) as z:
            heads = _headers(z, path.stat().st_size)
        z = np.load(path, allow_pickle=False)
        if not hasattr(z, "files"):
            raise ValueError("it holds a single array, not an .npz archive")
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"cannot read {path} as an nsrl .npz MDP file: {exc}") from None
    _check_layout(path, heads)
    try:
        with z:
            return _build(cls, z)
    except (OSError, EOFError, ValueError, TypeError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(f"{path} does not hold a valid nsrl model ({exc}); it is damaged or "
                         f"was not written by FiniteMDP.save: write it again.") from None


def _build(cls: type[FiniteMDP], z: np.lib.npyio.NpzFile) -> FiniteMDP:
    """The model of an open, layout-checked archive (errors name no file: the caller does)."""
    features = z["features"] if "features" in z.files else None
    if features is not None and features.shape[1] == 0:
        features = None
    start = z["start"] if "start" in z.files else None
    gamma = z["gamma"][()]
    if not isinstance(gamma, np.floating | np.integer):
        raise TypeError(f"gamma should be a real number, got {gamma!r}")
    gamma = float(gamma)
    if "P" in z.files:
        return cls(z["P"], z["R"], gamma, features=features, start=start)
    mdp = cls.from_successors(z["next_states"], z["probs"], z["R"], gamma,
                              features=features, start=start)
    if "features_draw" in z.files:
        draw = FeatureDraw.from_json(str(z["features_draw"]), mdp.n_states)
        mdp._feature_draw = draw
    return mdp
