"""Sign-in and sign-out: Django's authentication and session, throttled per username and address."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.decorators.cache import never_cache

from apps.console.access import is_console_user
from apps.console.forms import LoginForm
from apps.console.throttle import login_failure_record, login_failures_clear, login_locked_out

logger = logging.getLogger(__name__)

LOCKED_OUT = "Too many failed sign-ins for this user from your address. Wait {minutes} minutes and try again."


def _address(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR", ""))


def _next_url(request: HttpRequest) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return reverse("console:index")


@method_decorator(never_cache, name="dispatch")
class LoginView(View):
    template_name = "console/login.html"

    def _page(self, request: HttpRequest, form: LoginForm, *, status: int = 200, error: str = "") -> HttpResponse:
        context: dict[str, Any] = {"form": form, "error": error, "next": _next_url(request)}
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        if is_console_user(request.user):
            return redirect(_next_url(request))
        return self._page(request, LoginForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = LoginForm(request.POST)
        if not form.is_valid():
            return self._page(request, form, status=400, error="Enter a username and a password.")
        username, address = form.cleaned_data["username"], _address(request)
        minutes = max(1, settings.CONSOLE_LOGIN_WINDOW_SECONDS // 60)
        if login_locked_out(username=username, address=address):
            logger.warning("console sign-in locked out", extra={"address": address})
            return self._page(request, form, status=429, error=LOCKED_OUT.format(minutes=minutes))
        user = authenticate(request, username=username, password=form.cleaned_data["password"])
        if user is None or not is_console_user(user):
            failures = login_failure_record(username=username, address=address)
            logger.info("console sign-in failed", extra={"address": address, "failures": failures})
            return self._page(request, form, status=401, error="Wrong username or password.")
        login_failures_clear(username=username, address=address)
        login(request, user)  # a new session key: no fixation
        logger.info("console sign-in", extra={"user_id": user.pk, "address": address})
        return HttpResponseRedirect(_next_url(request))


class LogoutView(View):
    def post(self, request: HttpRequest) -> HttpResponse:
        logout(request)
        return redirect("console:login")
