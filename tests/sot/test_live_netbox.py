"""sot push/pull against a real NetBox (the session fixture in conftest.py): idempotency, growth, ownership,
dry run, the SU round trip with zero differences, and as-built edits made with pynetbox read back as exactly
those differences."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from netfab.cli.pipeline import load_plan
from netfab.sot.client import NetBox, Options
from netfab.sot.desired import desired_state, slugify
from netfab.sot.pull import compare, read_as_built
from netfab.sot.push import push
from tests.sot.conftest import INTENTS
from tests.sot.fabrics import relocated
from tests.sot.netbox_server import NetBoxServer

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, token: str | None, cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETFAB_")}
    env["PYTHONPATH"] = str(REPO)
    if token is not None:
        env["NETFAB_NETBOX_TOKEN"] = token
    done = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=1800
    )
    return done.returncode, done.stdout, done.stderr


def client(server: NetBoxServer) -> NetBox:
    return NetBox(Options(url=server.url, token=server.token))


def api(server: NetBoxServer) -> Any:
    import pynetbox

    return pynetbox.api(server.url, token=server.token)


def plan_of(path: Path) -> Any:
    loaded = load_plan([path])
    return loaded, desired_state(loaded.intent, loaded.plan)


def test_su_round_trip_push_twice_pull_clean_then_a_miswire(
    netbox: NetBoxServer, tmp_path: Path, check_report_json: Any
) -> None:
    """The SU (1,072 interfaces, 512 cables, 560 addresses, 9 ASNs) through the CLI: first push creates it all,
    the second changes nothing, the pull finds zero differences; then a rail swap made in NetBox with pynetbox
    is reported as exactly that one difference, and a push leaves the as-built cables alone."""
    intent = relocated(INTENTS / "su1.yaml", "sot-su1", 2, tmp_path)
    code, out, err = run_cli(
        "sot", "push", str(intent), "--netbox", netbox.url, "-f", "json", token=netbox.token, cwd=tmp_path
    )
    assert code == 0, err
    first = check_report_json(out, "sot")
    kinds = first["details"]["kinds"]
    assert kinds["interface"]["create"] == 1072 and kinds["cable"]["create"] == 512
    assert kinds["ip_address"]["create"] == 560 and kinds["device"]["create"] == 56
    # ASNs are shared vocabulary: another fabric in the same NetBox may have created some of the 9 already.
    assert kinds["asn"]["create"] + kinds["asn"]["unchanged"] == 9
    assert first["details"]["changes"] == sum(r["create"] + r["update"] for r in kinds.values())

    code, out, err = run_cli(
        "sot", "push", str(intent), "--netbox", netbox.url, "-f", "json", token=netbox.token, cwd=tmp_path
    )
    assert code == 0, err
    second = json.loads(out)
    assert second["details"]["changes"] == 0, [f["message"] for f in second["findings"]][:5]
    assert second["details"]["kinds"]["interface"]["unchanged"] == 1072

    code, out, err = run_cli(
        "sot",
        "pull",
        str(intent),
        "--netbox",
        netbox.url,
        "--out",
        "inv",
        "-f",
        "json",
        token=netbox.token,
        cwd=tmp_path,
    )
    assert code == 0, out + err
    pulled = check_report_json(out, "sot")
    assert pulled["findings"] == [] and pulled["details"]["recorded"] == {"devices": 56, "cables": 512}
    hosts = yaml.safe_load((tmp_path / "inv" / "hosts.yaml").read_text(encoding="utf-8"))
    assert len(hosts) == 24 and hosts["su1-leaf1"]["hostname"].startswith("127.77.")
    assert hosts["su1-leaf1"]["data"]["asbuilt"]["model"].startswith("NVIDIA ")

    # A rail swap: su1-srv3's rail-1 and rail-2 NICs (DGX H100 profile: enp24s0np0, enp64s0np0) exchanged at
    # the leaf end, as a technician would record it.
    nb = api(netbox)
    site = nb.dcim.sites.get(slug="sot-su1")
    rail1, rail2 = ("su1-srv3", "enp24s0np0"), ("su1-srv3", "enp64s0np0")
    port = {
        (dev, name): nb.dcim.interfaces.get(site_id=site.id, device=dev, name=name)
        for dev, name in (("su1-leaf1", "swp3"), ("su1-leaf2", "swp3"), rail1, rail2)
    }
    for leaf in (("su1-leaf1", "swp3"), ("su1-leaf2", "swp3")):
        nb.dcim.cables.get(port[leaf].cable.id).delete()
    for leaf, nic in ((("su1-leaf1", "swp3"), rail2), (("su1-leaf2", "swp3"), rail1)):
        nb.dcim.cables.create(
            a_terminations=[{"object_type": "dcim.interface", "object_id": port[leaf].id}],
            b_terminations=[{"object_type": "dcim.interface", "object_id": port[nic].id}],
            status="connected",
        )
    code, out, _ = run_cli(
        "sot",
        "pull",
        str(intent),
        "--netbox",
        netbox.url,
        "--out",
        "inv",
        "-f",
        "json",
        token=netbox.token,
        cwd=tmp_path,
    )
    assert code == 1
    findings = json.loads(out)["findings"]
    assert [(f["rule_id"], f["subject"]) for f in findings] == [("SOT-CABLE-SWAP", "su1-srv3")], findings
    assert "enp24s0np0 and enp64s0np0 are swapped" in findings[0]["message"], findings

    # The push leaves the as-built cables alone: netfab re-creates neither (the ports are taken) nor deletes.
    code, out, err = run_cli(
        "sot", "push", str(intent), "--netbox", netbox.url, "--dry-run", "-f", "json", token=netbox.token, cwd=tmp_path
    )
    assert json.loads(out)["details"]["kinds"]["cable"].get("create", 0) == 0, out


def test_push_only_adds_when_the_fabric_grows_and_dry_run_writes_nothing(netbox: NetBoxServer, tmp_path: Path) -> None:
    small = relocated(INTENTS / "tiny.yaml", "sot-grow", 3, tmp_path)
    grown = relocated(INTENTS / "tiny-grown.yaml", "sot-grow", 3, tmp_path / "grown")
    with client(netbox) as nb:
        _, desired = plan_of(small)
        dry = push(nb, desired, dry_run=True)
        # All creates, but the devices' primary address: a field of the device, set once the address exists.
        assert dry.changes and {c.action for c in dry.changes if c.kind != "primary_ip"} == {"create"}
        assert {c.action for c in dry.changes if c.kind == "primary_ip"} == {"update"}
        assert read_as_built(nb, "sot-grow").site_found is False  # the dry run wrote nothing
        made = push(nb, desired)
        assert len(made.changes) == len(dry.changes)  # a dry run announces exactly what a push does
        before = {d["name"]: d["id"] for d in nb.get("dcim/devices", {"site": "sot-grow"}, fields=("id", "name"))}
        _, bigger = plan_of(grown)
        again = push(nb, bigger)
        grew = [c for c in again.changes if c.kind not in ("site", "primary_ip")]
        assert grew and {c.action for c in grew} == {"create"}, [c for c in grew if c.action != "create"][:3]
        # The site's ASN list grows with the new SU's leaves: the one planned update (and the new switches'
        # primary addresses, set once created).
        updated = [(c.kind, c.fields) for c in again.changes if c.action == "update" and c.kind != "primary_ip"]
        assert updated == [("site", ("asns",))]
        new_devices = {c.key for c in again.changes if c.kind == "device"}
        assert {c.key for c in again.changes if c.kind == "primary_ip"} <= new_devices
        after = {d["name"]: d["id"] for d in nb.get("dcim/devices", {"site": "sot-grow"}, fields=("id", "name"))}
        assert {n: after[n] for n in before} == before and len(after) > len(before)
        assert push(nb, bigger).changes == []


def test_objects_netfab_does_not_own_are_never_touched(netbox: NetBoxServer, tmp_path: Path) -> None:
    intent = relocated(INTENTS / "tiny.yaml", "sot-owned", 4, tmp_path)
    loaded, _ = plan_of(intent)
    nb = api(netbox)
    # Someone else's device already holds a planned name in the fabric's site (no netfab tag).
    site = nb.dcim.sites.create(name="sot-owned", slug="sot-owned")
    maker = nb.dcim.manufacturers.create(name="Someone", slug="someone-owned")
    dtype = nb.dcim.device_types.create(manufacturer=maker.id, model="Their box", slug="their-box-owned")
    role = nb.dcim.device_roles.create(name="theirs", slug="theirs-owned")
    theirs = nb.dcim.devices.create(name="su1-leaf1", site=site.id, device_type=dtype.id, role=role.id, serial="X1")
    code, out, _ = run_cli(
        "sot", "push", str(intent), "--netbox", netbox.url, "-f", "json", token=netbox.token, cwd=tmp_path
    )
    assert code == 1
    report = json.loads(out)
    conflicts = [f for f in report["findings"] if f["rule_id"] == "SOT-NOT-OWNED"]
    assert [c["path"] for c in conflicts] == ["device/su1-leaf1"]
    again = nb.dcim.devices.get(theirs.id)
    assert (again.device_type.id, again.role.id, again.serial, again.tags) == (dtype.id, role.id, "X1", [])
    assert len(nb.dcim.interfaces.filter(device_id=theirs.id)) == 0  # nothing hung off it
    # A user's own tag and description on a netfab device survive a push that has nothing to change.
    mine = nb.dcim.devices.get(name="su1-leaf2", site_id=site.id)
    user_tag = nb.extras.tags.create(name="pilot", slug="pilot-owned")
    mine.update({"tags": [*[{"id": t.id} for t in mine.tags], {"id": user_tag.id}], "comments": "rack A7"})
    code, out, _ = run_cli(
        "sot", "push", str(intent), "--netbox", netbox.url, "-f", "json", token=netbox.token, cwd=tmp_path
    )
    assert json.loads(out)["details"]["changes"] == 0
    mine = nb.dcim.devices.get(mine.id)
    assert {t.slug for t in mine.tags} == {"netfab", "pilot-owned"} and mine.comments == "rack A7"
    assert loaded.plan.name == "sot-owned"


def test_pull_reports_another_model_a_moved_management_address_and_an_edited_cable(
    netbox: NetBoxServer, tmp_path: Path
) -> None:
    """Three as-built edits made in NetBox with pynetbox, each read back by the pull as exactly that
    difference: spine1 installed as another model, its management address moved, and one cable re-landed
    (edited in place) on a spine port the plan leaves unused."""
    intent = relocated(INTENTS / "tiny.yaml", "sot-model", 5, tmp_path)
    loaded, desired = plan_of(intent)
    with client(netbox) as nbc:
        push(nbc, desired)
    nb = api(netbox)
    site = nb.dcim.sites.get(slug="sot-model")
    spine = nb.dcim.devices.get(name="spine1", site_id=site.id)
    other = nb.dcim.device_types.create(
        manufacturer=spine.device_type.manufacturer.id, model="7060X6", slug="7060x6-model"
    )
    spine.update({"device_type": other.id, "serial": "JPE123"})
    ip = nb.ipam.ip_addresses.get(id=spine.primary_ip4.id)
    ip.update({"address": "127.77.5.250/24"})
    # The cable spine1 Ethernet1/1 <-> su1-leaf1 Ethernet32, its spine end moved to Ethernet1/8 (a port the
    # plan does not use, recorded by hand, untagged) by editing the cable's terminations.
    planned = nb.dcim.interfaces.get(site_id=site.id, device="spine1", name="Ethernet1/1")
    spare = nb.dcim.interfaces.create(device=spine.id, name="Ethernet1/8", type="400gbase-x-qsfpdd")
    cable = nb.dcim.cables.get(planned.cable.id)
    side = "a_terminations" if cable.a_terminations[0].object_id == planned.id else "b_terminations"
    cable.update({side: [{"object_type": "dcim.interface", "object_id": spare.id}]})
    with client(netbox) as nbc:
        result = compare(loaded.plan, desired, read_as_built(nbc, "sot-model"))
    rules = sorted((d.rule, d.subject) for d in result.differences)
    expected = [("SOT-CABLE-MISWIRED", "spine1"), ("SOT-MGMT", "spine1"), ("SOT-MODEL", "spine1")]
    assert rules == expected, result.differences
    miswired = next(d for d in result.differences if d.rule == "SOT-CABLE-MISWIRED")
    assert miswired.message == (
        "spine1 Ethernet1/8 is cabled to su1-leaf1 Ethernet32 in NetBox; the plan has "
        "su1-leaf1 Ethernet32 <-> spine1 Ethernet1/1"
    ), miswired
    model = next(d for d in result.differences if d.rule == "SOT-MODEL")
    assert model.actual == "Arista 7060X6"
    assert result.overrides["spine1"]["hostname"] == "127.77.5.250"
    assert result.overrides["spine1"]["data"]["asbuilt"]["serial"] == "JPE123"


def test_credentials_only_from_the_environment_and_never_shown(netbox: NetBoxServer, tmp_path: Path) -> None:
    intent = INTENTS / "tiny.yaml"
    code, _, err = run_cli("sot", "pull", str(intent), "--netbox", netbox.url, token=None, cwd=tmp_path)
    assert code == 2 and "NETFAB_NETBOX_TOKEN" in err
    bogus = "nbt_abcdefghijkl.0123456789abcdef0123456789abcdef01234567"
    code, out, err = run_cli("sot", "push", str(intent), "--netbox", netbox.url, token=bogus, cwd=tmp_path)
    assert code == 2 and "refused the token" in err and bogus not in out + err and "0123456789abcdef" not in err
    code, _, err = run_cli("sot", "push", str(intent), "--netbox", "ftp://x", token=netbox.token, cwd=tmp_path)
    assert code == 2 and "http(s) URL" in err
    assert slugify("sot-tiny") == "sot-tiny"
