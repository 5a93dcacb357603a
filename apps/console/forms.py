"""Input of the console's forms. Validation only: the services decide everything else."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.consent.purposes import PURPOSES
from apps.jobs.models import Job
from apps.tenancy import keys
from apps.webhooks import events


class LoginForm(forms.Form):
    username = forms.CharField(max_length=150)
    password = forms.CharField(max_length=200, widget=forms.PasswordInput)


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    scopes = forms.MultipleChoiceField(
        choices=[(scope, scope) for scope in keys.SCOPES], widget=forms.CheckboxSelectMultiple
    )
    rate_limit_per_minute = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)


class ApiKeyRotateForm(forms.Form):
    overlap_seconds = forms.IntegerField(min_value=0, max_value=30 * 24 * 3600, required=False)


class AuditFilterForm(forms.Form):
    action = forms.CharField(max_length=64, required=False, help_text="An action, or a prefix ending in '.'")
    subject = forms.CharField(max_length=200, required=False, help_text="External id or subject id")
    since = forms.DateTimeField(required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    until = forms.DateTimeField(required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            raise forms.ValidationError("'since' must be before 'until'.")
        return data


class ConsentForm(forms.Form):
    """One checkbox per purpose: checked grants it, unchecked withdraws it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in PURPOSES:
            self.fields[name] = forms.BooleanField(required=False, label=name)


class SubjectEraseForm(forms.Form):
    confirm = forms.CharField(max_length=200, help_text="Type the subject's external id to confirm.")

    def __init__(self, *args: Any, external_id: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.external_id = external_id

    def clean_confirm(self) -> str:
        value: str = self.cleaned_data["confirm"]
        if value != self.external_id:
            raise forms.ValidationError("Type the subject's external id exactly to confirm the erasure.")
        return value


class OrganizationOffboardForm(forms.Form):
    confirm = forms.CharField(max_length=100, help_text="Type the organization's slug to confirm.")

    def __init__(self, *args: Any, slug: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slug = slug

    def clean_confirm(self) -> str:
        value: str = self.cleaned_data["confirm"]
        if value != self.slug:
            raise forms.ValidationError("Type the organization's slug exactly to confirm the offboarding.")
        return value


class JobFilterForm(forms.Form):
    status = forms.ChoiceField(choices=[("", "any"), *Job.Status.choices], required=False)
    kind = forms.CharField(max_length=64, required=False)


_EVENT_CHOICES = [(events.ALL, "every event (*)"), *((name, name) for name in events.EVENT_TYPES)]


class WebhookEndpointCreateForm(forms.Form):
    url = forms.CharField(max_length=2000)
    event_types = forms.MultipleChoiceField(choices=_EVENT_CHOICES, widget=forms.CheckboxSelectMultiple)
    description = forms.CharField(max_length=500, required=False)
