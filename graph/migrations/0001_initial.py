# The knowledge graph's models, first created by the evidence app (0004 to 0008), move here
# with their tables (db_table) and rows untouched: state only.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('evidence', '0008_graphstate_fed'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app owns them moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='GraphChange',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('generation', models.BigIntegerField(unique=True)),
                        ('token', models.CharField(max_length=32)),
                        ('op', models.CharField(max_length=16)),
                        ('data', models.JSONField(default=dict)),
                    ],
                    options={
                        'db_table': 'evidence_graphchange',
                        'ordering': ['generation'],
                    },
                ),
                migrations.CreateModel(
                    name='GraphNode',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.CharField(max_length=200, unique=True)),
                        ('node_type', models.CharField(choices=[('person', 'Person'), ('decision', 'Decision'), ('amount', 'Amount'), ('deadline', 'Deadline'), ('document', 'Document'), ('policy', 'Policy'), ('risk', 'Risk')], max_length=16)),
                        ('label', models.CharField(max_length=300)),
                        ('zone', models.CharField(blank=True, db_index=True, max_length=64)),
                        ('attributes', models.JSONField(blank=True, default=dict)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'evidence_graphnode',
                        'ordering': ['id'],
                    },
                ),
                migrations.CreateModel(
                    name='GraphState',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('generation', models.BigIntegerField(default=0)),
                        ('token', models.CharField(default='', max_length=32)),
                        ('fed', models.JSONField(default=dict)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'evidence_graphstate',
                    },
                ),
                migrations.CreateModel(
                    name='GraphEdge',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('edge_type', models.CharField(choices=[('approved_by', 'approved by'), ('proposed_by', 'proposed by'), ('depends_on', 'depends on'), ('constrained_by', 'constrained by'), ('allocated_from', 'allocated from'), ('deadline_for', 'deadline for'), ('escalated_to', 'escalated to'), ('references', 'references'), ('mitigates', 'mitigates'), ('caused_by', 'caused by')], max_length=16)),
                        ('weight', models.FloatField(default=1.0)),
                        ('confidence', models.FloatField(default=1.0)),
                        ('occurred_at', models.DateTimeField()),
                        ('stale', models.BooleanField(default=False)),
                        ('zone', models.CharField(db_index=True, max_length=64)),
                        ('origin', models.CharField(choices=[('pipeline', 'Decision pipeline'), ('extraction', 'Extracted from a document'), ('manual', 'Entered over the API'), ('import', 'Bulk import')], max_length=16)),
                        ('document_version', models.PositiveIntegerField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('document', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='evidence.document')),
                        ('source', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='out_edges', to='graph.graphnode')),
                        ('target', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='in_edges', to='graph.graphnode')),
                    ],
                    options={
                        'db_table': 'evidence_graphedge',
                        'ordering': ['id'],
                        'indexes': [models.Index(fields=['document', 'origin'], name='graph_edge_document')],
                        'constraints': [models.UniqueConstraint(fields=('source', 'target', 'edge_type'), name='graph_edge_unique_typed_pair'), models.CheckConstraint(condition=models.Q(('confidence__gte', 0.0), ('confidence__lte', 1.0)), name='graph_edge_confidence_unit'), models.CheckConstraint(condition=models.Q(('weight__gt', 0.0), ('weight__lte', 1.0)), name='graph_edge_weight_unit'), models.CheckConstraint(condition=models.Q(('source', models.F('target')), _negated=True), name='graph_edge_no_self_loop')],
                    },
                ),
                migrations.CreateModel(
                    name='GraphRiskFlag',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('zone', models.CharField(max_length=64)),
                        ('key', models.CharField(max_length=200)),
                        ('threshold', models.FloatField()),
                        ('share', models.FloatField()),
                        ('review_by', models.CharField(max_length=64)),
                        ('event', models.CharField(max_length=80)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('ended_at', models.DateTimeField(blank=True, null=True)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('acknowledged', 'Acknowledged'), ('dismissed', 'Dismissed')], default='open', max_length=16)),
                        ('resolved_at', models.DateTimeField(blank=True, null=True)),
                        ('note', models.TextField(blank=True)),
                        ('resolution_event', models.CharField(blank=True, max_length=80)),
                        ('resolved_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'evidence_graphriskflag',
                        'ordering': ['zone', 'key', 'created_at'],
                        'indexes': [models.Index(condition=models.Q(('status', 'open')), fields=['review_by'], name='graph_risk_flag_open')],
                        'constraints': [models.UniqueConstraint(condition=models.Q(('ended_at__isnull', True)), fields=('zone', 'key'), name='graph_risk_flag_one_live_per_node'), models.CheckConstraint(condition=models.Q(models.Q(('note', ''), ('resolved_at__isnull', True), ('status', 'open')), models.Q(models.Q(('status', 'open'), _negated=True), ('resolved_at__isnull', False), models.Q(('note', ''), _negated=True)), _connector='OR'), name='graph_risk_flag_resolution_complete')],
                    },
                ),
            ],
        ),
    ]
