"""Package layout only; all metadata is in pyproject.toml.

setuptools cannot combine automatic package discovery with mapping top-level data directories into the
package from pyproject.toml alone, hence this file.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["netfab", "netfab.*"]), "netfab._templates", "netfab._playbooks"],
    package_dir={"netfab._templates": "templates", "netfab._playbooks": "playbooks"},
)
