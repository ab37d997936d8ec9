# A risk flag names its node by the node's own zone and key (issue 28): a scan of a level
# reads the zones beneath it, and since 0003 two of them may each hold a node of one key,
# which the level's flags, keyed by key alone, took for one node.
#
# Existing flags get the zone of the node they stood for, found as the flags list found it
# until now: the scanned zone's own node, else one beneath it, else a shared one. A flag
# whose node is gone keeps the scanned zone when that is a zone (G.U.P.Z), and "" (shared)
# otherwise. Live flags were unique per (zone, key), so they are unique per
# (zone, node_zone, key) as they stand.

from django.db import migrations, models


def node_zones(apps, schema_editor):
    Flag = apps.get_model("graph", "GraphRiskFlag")
    Node = apps.get_model("graph", "GraphNode")
    for flag in Flag.objects.all().iterator():
        zones = Node.objects.filter(key=flag.key).values_list("zone", flat=True)
        ranked = sorted(
            (0 if zone == flag.zone else 1 if zone.startswith(f"{flag.zone}.") else 2, zone)
            for zone in zones
            if zone in (flag.zone, "") or zone.startswith(f"{flag.zone}.")
        )
        if ranked:
            node_zone = ranked[0][1]
        else:
            node_zone = flag.zone if flag.zone.count(".") == 3 else ""
        if node_zone:
            Flag.objects.filter(pk=flag.pk).update(node_zone=node_zone)


class Migration(migrations.Migration):

    dependencies = [
        ("graph", "0003_node_key_per_zone"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="graphriskflag",
            name="graph_risk_flag_one_live_per_node",
        ),
        migrations.AddField(
            model_name="graphriskflag",
            name="node_zone",
            field=models.CharField(blank=True, default="", max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(node_zones, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="graphriskflag",
            constraint=models.UniqueConstraint(
                condition=models.Q(("ended_at__isnull", True)),
                fields=("zone", "node_zone", "key"),
                name="graph_risk_flag_one_live_per_node",
            ),
        ),
    ]
