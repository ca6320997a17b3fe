"""Bit counts on int64 words for the compiled kernels: LLVM's ``ctpop``, ``cttz``, ``ctlz``.

One machine instruction each on current CPUs (numba compiles for the host), where a loop over
the bits would cost one step per bit. Boards are held as words of bits (a row's columns, or a
column's rows), so most features are a few of these counts.

Examples:
    >>> popcount(0b1011), trailing_zeros(0b1000), bit_length(0b1000), bit_length(0)
    (3, 3, 4, 0)
"""

from __future__ import annotations

from typing import Any

import numba
from llvmlite import ir
from numba.extending import intrinsic

__all__ = ["bit_length", "popcount", "trailing_zeros"]


def _unary(name: str, *flag: int) -> Any:
    """An intrinsic ``int64 -> int64`` calling ``llvm.<name>.i64`` (with an i1 flag if given)."""

    @intrinsic
    def op(typingctx: Any, x: Any) -> Any:
        sig = numba.types.int64(numba.types.int64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            i64 = ir.IntType(64)
            arg_types = [i64] + [ir.IntType(1)] * len(flag)
            fn = builder.module.declare_intrinsic(f"llvm.{name}", [i64],
                                                  ir.FunctionType(i64, arg_types))
            return builder.call(fn, [args[0], *[ir.IntType(1)(f) for f in flag]])

        return sig, codegen

    return op


_ctpop = _unary("ctpop")
_cttz = _unary("cttz", 0)  # flag 0: defined (64) at zero
_ctlz = _unary("ctlz", 0)


@numba.njit(inline="always", cache=True)
def popcount(x: int) -> int:  # pragma: no cover - compiled
    """Number of bits set in ``x`` (taken as 64 bits)."""
    return _ctpop(numba.int64(x))


@numba.njit(inline="always", cache=True)
def trailing_zeros(x: int) -> int:  # pragma: no cover - compiled
    """Number of zero bits below the lowest set bit of ``x`` (64 when ``x`` is 0)."""
    return _cttz(numba.int64(x))


@numba.njit(inline="always", cache=True)
def bit_length(x: int) -> int:  # pragma: no cover - compiled
    """One plus the position of the highest set bit of ``x >= 0`` (0 when ``x`` is 0)."""
    return 64 - _ctlz(numba.int64(x))
