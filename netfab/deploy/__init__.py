"""Deploy stage: staged commit-confirmed rollouts through NAPALM drivers (netfab's own in drivers/)."""
