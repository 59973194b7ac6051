"""The ``rtfprof`` command installed with the wheel (and ``python -m rtfprof``).

It runs the same command line as the native binary (``rtfprof::cli::main``),
from the extension module, in this process: nothing else to build, ship or
find on PATH.
"""

import signal
import sys


def main():
    # As in the native binary: Ctrl-C ends the command at once (Python's own
    # handler would only set a flag, looked at once the command is done).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from ._rtfprof import _main

    code = _main(sys.argv[1:])
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
