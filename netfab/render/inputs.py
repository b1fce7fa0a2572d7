"""What each rendered file is a function of, as one digest (the build manifest's per-file `inputs`).

A switch's files are a function of the context its templates are given (netfab.render.device.device_context:
the DevicePlan and its platform record's data, capabilities, naming and hardware rules at its release), its
platform record as a whole (output files, template names), and the code that renders them: netfab's package,
templates and added platform records, and the library versions (netfab.core.digest.code_digest). A server's
NIC script is a function of its template context in the same way; the cabling plan of the plan's cables, the
Nornir inventory of its documents before they are dumped (netfab.render.inventory.inventory_data). Each digest
is taken over those very objects, canonically (netfab.core.digest_canonical), so an input the renderer can
read cannot be left out of it.
"""

from __future__ import annotations

from netfab.core.digest_canonical import CanonicalDigest, NotCanonical
from netfab.design.plan import DevicePlan, ServerPlan
from netfab.platforms import platform_spec
from netfab.render.device import device_outputs, server_output


class RenderInputs:
    """Input digests for one build (the plan must not change while it is in use: shared parts are memoised)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self._canonical = CanonicalDigest()

    def device(self, device: DevicePlan, context: dict[str, object]) -> str | None:
        """The digest of one switch's inputs, or None when some input has no canonical form (always render)."""
        return self._digest("switch", context, device_outputs(device), platform_spec(device.platform))

    def server(self, server: ServerPlan, context: dict[str, object]) -> str | None:
        return self._digest("server", context, server_output(server))

    def fabric(self, kind: str, made_of: object) -> str | None:
        """The digest of a fabric-wide file (`kind`) made of `made_of` and nothing else."""
        return self._digest(kind, made_of)

    def _digest(self, *values: object) -> str | None:
        try:
            return self._canonical.digest(self.code, *values)
        except NotCanonical:
            return None
