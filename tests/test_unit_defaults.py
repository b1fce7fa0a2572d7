"""Model defaults written with their unit (`us("4us")`): typed ints in the model, unit text in the schema."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from netfab.cli.schema_cmd import intent_schema
from netfab.deploy.playbook import Playbook
from netfab.intent.nic import NotificationPoint, ReactionPoint
from netfab.intent.qos import PfcWatchdog
from netfab.intent.types import ByteSize, Mbps, Microseconds, SpeedGbps, gbps, mbps, size, us


@pytest.mark.parametrize(
    ("helper", "text", "value"),
    [(us, "4us", 4), (us, "200ms", 200_000), (us, "300s", 300_000_000), (mbps, "5Mbps", 5), (mbps, "1Gbps", 1000),
     (gbps, "400G", 400), (gbps, "1.6T", 1600), (size, "150KB", 150_000), (size, "1KiB", 1024)],
)  # fmt: skip
def test_helper_parses_like_the_field_type(helper: Any, text: str, value: int) -> None:
    assert helper(text) == value


@pytest.mark.parametrize("helper", [us, mbps, gbps, size])
def test_helper_refuses_what_the_field_refuses(helper: Any) -> None:
    with pytest.raises(ValueError):
        helper("12 parsecs")


def test_defaults_are_plain_ints_in_validated_models() -> None:
    rp, np, wd = ReactionPoint(), NotificationPoint(), PfcWatchdog()
    assert (rp.rate_reduce_monitor_period, rp.time_reset, rp.ai_rate, rp.hai_rate) == (4, 300, 5, 50)
    assert (np.min_time_between_cnps, wd.detect, wd.restore, wd.polling) == (4, 200_000, 400_000, 100_000)
    assert type(rp.time_reset) is int and type(wd.detect) is int


def test_playbook_without_timeouts_has_integer_timeouts() -> None:
    """The playbook model does not validate defaults: its "300s" default used to stay a string, and
    `confirm_timeout // 1_000_000` in the remediation apply path raised TypeError."""
    book = Playbook.model_validate({"name": "p", "waves": [{"name": "all"}]})
    assert book.confirm_timeout // 1_000_000 == 300
    assert book.settle_timeout // 1_000_000 == 60


def test_a_bare_number_in_user_input_is_still_refused() -> None:
    """The helpers' values pass the parsers; a plain int from a YAML file must not."""

    class M(BaseModel):
        d: Microseconds
        r: Mbps
        s: SpeedGbps
        b: ByteSize

    assert M(d=us("4us"), r=mbps("5Mbps"), s=gbps("400G"), b=size("150KB")).model_dump() == {
        "d": 4,
        "r": 5,
        "s": 400,
        "b": 150_000,
    }
    for field in ("d", "r", "s", "b"):
        good = {"d": "4us", "r": "5Mbps", "s": "400G", "b": "150KB"}
        with pytest.raises(ValidationError, match="no unit"):
            M.model_validate({**good, field: 4})


def test_schema_shows_defaults_as_a_user_writes_them() -> None:
    defs = intent_schema()["$defs"]
    assert defs["ReactionPoint"]["properties"]["time_reset"]["default"] == "300us"
    assert defs["ReactionPoint"]["properties"]["ai_rate"]["default"] == "5Mbps"
    assert defs["PfcWatchdog"]["properties"]["detect"]["default"] == "200ms"
    assert defs["ServerSpec"]["properties"]["nic_speed"]["default"] == "400G"
