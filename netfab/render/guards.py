"""What the renderer refuses before any template runs: plans no platform can express as one document.

Every platform keys its QoS configuration by queue (NVUE `traffic-class: '3':`, SONiC `QUEUE|Ethernet0|3`,
EOS `tx-queue 3`), and netfab keeps priority == traffic class == queue. Two classes on one queue would make
a structured output carry the same key twice (a YAML or JSON document that loaders read as "the last one
wins", if they accept it at all) and a text config name one queue in two stanzas. Lint reports the intent as
REV001/QOS006; this guard makes the renderer refuse the plan even when lint was bypassed (a plan built in
code, a future rule bug), so no renderer can emit such a document.
"""

from __future__ import annotations

from netfab.design.plan import DevicePlan
from netfab.render.environment import UnsupportedFeature


def refuse_shared_queues(device: DevicePlan) -> None:
    """Raise UnsupportedFeature if two traffic classes of the device's QoS plan share an egress queue."""
    owners: dict[int, str] = {}
    for queue in device.qos.queues:
        first = owners.setdefault(queue.queue, queue.class_name)
        if first != queue.class_name:
            raise UnsupportedFeature(
                f"{device.name}: traffic classes '{first}' and '{queue.class_name}' are both on queue "
                f"{queue.queue}; a switch has one queue per priority, so the config would name it twice "
                "(lint: REV001). Give each class its own priority."
            )
