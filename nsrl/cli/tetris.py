"""``nsrl tetris play``: evaluate a linear Tetris controller over many games.

    nsrl tetris play (--controller NAME | --policy FILE.json | --features SET --weights N=V,...)
                     [--width 10 --height 20 | --board small|large] [--games N] [--seed S]
                     [--jobs J] [--overflow end|clear-first] [--json]

Game i reads piece stream (seed, i): the numbers do not depend on ``--jobs``. A progress bar
goes to stderr when it is a terminal; Ctrl-C prints the games finished so far, marked partial,
and exits with status 130.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from nsrl.cli.common import UsageError, integer, user_input

BOARDS = {"small": (10, 10), "large": (10, 20)}


def _controller(args):
    """The controller named by --controller, --policy or --features/--weights."""
    from nsrl.tetris import SHIPPED, Controller, load_controller, parse_weights

    given = [flag for flag, value in (("--controller", args.controller),
                                      ("--policy", args.policy),
                                      ("--features", args.features)) if value is not None]
    if len(given) != 1:
        raise UsageError("give the controller once: --controller NAME (one of "
                         f"{', '.join(SHIPPED)}), --policy FILE.json, or --features SET "
                         "--weights NAME=VALUE,...; got " + (" and ".join(given) or "none"))
    if args.weights is not None and args.features is None:
        raise UsageError("--weights goes with --features SET (the features it weighs)")
    if args.controller is not None:
        if args.controller not in SHIPPED:
            raise UsageError(f"--controller {args.controller!r} is not shipped; use one of "
                             f"{', '.join(SHIPPED)}, or --policy FILE.json")
        return SHIPPED[args.controller], args.controller
    if args.policy is not None:
        try:
            with user_input():
                return load_controller(args.policy), args.policy
        except OSError as exc:
            raise UsageError(f"--policy {args.policy}: {exc.strerror or exc}; give the path of "
                             f"a controller file (JSON)") from None
    if args.weights is None:
        raise UsageError(f"--features {args.features} needs --weights NAME=VALUE,... (one "
                         f"weight per feature)")
    with user_input():
        return Controller(args.features, parse_weights(args.weights)), "--weights"


def _summary(games, controller, source: str, args, width: int, height: int) -> dict:
    lines = games.lines.astype(np.float64)
    n = len(lines)
    mean = float(lines.mean()) if n else math.nan
    std = float(lines.std(ddof=1)) if n > 1 else math.nan
    half = 1.96 * std / math.sqrt(n) if n > 1 else math.nan
    pieces = int(games.pieces.sum())
    return {
        "games": n, "games_asked": args.games, "partial": bool(games.partial),
        "mean_lines": mean, "std_lines": std, "ci95": [mean - half, mean + half],
        "min_lines": int(lines.min()) if n else None, "max_lines": int(lines.max()) if n else None,
        "mean_pieces": pieces / n if n else math.nan, "pieces": pieces,
        "seconds": games.seconds, "pieces_per_s": pieces / games.seconds if games.seconds else 0,
        "controller": source, "features": controller.features,
        "weights": controller.weights, "board": [width, height], "seed": args.seed,
        "jobs": args.jobs, "overflow": args.overflow,
    }


def _finite(value):
    """JSON has no NaN: None instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _cmd_play(args) -> int:
    from nsrl.tetris import play_games

    width, height = BOARDS[args.board] if args.board else (args.width, args.height)
    controller, source = _controller(args)
    with user_input():  # unknown features, missing or extra weights: before any game
        controller.vector(width)
    bar = None
    if sys.stderr.isatty():
        from tqdm.auto import tqdm

        bar = tqdm(total=args.games, unit="game", desc="tetris", file=sys.stderr)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.update(done - bar.n)

    try:
        games = play_games(controller, args.games, width=width, height=height, seed=args.seed,
                           overflow=args.overflow, jobs=args.jobs, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    out = _summary(games, controller, source, args, width, height)
    if args.json:
        print(json.dumps({k: _finite(v) for k, v in out.items()}))
    else:
        state = (f"PARTIAL (interrupted): {out['games']} of {args.games} games"
                 if games.partial else f"{out['games']} games")
        print(f"{source} ({controller.features}) on {width} x {height}, {state}, seed "
              f"{args.seed}, overflow {args.overflow}")
        if out["games"]:
            low, high = out["ci95"]
            print(f"  lines per game  {out['mean_lines']:,.1f}  (95% CI {low:,.1f} to "
                  f"{high:,.1f}; std {out['std_lines']:,.1f}, max {out['max_lines']:,})")
            print(f"  pieces per game {out['mean_pieces']:,.1f};  {out['pieces_per_s']:,.0f} "
                  f"pieces/s over {out['seconds']:.1f} s")
    if games.partial:
        print(f"nsrl: interrupted: {out['games']} of {args.games} games finished (the result "
              f"above is partial)", file=sys.stderr)
        return 130
    return 0


def add_parser(subparsers) -> None:
    """Register ``nsrl tetris play``."""
    from nsrl.cli.common import _Parser
    from nsrl.tetris.reference import OVERFLOW_RULES
    from nsrl.tetris.state import MAX_HEIGHT, MAX_WIDTH, MIN_SIZE

    p = subparsers.add_parser("tetris", help="Tetris with MdpTetris's rules (docs/tetris.md)")
    sub = p.add_subparsers(dest="tetris_command", required=True, parser_class=_Parser)
    q = sub.add_parser("play", help="evaluate a linear controller over many games")
    q.add_argument("--controller", help="a shipped controller: dt-10, dt-20, dellacherie, du, "
                   "bdu")
    q.add_argument("--policy", metavar="FILE.json", help="a controller file: {\"features\": "
                   "SET, \"weights\": {NAME: VALUE}}")
    q.add_argument("--features", metavar="SET", help="a feature set (dellacherie, "
                   "dellacherie-thiery, du, bertsekas, bdu, rbf-heights) or names joined by +")
    q.add_argument("--weights", metavar="NAME=VALUE,...", help="one weight per feature of SET")
    q.add_argument("--width", type=integer(MIN_SIZE, MAX_WIDTH), default=10,
                   help="board columns (10)")
    q.add_argument("--height", type=integer(MIN_SIZE, MAX_HEIGHT), default=20,
                   help="board rows (20)")
    q.add_argument("--board", choices=sorted(BOARDS), help="small: 10 x 10, large: 10 x 20 "
                   "(instead of --width/--height)")
    q.add_argument("--games", type=integer(1), default=100, help="games to play (100)")
    q.add_argument("--seed", type=integer(0, 2**63 - 1), default=0,
                   help="game i reads piece stream (seed, i) (0)")
    q.add_argument("--jobs", type=integer(1), default=1, help="processes (1); the numbers do "
                   "not depend on it")
    q.add_argument("--overflow", choices=OVERFLOW_RULES, default="end",
                   help="end (default: a piece sticking out ends the game, its lines not "
                   "counted; the published scores) or clear-first")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(func=_cmd_play)
