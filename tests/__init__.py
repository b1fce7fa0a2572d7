"""netfab's test suite, a package: its modules import each other as tests.<dir>.<module>, and a package
named `tests` that a dependency installs (textfsm 2.1.1 ships one) must not stand in for it."""
