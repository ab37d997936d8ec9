"""Forms of the web pages: queue and audit filters, the policy edit, role grants."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from coordinates import policy as zone_policy
from coordinates.models import Role

_INT_FIELDS = {"required_evidence", "hops", "approvals_required", "rereview_days"}
# What a field means, where its name alone does not say (shown as the input's title).
_HINTS = {
    "periodic_review_rate": _(
        "Share of flagged answers sampled for periodic review, from 0 (none) to 1 (all)."
    ),
}


class PolicyForm(forms.Form):
    """The zone's own overrides; a blank field inherits from above."""

    reason = forms.CharField(
        label=_("Why this change"), max_length=2000, widget=forms.TextInput(), required=False
    )

    def __init__(self, *args: Any, inherited: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inherited = inherited or {}
        for name in zone_policy.FIELD_NAMES:
            placeholder = inherited.get(name, getattr(zone_policy.SYSTEM_DEFAULT, name))
            widget_attrs = {"placeholder": str(placeholder), "step": "any"}
            if name in _HINTS:
                widget_attrs["title"] = str(_HINTS[name])
            if name in _INT_FIELDS:
                field: forms.Field = forms.IntegerField(
                    required=False, widget=forms.NumberInput(attrs=widget_attrs)
                )
            else:
                field = forms.FloatField(
                    required=False, widget=forms.NumberInput(attrs=widget_attrs)
                )
            field.label = name
            self.fields[name] = field
        self.order_fields([*zone_policy.FIELD_NAMES, "reason"])

    def overrides(self) -> dict[str, Any]:
        return {
            name: self.cleaned_data[name]
            for name in zone_policy.FIELD_NAMES
            if self.cleaned_data.get(name) is not None
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        present = {n: cleaned[n] for n in zone_policy.FIELD_NAMES if cleaned.get(n) is not None}
        for problem in zone_policy.check_overrides(present):
            self.add_error(problem.field if problem.field in self.fields else None, problem.message)
        return cleaned


class GrantForm(forms.Form):
    username = forms.CharField(max_length=150, label=_("User"))
    role = forms.ChoiceField(choices=Role.choices, label=_("Role"))
