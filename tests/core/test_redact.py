"""The redaction matrix: format x keyword, each with its exact masked form, plus lines that must stay as they are.

Every row names the secret it carries; the masked text must be exactly `expected` (so a mask that eats the
keyword, a trailing ';' or the next line fails too), and the secret must be gone. Rows under KEEP are lines a
real config holds whose words look like secrets but are not: masking them would hide real drift.
"""

from __future__ import annotations

import json
import logging

import pytest
import yaml

from netfab.core.redact import MASK, Format, MaskedSecret, install_log_redaction, redact, restore_secrets

M = MASK
# (format, id, text, secret, expected)
MATRIX: list[tuple[Format, str, str, str, str]] = [
    # --- CLI keyword lines -------------------------------------------------------------------------------------
    (Format.CLI, "eos-secret-sha512", "username admin secret sha512 $6$abc.def/", "$6$abc.def/",
     f"username admin secret sha512 {M}"),
    (Format.CLI, "eos-role-secret-0", "username ops privilege 15 role network-admin secret 0 Pl41n",
     "Pl41n", f"username ops privilege 15 role network-admin secret 0 {M}"),
    (Format.CLI, "enable-secret-5", "enable secret 5 $1$mERr$hx5", "$1$mERr$hx5", f"enable secret 5 {M}"),
    (Format.CLI, "username-password-7", "username admin password 7 0822455D0A16", "0822455D0A16",
     f"username admin password 7 {M}"),
    (Format.CLI, "eos-bgp-neighbor-password", "   neighbor 10.0.0.1 password 7 Hx0Q==", "Hx0Q==",
     f"   neighbor 10.0.0.1 password 7 {M}"),
    (Format.CLI, "frr-bgp-neighbor-password", " neighbor swp1 password b6pw!", "b6pw!", f" neighbor swp1 password {M}"),
    (Format.CLI, "frr-vty-password", "password zebra", "zebra", f"password {M}"),
    (Format.CLI, "frr-enable-password-8", "enable password 8 AB/cd.ef", "AB/cd.ef", f"enable password 8 {M}"),
    (Format.CLI, "nxos-bgp-password-3", "    password 3 d1c5e9d3", "d1c5e9d3", f"    password 3 {M}"),
    (Format.CLI, "junos-encrypted-password", '            encrypted-password "$6$salt$hash"; ## SECRET-DATA',
     "$6$salt$hash", f'            encrypted-password "{M}"; ## SECRET-DATA'),
    (Format.CLI, "junos-bgp-authentication-key", '        authentication-key "$9$abcXYZ"; ## SECRET-DATA',
     "$9$abcXYZ", f'        authentication-key "{M}"; ## SECRET-DATA'),
    (Format.CLI, "junos-set-authentication-key", "set protocols bgp group ebgp authentication-key k3yV4l",
     "k3yV4l", f"set protocols bgp group ebgp authentication-key {M}"),
    (Format.CLI, "ospf-authentication-key", "   ip ospf authentication-key 7 070C285F4D06", "070C285F4D06",
     f"   ip ospf authentication-key 7 {M}"),
    (Format.CLI, "ospf-message-digest-key", " ip ospf message-digest-key 1 md5 SuperSecret", "SuperSecret",
     f" ip ospf message-digest-key 1 md5 {M}"),
    (Format.CLI, "ospf-message-digest-key-7", "   ip ospf message-digest-key 2 md5 7 0822455D0A", "0822455D0A",
     f"   ip ospf message-digest-key 2 md5 7 {M}"),
    (Format.CLI, "key-chain-key-string", "  key-string 7 045802150C2E", "045802150C2E", f"  key-string 7 {M}"),
    (Format.CLI, "tacacs-key", "tacacs-server host 10.1.1.1 key 7 0312", "0312",
     f"tacacs-server host 10.1.1.1 key 7 {M}"),
    (Format.CLI, "radius-key", "radius-server key r4d1us", "r4d1us", f"radius-server key {M}"),
    (Format.CLI, "snmp-community", "snmp-server community pubL1c ro", "pubL1c", f"snmp-server community {M} ro"),
    (Format.CLI, "junos-set-snmp-community", "set snmp community pr1vate authorization read-only", "pr1vate",
     f"set snmp community {M} authorization read-only"),
    (Format.CLI, "junos-curly-snmp-community",
     "snmp {\n    community c0mmun1ty {\n        authorization read-only;\n    }\n}", "c0mmun1ty",
     f"snmp {{\n    community {M} {{\n        authorization read-only;\n    }}\n}}"),
    (Format.CLI, "nvue-set-community", "nv set system snmp-server readonly-community r0comm access any", "r0comm",
     f"nv set system snmp-server readonly-community {M} access any"),
    (Format.CLI, "diff-line", "-   neighbor 10.0.0.1 password 0ldPw\n+   neighbor 10.0.0.1 password n3wPw", "0ldPw",
     f"-   neighbor 10.0.0.1 password {M}\n+   neighbor 10.0.0.1 password {M}"),
    # --- JSON keys at any depth ---------------------------------------------------------------------------------
    (Format.JSON, "sonic-bgp-neighbor-password",
     '{"BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65100", "password": "s0n1cPw"}}}', "s0n1cPw",
     f'{{"BGP_NEIGHBOR": {{"default|10.0.0.1": {{"asn": "65100", "password": "{M}"}}}}}}'),
    (Format.JSON, "sonic-pretty", '        "10.0.0.1": {\n            "password": "pr3tty",\n', "pr3tty",
     f'        "10.0.0.1": {{\n            "password": "{M}",\n'),
    (Format.JSON, "tacplus-passkey", '{"TACPLUS": {"global": {"passkey": "t4c\\"k3y"}}}', 't4c\\"k3y',
     f'{{"TACPLUS": {{"global": {{"passkey": "{M}"}}}}}}'),
    (Format.JSON, "numeric-password", '{"auth_key": 123456}', "123456", f'{{"auth_key": "{M}"}}'),
    (Format.JSON, "sonic-snmp-community-pretty",
     '{\n    "SNMP_COMMUNITY": {\n        "s3cretComm": {\n            "TYPE": "RO"\n        }\n    }\n}',
     "s3cretComm",
     f'{{\n    "SNMP_COMMUNITY": {{\n        "{M}": {{\n            "TYPE": "RO"\n        }}\n    }}\n}}'),
    (Format.JSON, "sonic-snmp-community-compact", '{"SNMP_COMMUNITY": {"c0mpact": {"TYPE": "RW"}}}', "c0mpact",
     f'{{"SNMP_COMMUNITY": {{"{M}": {{"TYPE": "RW"}}}}}}'),
    # --- YAML keys (NVUE) -----------------------------------------------------------------------------------
    (Format.YAML, "nvue-bgp-password", "          neighbor:\n            swp1:\n              password: nvuePw\n",
     "nvuePw", f"          neighbor:\n            swp1:\n              password: '{M}'\n"),
    (Format.YAML, "nvue-hashed-password", "        admin:\n          hashed-password: '$6$x$y'\n", "$6$x$y",
     f"        admin:\n          hashed-password: '{M}'\n"),
    (Format.YAML, "nvue-ospf-md5-key", "            md5-key: 0spfK\n            message-digest-key: 1\n", "0spfK",
     f"            md5-key: '{M}'\n            message-digest-key: 1\n"),
    (Format.YAML, "yaml-list-item", "- password: l1st\n", "l1st", f"- password: '{M}'\n"),
    (Format.YAML, "yaml-in-a-diff", "+              password: d1ffPw\n", "d1ffPw", f"+              password: '{M}'\n"),
    (Format.YAML, "nvue-readonly-community",
     "      snmp-server:\n        readonly-community:\n          y4mlComm:\n            access:\n"
     "              any: {}\n",
     "y4mlComm",
     f"      snmp-server:\n        readonly-community:\n          '{M}':\n            access:\n"
     "              any: {}\n"),
]  # fmt: skip

KEEP = [
    (Format.CLI, "load-balance policies\n   sand profile default\n      fields ip enhanced-hash-key dst-ip"),
    (Format.CLI, "port-channel load-balance hash-key 5"),
    (Format.CLI, "key chain OSPF-KEYS\n ip ospf authentication key-chain OSPF-KEYS"),
    (Format.CLI, "service password-encryption"),
    (Format.CLI, "username admin nopassword"),
    (Format.CLI, "bgp community-list standard NO-EXPORT permit no-export"),
    (Format.CLI, "policy-options {\n    community RAILS members 65000:1;\n}"),
    (Format.CLI, "route-map RM permit 10\n set community 65000:100"),
    (Format.CLI, "secret\nhostname leaf1"),  # a keyword at the end of a line never masks the next line
    (Format.JSON, '{"PORTCHANNEL": {"hash-key": "5"}, "key": "value", "keychain": "K1"}'),
    (Format.JSON, '{"SNMP": {"LOCATION": {"Location": "rack 12"}}}'),
    (Format.YAML, "message-digest-key: 1\nkey-chain: OSPF\nhash-key: 3\npassword-encryption: on\n"),
    (Format.YAML, "community: public-cloud-tenant\n"),  # a BGP community list name, not SNMP
]


@pytest.mark.parametrize(("fmt", "text", "secret", "expected"), [r[0:1] + r[2:] for r in MATRIX],
                         ids=[f"{r[0].value}-{r[1]}" for r in MATRIX])  # fmt: skip
def test_every_format_and_keyword_is_masked_exactly(fmt: Format, text: str, secret: str, expected: str) -> None:
    assert secret in text
    masked = redact(text)
    assert masked == expected
    assert secret not in masked
    assert redact(masked) == masked  # idempotent: a journal's text can pass through twice
    assert redact(text, formats={fmt}) == expected  # the format's own table is enough
    assert masked.count("\n") == text.count("\n")  # line for line: restore_secrets relies on it


@pytest.mark.parametrize(("fmt", "text"), KEEP, ids=[f"{f.value}-{i}" for i, (f, _) in enumerate(KEEP)])
def test_look_alikes_stay_untouched(fmt: Format, text: str) -> None:
    assert redact(text) == text


def test_the_matrix_covers_every_format_and_the_issue_keywords() -> None:
    assert {row[0] for row in MATRIX} == set(Format)
    joined = "\n".join(row[2] for row in MATRIX)
    for keyword in ("secret sha512", "encrypted-password", "authentication-key", "message-digest-key 1 md5",
                    "snmp-server community", '"password"', "password:", "SNMP_COMMUNITY"):  # fmt: skip
        assert keyword in joined, keyword


def test_parsed_masked_documents_still_parse() -> None:
    """A masked SONiC config_db or NVUE YAML is still a document the audit can compare."""
    db = {"BGP_NEIGHBOR": {"10.0.0.1": {"password": "x1", "auth_key": 42}}, "SNMP_COMMUNITY": {"pub": {"TYPE": "RO"}}}
    for text in (json.dumps(db, indent=4), json.dumps(db)):
        assert json.loads(redact(text)) == {
            "BGP_NEIGHBOR": {"10.0.0.1": {"password": M, "auth_key": M}},
            "SNMP_COMMUNITY": {M: {"TYPE": "RO"}},
        }
    nvue = {"set": {"router": {"bgp": {"neighbor": {"swp1": {"password": "x2", "remote-as": "external"}}}}}}
    assert yaml.safe_load(redact(yaml.safe_dump(nvue))) == {
        "set": {"router": {"bgp": {"neighbor": {"swp1": {"password": M, "remote-as": "external"}}}}}
    }


def test_non_ascii_text_before_a_secret_keeps_positions() -> None:
    # 'İ'.lower() is two characters: a position found in str.lower()'s text would be off by one here
    text = "description İstanbul-İzmir\n neighbor 10.0.0.1 password k3y\n"
    assert redact(text) == f"description İstanbul-İzmir\n neighbor 10.0.0.1 password {M}\n"


def test_known_secret_values_are_masked_anywhere() -> None:
    assert redact("% Authentication failed for ops/Zq7-pw", ("Zq7-pw",)) == f"% Authentication failed for ops/{M}"
    assert redact("nothing here", ("",)) == "nothing here"


# --- restore_secrets: what rollback does with a masked backup ---------------------------------------------------
BACKUP = (
    "hostname leaf1\nusername admin secret sha512 $6$abc\n!\nrouter bgp 65100\n neighbor 10.0.0.1 password s3cr3t\n"
    " neighbor 10.0.0.2 password other\n!\n"
)


def test_masked_lines_take_their_own_values_from_the_running_config() -> None:
    masked = redact(BACKUP)
    assert "s3cr3t" not in masked and "$6$abc" not in masked and masked.count(M) == 3
    running = BACKUP.replace("hostname leaf1", "hostname leaf1-new")
    assert restore_secrets(masked, running) == BACKUP


def test_a_secret_the_device_no_longer_has_is_refused_not_pushed_masked() -> None:
    masked = redact(BACKUP)
    running = (
        "hostname leaf1\nusername admin secret sha512 $6$abc\nrouter bgp 65100\n neighbor 10.0.0.2 password other\n"
    )
    with pytest.raises(MaskedSecret, match=r"neighbor 10\.0\.0\.1 password.*restore that line by hand"):
        restore_secrets(masked, running)


def test_json_passwords_are_matched_by_their_object_not_by_line_shape() -> None:
    """Two SONiC neighbors with different passwords: each masked line gets its own neighbor's value."""
    db = {"BGP_NEIGHBOR": {"10.0.0.1": {"password": "one"}, "10.0.0.2": {"password": "two"}}}
    text = json.dumps(db, indent=4) + "\n"
    restored = restore_secrets(redact(text), text)
    assert json.loads(restored) == db
    # the same neighbor holding two values is ambiguous: refused, never guessed
    twice = text.replace('"10.0.0.2"', '"10.0.0.1"')
    with pytest.raises(MaskedSecret, match="several values"):
        restore_secrets(redact(twice), twice)


def test_log_records_are_masked_when_created(caplog: pytest.LogCaptureFixture) -> None:
    before = logging.getLogRecordFactory()
    try:
        install_log_redaction(("Zq7-env-pw",))
        install_log_redaction(("Zq7-env-pw",))  # twice (tests, re-entry): still one wrapper
        caplog.set_level(logging.DEBUG)
        log = logging.getLogger("netfab.test")
        log.warning("pushed %s", " neighbor 10.0.0.1 password hunter2")
        try:
            raise RuntimeError("login Zq7-env-pw refused")
        except RuntimeError:
            log.exception("failed")
        assert "hunter2" not in caplog.text and "Zq7-env-pw" not in caplog.text
        assert f"password {M}" in caplog.text and f"login {M} refused" in caplog.text
    finally:
        logging.setLogRecordFactory(before)
