"""netfab: vendor-neutral intent -> validated, rendered, deployed and audited AI/RoCE fabrics."""

__version__ = "0.1.0"
