import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('decisions', '0006_periodic_review_verdict'),
        ('evidence', '0012_knowledge_conflict'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ReReview',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('zone', models.CharField(max_length=64)),
                ('cause', models.CharField(choices=[('superseded', 'A new version of the cited document'), ('conflict', 'A knowledge-base conflict resolved against the cited text')], max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('verdict', models.CharField(blank=True, choices=[('still_correct', 'Still correct'), ('wrong', 'Wrong now')], max_length=16)),
                ('note', models.TextField(blank=True)),
                ('closed_at', models.DateTimeField(blank=True, null=True)),
                ('closed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('conflict', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, to='evidence.knowledgeconflict')),
                ('decision', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='rereviews', to='decisions.decision')),
                ('new_paragraph', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='evidence.paragraph')),
                ('old_paragraph', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='evidence.paragraph')),
            ],
            options={
                'indexes': [models.Index(fields=['zone', 'closed_at'], name='rereview_zone_open')],
                'constraints': [models.UniqueConstraint(fields=('decision', 'old_paragraph', 'cause'), name='rereview_once_each')],
            },
        ),
    ]
