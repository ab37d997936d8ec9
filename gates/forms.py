"""Forms of the web pages: queue and audit filters, the policy edit, role grants."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coordinates import policy as zone_policy
from coordinates.models import Role
from gates.policy_help import field_help
from maria.wording import in_language

_INT_FIELDS = {"required_evidence", "hops", "approvals_required", "rereview_days", "min_sources"}
# Each field's label: its policy name in English (as the API and the docs name it), a name in
# words in the reader's language.
_LABELS = {
    "tau": _("tau"),
    "delta": _("delta"),
    "floor": _("floor"),
    "refusal_floor": _("refusal_floor"),
    "required_evidence": _("required_evidence"),
    "w1": _("w1"),
    "w2": _("w2"),
    "w3": _("w3"),
    "w4": _("w4"),
    "graph_risk": _("graph_risk"),
    "cohesion_tau": _("cohesion_tau"),
    "gamma": _("gamma"),
    "hops": _("hops"),
    "ppr_rho": _("ppr_rho"),
    "risk_threshold": _("risk_threshold"),
    "review_sla_hours": _("review_sla_hours"),
    "approvals_required": _("approvals_required"),
    "periodic_review_rate": _("periodic_review_rate"),
    "rereview_days": _("rereview_days"),
    "min_sources": _("min_sources"),
    "release_kinds": _("release_kinds"),
    "release_statuses": _("release_statuses"),
    "judge_moves": _("judge_moves"),
    "judge_confidence": _("judge_confidence"),
}
# The names a list field may hold, as the checkboxes show them.
_CHOICE_LABELS = {
    "policy": _("policy"),
    "contract": _("contract"),
    "report": _("report"),
    "minutes": _("minutes"),
    "memo": _("memo"),
    "email": _("email"),
    "approved": _("approved"),
    "draft": _("draft"),
    "archived": _("archived"),
    "verify": _("verify"),
    "refute": _("refute"),
    "low": _("low"),
    "medium": _("medium"),
    "high": _("high"),
    "critical": _("critical"),
}


def _list_field(name: str, inherited: Any) -> forms.Field:
    """Checkboxes of the names a list field may hold; none ticked inherits from above."""
    choices = [(v, _CHOICE_LABELS.get(v, v)) for v in zone_policy.LIST_FIELDS[name]]
    return forms.MultipleChoiceField(
        required=False,
        choices=choices,
        widget=forms.CheckboxSelectMultiple(attrs={"title": field_help(name)}),
        help_text=_("inherited: %(names)s") % {"names": ", ".join(inherited) or _("none")},
    )


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
            if name in zone_policy.LIST_FIELDS:
                self.fields[name] = _list_field(name, placeholder)
                self.fields[name].label = _LABELS[name]
                # What the field does first, then what a blank inherits.
                self.fields[name].help_text = f"{field_help(name)} {self.fields[name].help_text}"
                continue
            if name in zone_policy.CHOICE_FIELDS:
                choices = [(v, _CHOICE_LABELS.get(v, v)) for v in zone_policy.CHOICE_FIELDS[name]]
                self.fields[name] = forms.ChoiceField(
                    required=False,
                    choices=[("", _("inherited: %(names)s") % {"names": placeholder}), *choices],
                    label=_LABELS[name],
                    help_text=field_help(name),
                )
                continue
            if name == "cohesion_tau" and placeholder is None:
                placeholder = gettext("from graph_risk")
            widget_attrs = {"placeholder": str(placeholder), "step": "any"}
            if name in _INT_FIELDS:
                field: forms.Field = forms.IntegerField(
                    required=False, widget=forms.NumberInput(attrs=widget_attrs)
                )
            else:
                field = forms.FloatField(
                    required=False, widget=forms.NumberInput(attrs=widget_attrs)
                )
            field.label = _LABELS[name]
            field.help_text = field_help(name)  # what it does and its range, under the input
            self.fields[name] = field
        self.order_fields([*zone_policy.FIELD_NAMES, "reason"])

    def overrides(self) -> dict[str, Any]:
        return _present(self.cleaned_data)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        present = _present(cleaned)
        for problem in zone_policy.check_overrides(present):
            field = problem.field if problem.field in self.fields else None
            self.add_error(field, in_language(problem.message, gettext))
        return cleaned


def _present(cleaned: dict[str, Any]) -> dict[str, Any]:
    """The fields the admin set: a blank number or no ticked box inherits."""
    return {
        name: cleaned[name]
        for name in zone_policy.FIELD_NAMES
        if cleaned.get(name) is not None and cleaned.get(name) not in ([], "")
    }


class GrantForm(forms.Form):
    username = forms.CharField(max_length=150, label=_("User"))
    role = forms.ChoiceField(choices=Role.choices, label=_("Role"))
