"""Fabric health: counters from every switch and NIC, the fleet's tail, slow-but-up links, pause storms."""
