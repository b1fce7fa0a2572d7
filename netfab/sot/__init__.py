"""sot: the plan into NetBox (push) and the as-built state back (pull), with the differences as findings.

desired.py turns the plan into the objects netfab owns; kinds.py says how each kind lives in NetBox;
push.py reconciles (create, patch what netfab owns, never touch the rest); pull.py reads what NetBox records
and compares; findings.py is the shared findings model's view of both; client.py is the only module that
talks HTTP (pynetbox's session, token from NETFAB_NETBOX_TOKEN, TLS verified by default).
"""
