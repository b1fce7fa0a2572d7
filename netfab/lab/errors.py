"""The one exception the lab runtime raises: a plain sentence a CLI can print as it is."""


class LabError(RuntimeError):
    """Bring-up, teardown or access to a lab failed; the message says what and where, never a traceback."""
