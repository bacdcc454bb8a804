"""The one base class of the errors in the user's input (command line, config, compilation
database, rulesets, baseline): each is reported as one line and exit status 2. The command line
catches this class alone, so that it need not import every module that raises one before it
knows what work there is."""
from __future__ import annotations


class InputError(Exception):
    """A problem with what the user gave fusionlint; the message is one line."""
