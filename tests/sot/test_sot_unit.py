"""sot without a NetBox: the plan as NetBox objects, pull's comparison on as-built records in the API's shape,
reads and credentials against loopback HTTP stand-ins, the CLI's usage errors."""

from __future__ import annotations

import copy
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netfab.cli.pipeline import load_plan
from netfab.core.redact import env_secrets
from netfab.sot.client import NetBox, NetBoxError, Options, check_url, token_from_env
from netfab.sot.desired import Desired, Ref, desired_state
from netfab.sot.kinds import KINDS
from netfab.sot.pull import AsBuilt, compare
from netfab.sot.push import Pusher
from tests.sot.conftest import INTENTS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, Desired]:
    loaded = load_plan([INTENTS / "tiny.yaml"])
    return loaded.plan, desired_state(loaded.intent, loaded.plan)


def test_the_su_as_netbox_objects() -> None:
    loaded = load_plan([INTENTS / "su1.yaml"])
    d = desired_state(loaded.intent, loaded.plan)
    counts = {kind: len(d.of(kind)) for kind in ("device", "interface", "cable", "ip_address", "asn", "prefix")}
    assert counts == {"device": 56, "interface": 1072, "cable": 512, "ip_address": 560, "asn": 9, "prefix": 4}
    leaf = d.of("device")[("su1-leaf3",)].fields
    assert leaf["custom_fields"] == {
        "netfab_fabric": "sot-su1",
        "netfab_network": "backend",
        "netfab_su": 1,
        "netfab_pod": None,
        "netfab_rack": None,
        "netfab_rail": 3,
        "netfab_plane": None,
        "netfab_asn": Ref("asn", (65102,)),
    }
    port = d.of("interface")[("su1-leaf3", "swp5")].fields
    # The SN5600's cages are OSFP (the catalogue); a 400G port is one half of an 800G cage broken out.
    assert (port["type"], port["speed"], port["mtu"]) == ("400gbase-x-osfp", 400_000_000, 9216)
    # The DGX H100 profile's rail-3 NIC (User Guide Table 6, in Ethernet mode).
    assert port["description"] == "host: su1-srv5 enp79s0np0"
    # netfab_fabric marks the interface netfab's (no tag on the thousands of interfaces, addresses, cables).
    assert port["custom_fields"] == {"netfab_rail": 3, "netfab_fabric": "sot-su1"} and "tags" not in port
    cable = d.of("cable")[("su1-leaf3:swp5", "su1-srv5:enp79s0np0")]
    assert cable.fields["length"] == 5.0 and cable.initial == {"status": "planned"}
    assert cable.fields["custom_fields"] == {"netfab_fabric": "sot-su1"} and "tags" not in cable.fields
    mgmt = d.of("ip_address")[("127.77.128.3/16",)].fields
    assert mgmt["assigned_object_id"] == Ref("interface", ("su1-leaf3", "mgmt0"))
    assert d.of("primary_ip")[("su1-leaf3",)].fields == {"primary_ip4": Ref("ip_address", ("127.77.128.3/16",))}
    # Every reference points at an object the push writes first (ORDER) or in the same kind.
    kinds = list(d.wants)
    for kind, wants in d.wants.items():
        for want in wants.values():
            for ref in _refs(want.fields):
                assert kinds.index(ref.kind) < kinds.index(kind) and ref.key in d.of(ref.kind), (kind, want.key, ref)


def test_device_types_come_from_the_switch_model_catalogue_and_the_server_profile() -> None:
    from netfab.intent.hardware import tier_switch_model
    from netfab.intent.servers import resolve_profile

    loaded = load_plan([INTENTS / "su1.yaml"])
    d = desired_state(loaded.intent, loaded.plan)
    leaf_model = tier_switch_model(loaded.intent.topology.leaf)
    assert leaf_model is not None and leaf_model.name == "nvidia-sn5600"
    leaf = d.of("device")[("su1-leaf1",)].fields
    spine = d.of("device")[("spine1",)].fields
    assert leaf["device_type"] == spine["device_type"] == Ref("device_type", ("nvidia-sn5600",))
    dtype = d.of("device_type")[("nvidia-sn5600",)]
    assert dtype.fields["manufacturer"] == Ref("manufacturer", (leaf_model.vendor.lower(),))
    assert f"{leaf_model.vendor} {dtype.fields['model']}" == leaf_model.title == "NVIDIA SN5600"
    assert "netfab/platforms/models/nvidia-sn5600.yaml" in str(dtype.initial["comments"])
    assert "u_height" not in dtype.fields  # the catalogue states no rack units: netfab does not make one up
    profile = resolve_profile(loaded.intent.servers, "dgx-h100")
    assert profile is not None
    server = d.of("device")[("su1-srv1",)].fields
    assert server["device_type"] == Ref("device_type", ("server-dgx-h100",))
    stype = d.of("device_type")[("server-dgx-h100",)].fields
    assert stype["model"] == "NVIDIA DGX H100/H200" and profile.description.startswith(str(stype["model"]))
    assert stype["manufacturer"] == Ref("manufacturer", ("nvidia",))
    # The server's interfaces are the profile's compute NICs, in its rail order.
    nics = [k[1] for k in d.of("interface") if k[0] == "su1-srv1"]
    assert nics == [n.netdev for n in profile.nics if "backend" in n.networks]


def test_a_tier_without_a_model_gets_a_placeholder_that_says_so(tiny: tuple[Any, Desired]) -> None:
    _, d = tiny
    types = {k[0]: w for k, w in d.of("device_type").items()}
    assert set(types) == {
        "arista-eos-switch-model-not-set",
        "sonic-config-db-frr-switch-model-not-set",
        "gpu-server-2-nics",
    }
    assert all("placeholder" in str(w.initial["comments"]) for w in types.values())
    assert not any("part_number" in w.fields for w in types.values())
    # No catalogue cage: the type is the usual pluggable of the speed.
    assert d.of("interface")[("su1-leaf1", "Ethernet0")].fields["type"] == "400gbase-x-qsfpdd"


def _refs(value: object) -> Iterator[Ref]:
    if isinstance(value, Ref):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _refs(v)


def _as_built(plan: Any, desired: Desired) -> AsBuilt:
    """What NetBox would record for an exact build of the plan, in the API's shape (nested objects)."""
    types = desired.of("device_type")
    devices: dict[str, dict[str, Any]] = {}
    for i, (key, want) in enumerate(desired.of("device").items()):
        dtype = types[want.fields["device_type"].key].fields  # type: ignore[union-attr]
        record: dict[str, Any] = {
            "id": i + 1,
            "name": key[0],
            "device_type": {
                "slug": want.fields["device_type"].key[0],  # type: ignore[union-attr]
                "model": dtype["model"],
                "manufacturer": {"name": "Maker"},
            },
            "serial": f"SN{i}",
        }
        if key[0] in plan.devices:
            record["primary_ip4"] = {"address": f"{plan.devices[key[0]].mgmt_ip}/24"}
        devices[str(key[0])] = record

    def end(text: str) -> list[dict[str, Any]]:
        device, _, port = text.partition(":")
        return [{"object_type": "dcim.interface", "object_id": 0, "object": {"name": port, "device": {"name": device}}}]

    cables = [
        {"id": i + 1, "a_terminations": end(str(a)), "b_terminations": end(str(b))}
        for i, (a, b) in enumerate(desired.of("cable"))
    ]
    return AsBuilt(site_found=True, devices=devices, cables=cables)


def _cable(built: AsBuilt, a: str, b: str) -> dict[str, Any]:
    for c in built.cables:
        ends = {
            f"{t['object']['device']['name']}:{t['object']['name']}" for t in c["a_terminations"] + c["b_terminations"]
        }
        if ends == {a, b}:
            return c
    raise AssertionError(f"no cable {a} {b}")


def test_only_this_fabrics_objects_are_reported_unplanned(tiny: tuple[Any, Desired]) -> None:
    """Two fabrics' addresses in one prefix (read by parent prefix): the other fabric's are not this one's to
    report (measured: a second push of the SU beside the 10k bench fabric reported 112 of them)."""
    _, desired = tiny
    pusher = Pusher(None, desired)  # type: ignore[arg-type]
    existing = {
        ("10.9.0.1/32",): {"id": 1, "address": "10.9.0.1/32", "custom_fields": {"netfab_fabric": "other"}},
        ("10.9.0.2/32",): {"id": 2, "address": "10.9.0.2/32", "custom_fields": {"netfab_fabric": desired.fabric}},
    }
    pusher._unplanned(KINDS["ip_address"], existing, {})
    assert pusher.result.unplanned == [("ip_address", ("10.9.0.2/32",))]


def test_pull_of_an_exact_build_has_no_differences(tiny: tuple[Any, Desired]) -> None:
    built = _as_built(*tiny)
    result = compare(tiny[0], tiny[1], built)
    assert result.differences == []
    assert set(result.overrides) == set(tiny[0].devices)
    assert result.overrides["su1-leaf1"]["hostname"] == tiny[0].devices["su1-leaf1"].mgmt_ip


def test_pull_names_a_rail_swap_once(tiny: tuple[Any, Desired]) -> None:
    built = _as_built(*tiny)
    c1 = _cable(built, "su1-leaf1:Ethernet8", "su1-srv2:eth0")
    c2 = _cable(built, "su1-leaf2:Ethernet8", "su1-srv2:eth1")
    c1["b_terminations"], c2["b_terminations"] = c2["b_terminations"], c1["b_terminations"]
    diffs = compare(tiny[0], tiny[1], built).differences
    assert [(d.rule, d.subject) for d in diffs] == [("SOT-CABLE-SWAP", "su1-srv2")]
    assert diffs[0].message == (
        "su1-srv2 eth0 and eth1 are swapped: eth0 lands on su1-leaf2 Ethernet8 (plan: su1-leaf1 Ethernet8), "
        "eth1 on su1-leaf1 Ethernet8 (plan: su1-leaf2 Ethernet8)"
    )


def test_pull_names_a_miswire_an_extra_and_a_missing_cable(tiny: tuple[Any, Desired]) -> None:
    built = _as_built(*tiny)
    moved = _cable(built, "su1-leaf1:Ethernet0", "su1-srv1:eth0")
    moved["a_terminations"] = copy.deepcopy(moved["a_terminations"])
    moved["a_terminations"][0]["object"]["name"] = "Ethernet64"  # a port the plan leaves unused
    extra = copy.deepcopy(moved)
    extra["id"] = 777_777
    extra["a_terminations"][0]["object"].update(name="Ethernet72")
    extra["b_terminations"][0]["object"].update(name="Ethernet80", device={"name": "su1-leaf2"})
    gone = _cable(built, "spine1:Ethernet1/1", "su1-leaf1:Ethernet32")
    built.cables = [c for c in built.cables if c is not gone] + [extra]
    diffs = compare(tiny[0], tiny[1], built).differences
    assert sorted(d.rule for d in diffs) == ["SOT-CABLE-EXTRA", "SOT-CABLE-MISSING", "SOT-CABLE-MISWIRED"], diffs
    miswired = next(d for d in diffs if d.rule == "SOT-CABLE-MISWIRED")
    assert miswired.message == (
        "su1-leaf1 Ethernet64 is cabled to su1-srv1 eth0 in NetBox; the plan has su1-srv1 eth0 <-> su1-leaf1 Ethernet0"
    )


def test_pull_names_a_device_of_another_model_and_a_missing_one(tiny: tuple[Any, Desired]) -> None:
    built = _as_built(*tiny)
    built.devices["spine2"]["device_type"] = {
        "id": 5,
        "slug": "7060x6",
        "model": "7060X6",
        "manufacturer": {"name": "Arista"},
    }
    del built.devices["su1-srv4"]
    diffs = compare(tiny[0], tiny[1], built).differences
    assert sorted((d.rule, d.subject) for d in diffs) == [("SOT-DEVICE-MISSING", "su1-srv4"), ("SOT-MODEL", "spine2")]
    assert next(d for d in diffs if d.rule == "SOT-MODEL").actual == "Arista 7060X6"


def test_a_fabric_never_pushed_is_one_difference(tiny: tuple[Any, Desired]) -> None:
    diffs = compare(tiny[0], tiny[1], AsBuilt(site_found=False)).differences
    assert [d.rule for d in diffs] == ["SOT-NO-SITE"]


def test_the_token_comes_only_from_the_environment_and_is_redacted() -> None:
    with pytest.raises(NetBoxError) as info:
        token_from_env({})
    assert info.value.usage and "NETFAB_NETBOX_TOKEN" in str(info.value)
    assert token_from_env({"NETFAB_NETBOX_TOKEN": " nbt_a.b "}) == "nbt_a.b"
    assert env_secrets({"NETFAB_NETBOX_TOKEN": "nbt_a.b"}) == ("nbt_a.b",)
    for bad in ("ftp://x", "netbox.example", "https://user:pw@nb.example"):
        with pytest.raises(NetBoxError):
            check_url(bad)


class _Echo(http.server.BaseHTTPRequestHandler):
    """A NetBox that refuses every token and echoes the Authorization header back (a worst case)."""

    def do_GET(self) -> None:
        body = f'{{"detail": "Invalid token {self.headers.get("Authorization")}"}}'.encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_refused_token_is_a_usage_error_that_never_shows_the_token() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    secret = "nbt_KEY0123456789.s3cr3t-v4lue-0123456789"
    try:
        with (
            NetBox(Options(url=f"http://127.0.0.1:{server.server_port}", token=secret)) as nb,
            pytest.raises(NetBoxError) as info,
        ):
            nb.status()
    finally:
        server.shutdown()
        server.server_close()
    assert info.value.usage and "refused the token" in str(info.value)
    assert "s3cr3t" not in str(info.value) and "KEY0123456789" not in str(info.value)


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("NETFAB_")}
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args],
        capture_output=True,
        text=True,
        env={**base, "PYTHONPATH": str(REPO), **env},
        timeout=120,
    )


def test_cli_usage_errors_exit_2_before_any_request() -> None:
    tiny = str(INTENTS / "tiny.yaml")
    done = _cli("sot", "push", tiny, "--netbox", "https://127.0.0.1:9", env={})
    assert done.returncode == 2 and "NETFAB_NETBOX_TOKEN" in done.stderr and "Traceback" not in done.stderr
    done = _cli("sot", "pull", tiny, "--netbox", "nb.example", env={"NETFAB_NETBOX_TOKEN": "nbt_x.y"})
    assert done.returncode == 2 and "http(s) URL" in done.stderr
    # Nothing listens on port 9: unreachable is the operator's to fix (exit 2), with no token in the text.
    done = _cli("sot", "pull", tiny, "--netbox", "http://127.0.0.1:9", env={"NETFAB_NETBOX_TOKEN": "nbt_x.zz9secret"})
    assert done.returncode == 2 and "cannot reach NetBox" in done.stderr and "zz9secret" not in done.stderr
    done = _cli(
        "sot",
        "push",
        tiny,
        "--netbox",
        "http://127.0.0.1:9",
        "--insecure-skip-tls-verify",
        env={"NETFAB_NETBOX_TOKEN": "t"},
    )
    assert done.returncode == 2 and "TLS verification" in done.stderr and "OFF" in done.stderr
    rules = _cli("rules", "--verb", "sot", env={})
    assert rules.returncode == 0 and "SOT-CABLE-SWAP" in rules.stdout


class _Pages(http.server.BaseHTTPRequestHandler):
    """A list endpoint of 2,500 objects per filter value, paged the way NetBox pages (limit/offset/next)."""

    def do_GET(self) -> None:
        from urllib.parse import parse_qs, urlsplit

        query = parse_qs(urlsplit(self.path).query)
        limit, offset = int(query["limit"][0]), int(query["offset"][0])
        names = query.get("name", ["x"])
        everything = [{"id": f"{n}-{i}", "name": n} for n in names for i in range(2500)]
        page = everything[offset : offset + limit]
        more = offset + limit < len(everything)
        body = json.dumps({"count": len(everything), "next": "more" if more else None, "results": page}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_reads_fetch_every_page_in_parallel_without_starving_the_pool() -> None:
    """get_many's chunks each page in parallel: with more chunks than workers this once waited forever."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with NetBox(Options(url=f"http://127.0.0.1:{server.server_port}", token="t", workers=2)) as nb:
            done: list[list[dict[str, Any]]] = []
            reader = threading.Thread(
                target=lambda: done.append(nb.get_many("dcim/devices", "name", list("abcdef"), per_request=1))
            )
            reader.start()
            reader.join(timeout=60)
            assert done, "get_many did not finish"
    finally:
        server.shutdown()
        server.server_close()
    ids = [r["id"] for r in done[0]]
    assert len(ids) == 6 * 2500 == len(set(ids))


class _FakeNetBox(http.server.BaseHTTPRequestHandler):
    """Just enough of NetBox's API for the CLI to connect: /api/status/, and a site list that is empty, or
    (`server.echo_500`) a 500 whose body quotes the request's Authorization header (a worst case)."""

    def do_GET(self) -> None:
        if self.path.startswith("/api/status/"):
            status, body = 200, {"netbox-version": "4.7.3"}
        elif getattr(self.server, "echo_500", False):
            status, body = 500, {"error": f"boom, header was {self.headers.get('Authorization')}"}
        else:
            status, body = 200, {"count": 0, "next": None, "results": []}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tls_netbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The fake NetBox over HTTPS with a self-signed certificate for 127.0.0.1 (made here with openssl)."""
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeNetBox)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_port}", cert
    finally:
        server.shutdown()
        server.server_close()


def test_tls_is_verified_by_default(tls_netbox: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    url, cert = tls_netbox
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    assert Options(url=url, token="t").verify_tls is True
    with NetBox(Options(url=url, token="nbt_k.secret-tls-1")) as nb, pytest.raises(NetBoxError) as info:
        nb.status()
    assert info.value.usage and "TLS verification failed" in str(info.value) and "secret-tls-1" not in str(info.value)
    # The same server is accepted once its certificate is trusted: verification is on, not a broken transport.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    with NetBox(Options(url=url, token="t")) as nb:
        assert nb.status()["netbox-version"] == "4.7.3"
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    with NetBox(Options(url=url, token="t", verify_tls=False)) as nb:
        assert nb.status()["netbox-version"] == "4.7.3"


def test_cli_verifies_tls_unless_told_and_then_warns(tls_netbox: tuple[str, Path]) -> None:
    url, _ = tls_netbox
    tiny = str(INTENTS / "tiny.yaml")
    env = {"NETFAB_NETBOX_TOKEN": "nbt_k.cli-secret-77"}
    done = _cli("sot", "pull", tiny, "--netbox", url, env=env)
    assert done.returncode == 2 and "TLS verification failed" in done.stderr, done.stderr
    done = _cli("sot", "pull", tiny, "--netbox", url, "--insecure-skip-tls-verify", "-f", "json", env=env)
    # Connected (no site yet: one difference, exit 1), and said loudly that TLS was not checked.
    assert done.returncode == 1, done.stderr
    assert [f["rule_id"] for f in json.loads(done.stdout)["findings"]] == ["SOT-NO-SITE"]
    assert "TLS verification of" in done.stderr and "is OFF" in done.stderr
    assert "cli-secret-77" not in done.stdout + done.stderr


def test_an_error_that_quotes_the_token_is_redacted(tls_netbox: tuple[str, Path]) -> None:
    """NetBox answers 500 with the Authorization header in its body: the error netfab prints masks the token
    (and the run is an environment failure, exit 3, not a traceback)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeNetBox)
    server.echo_500 = True  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = "nbt_KEY42.v3ry-s3cret-0123456789"
    try:
        done = _cli(
            "sot",
            "pull",
            str(INTENTS / "tiny.yaml"),
            "--netbox",
            f"http://127.0.0.1:{server.server_port}",
            env={"NETFAB_NETBOX_TOKEN": secret},
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 3 and "NetBox answered 500" in done.stderr, done.stderr
    assert "v3ry-s3cret" not in done.stdout + done.stderr and "KEY42" not in done.stderr
    assert "Traceback" not in done.stderr


def test_the_live_fixture_says_why_it_cannot_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where NetBox cannot be brought up the live tests skip with the reason: each missing piece is named."""
    from tests.sot import netbox_server

    monkeypatch.delenv("NETFAB_PYTHON312", raising=False)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(netbox_server.CannotStart, match=r"no Python 3\.12"):
        netbox_server.find_python312()
    monkeypatch.setattr(netbox_server.shutil, "which", lambda name: None)
    with pytest.raises(netbox_server.CannotStart, match="no redis-server"):
        netbox_server.start()
