"""What the warm server of `optiforge.forked_train` imports before it forks any child: the CLI
(so that no child imports it again), and an exit without the interpreter's teardown.

The server is a helper process with no state worth finalizing; when its caller exits, the
teardown of torch and Lightning would keep it alive for seconds, holding the caller's stdout and
stderr open (a pipe reading them would wait for it). Its children never run atexit handlers
(multiprocessing ends them with `os._exit`), so the handler below only ever ends the server.
"""

import atexit
import os

import optiforge.cli  # noqa: F401  (imported once, here, for every child)

atexit.register(os._exit, 0)
