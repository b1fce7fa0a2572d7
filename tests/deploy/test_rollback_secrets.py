"""`netfab rollback` restores a journal backup whose secrets are masked: values come back from the device."""

from __future__ import annotations

import pytest

from netfab.deploy.credentials import MASK, redact
from netfab.deploy.rollback import MaskedSecret, restore_secrets

BACKUP = "hostname leaf1\nusername admin secret sha512 $6$abc\nrouter bgp 65100\n neighbor 10.0.0.1 password s3cr3t\n"


def test_masked_lines_take_their_values_from_the_running_config() -> None:
    masked = redact(BACKUP)
    assert MASK in masked and "s3cr3t" not in masked
    running = BACKUP.replace("hostname leaf1", "hostname leaf1-new")
    assert restore_secrets(masked, running) == BACKUP


def test_a_secret_the_device_no_longer_has_is_refused_not_pushed_masked() -> None:
    masked = redact(BACKUP)
    running = "hostname leaf1\nrouter bgp 65100\n"
    with pytest.raises(MaskedSecret, match="restore that line by hand"):
        restore_secrets(masked, running)
