"""A line at least every few seconds from a tool that would otherwise be
silent: what it is waiting for and for how long.

    with progress.Heartbeat(lambda: "building", say=print) as beat:
        ...            # beat.touch() whenever the tool printed something itself
"""
import sys
import threading
import time


class Heartbeat:
    """Calls say(what() + elapsed) every `every` seconds in which nothing
    else was printed (touch() says something was)."""

    def __init__(self, what, say=None, every=10.0):
        self.what, self.every = what, every
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.started = self.last = time.time()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.beat, daemon=True)

    def touch(self):
        self.last = time.time()

    def beat(self):
        while not self.stop.wait(min(0.5, self.every / 4)):
            if time.time() - self.last >= self.every:
                self.say(f"... {self.what()} ({time.time() - self.started:.0f} s so far)")
                self.touch()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
