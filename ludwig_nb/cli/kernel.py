"""``ludwig-nb kernel install``: the kernel spec that warms ludwig_nb up as a kernel starts."""

from __future__ import annotations

import argparse
import sys

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """``ludwig-nb kernel install``: the kernel spec, into the place the flags name."""
    from ludwig_nb.kernelspec import install

    in_venv = sys.prefix != sys.base_prefix
    prefix = args.prefix or (sys.prefix if args.sys_prefix or (in_venv and not args.user) else None)
    user = prefix is None
    try:
        where = install(user=user, prefix=prefix, name=args.name, display_name=args.display_name)
    except ImportError as exc:  # ipykernel is the kernel itself, not one of our requirements
        print(
            f"ludwig-nb: the kernel runs on ipykernel, which did not import ({exc}); "
            "pip install ipykernel, then run this again",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # not writable, or not a directory
        place = "the user's Jupyter directory" if user else f"{prefix}/share/jupyter/kernels"
        print(
            f"ludwig-nb: cannot write the kernel spec into {place} ({exc.strerror}); "
            "install it with --user, or --prefix DIR",
            file=sys.stderr,
        )
        return 2
    print(f"installed kernel {args.name!r} ({args.display_name}) in {where}")
    print("pick it in Jupyter's kernel menu; notebooks still begin with %load_ext ludwig_nb")
    return 0
