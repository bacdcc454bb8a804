"""The one base class of the errors in the user's input (command line, config, compilation
database, rulesets, baseline): each is reported as one line and exit status 2. The command line
catches this class alone, so that it need not import every module that raises one before it
knows what work there is."""
from __future__ import annotations


class InputError(Exception):
    """A problem with what the user gave fusionlint; the message is one line."""


# exit statuses of every command (the command line, check, verify, trace)
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a command whose reader went away


class UsageError(InputError):
    """A bad command line."""
