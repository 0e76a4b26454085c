"""Errors a user can act on. The CLI prints them as one line and exits non-zero."""


class SelfReflectError(Exception):
    """Base class: the message names the file and the field that is wrong."""


class ConfigError(SelfReflectError):
    """The experiment configuration is invalid."""


class InputError(SelfReflectError):
    """An input file is missing, malformed or inconsistent."""


class StrategyError(SelfReflectError):
    """A summary strategy is unknown or failed as a whole; the message names it."""
