"""The auditor's search form."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from decisions.models import Gate, State


class AuditFilterForm(forms.Form):
    zone = forms.CharField(required=False, max_length=64, label=_("Zone"))
    state = forms.ChoiceField(
        required=False, choices=[("", _("any")), *list(State.choices)], label=_("State")
    )
    gate = forms.ChoiceField(
        required=False, choices=[("", _("any")), *list(Gate.choices)], label=_("Gate")
    )
    agent = forms.CharField(required=False, max_length=64, label=_("Agent"))
    reviewer = forms.CharField(required=False, max_length=150, label=_("Reviewer"))
    since = forms.DateField(
        required=False, label=_("From"), widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label=_("To"), widget=forms.DateInput(attrs={"type": "date"})
    )
    q = forms.CharField(required=False, max_length=200, label=_("Text"))
