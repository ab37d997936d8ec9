from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("coordinates", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="webhook_secret",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
