# The ledger's models, first created by the decisions app (0001_trail), move here with their
# tables (db_table) and rows untouched: state only.

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('decisions', '0002_pipeline'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app owns them moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='TrailHead',
                    fields=[
                        ('chain', models.CharField(max_length=64, primary_key=True, serialize=False)),
                        ('seq', models.PositiveBigIntegerField(default=0)),
                        ('hash', models.CharField(default='0000000000000000000000000000000000000000000000000000000000000000', max_length=64)),
                        ('updated_at', models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        'db_table': 'decisions_trailhead',
                        'ordering': ['chain'],
                    },
                ),
                migrations.CreateModel(
                    name='TrailCheckpoint',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('seq', models.PositiveIntegerField(unique=True)),
                        ('created_at', models.DateTimeField()),
                        ('prev_hash', models.CharField(max_length=64, unique=True)),
                        ('hash', models.CharField(max_length=64, unique=True)),
                        ('chains', models.PositiveIntegerField()),
                        ('events', models.PositiveBigIntegerField()),
                        ('canonical', models.BinaryField()),
                    ],
                    options={
                        'db_table': 'decisions_trailcheckpoint',
                        'ordering': ['-seq'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('seq__gte', 1)), name='trail_checkpoint_seq_gte_1')],
                    },
                ),
                migrations.CreateModel(
                    name='TrailEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('chain', models.CharField(max_length=64)),
                        ('seq', models.PositiveBigIntegerField()),
                        ('kind', models.CharField(db_index=True, max_length=64)),
                        ('decision_id', models.BigIntegerField(blank=True, db_index=True, null=True)),
                        ('actor', models.CharField(max_length=200)),
                        ('reason', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField()),
                        ('prev_hash', models.CharField(max_length=64)),
                        ('hash', models.CharField(max_length=64, unique=True)),
                        ('canonical', models.BinaryField()),
                    ],
                    options={
                        'db_table': 'decisions_decisionevent',
                        'ordering': ['chain', 'seq'],
                        'indexes': [models.Index(fields=['chain', 'created_at'], name='trail_event_chain_time')],
                        'constraints': [models.UniqueConstraint(fields=('chain', 'seq'), name='trail_event_chain_seq_unique'), models.CheckConstraint(condition=models.Q(('seq__gte', 1)), name='trail_event_seq_gte_1')],
                    },
                ),
            ],
        ),
    ]
