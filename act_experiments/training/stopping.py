"""How a run stops before its end: a signal (SIGINT, SIGTERM), or a loss that is no longer finite.

While the loop trains, ``StopRequests`` turns SIGINT and SIGTERM into a request that the loop
reads after each iteration: it writes a checkpoint and raises ``Stopped``, from which --resume
continues exactly. ``Diverged`` ends a run whose loss or parameters became NaN or inf.
"""

import signal
import threading


class Stopped(KeyboardInterrupt):
    """train() stopped on SIGINT or SIGTERM after writing a checkpoint; --resume continues the run.

    signum: the signal; iteration: the checkpoint's; exit_code: 128 + signum (130 for SIGINT,
    143 for SIGTERM, the shell's convention). A KeyboardInterrupt, so that code catching
    Exception lets it through as it would let Ctrl-C through.
    """

    def __init__(self, signum, iteration):
        self.signum, self.iteration, self.exit_code = signum, iteration, 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name} after iteration {iteration}")


class Diverged(RuntimeError):
    """The loss or the parameters became NaN or inf: training cannot go on (the last checkpoint stands)."""


class StopRequests:
    """While active, SIGINT and SIGTERM only ask the loop to stop (``signum`` is set).

    A second signal stops at once with KeyboardInterrupt (the last checkpoint stands). A signal
    the process was told to ignore stays ignored (a sweep's workers ignore Ctrl-C and stop when
    their parent sends SIGTERM). Handlers can only be set in the main thread; elsewhere signals
    keep their usual effect.
    """

    def __init__(self):
        self.signum, self.previous = None, {}

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) not in (signal.SIG_IGN, None):
                    self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
