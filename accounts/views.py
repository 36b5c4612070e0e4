from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView, PasswordChangeView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_http_methods

from accounts.services import SignUpRefused, signup_refusal, user_sign_up
from ops.ratelimits import over_limit, too_many


def _username(group: str, request: HttpRequest) -> str:
    return str(request.POST.get("username", "")).strip().lower()[:150]


class LogInView(LoginView):
    """Django's log-in page, with log-in attempts limited per address and per username
    (whatever the password: a guesser learns nothing from which limit it met)."""

    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        retry = over_limit(request, "login_ip", "ip") or over_limit(
            request, "login_user", _username
        )
        if retry is not None:
            return too_many(request, retry)
        return super().post(request, *args, **kwargs)


class ChangePasswordView(PasswordChangeView):
    """A person changes their own password (the old one asked first, tries limited as
    log-ins are); they stay logged in, and Settings says it was done."""

    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("settings")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        retry = over_limit(request, "login_user", lambda _group, r: str(r.user.pk))
        if retry is not None:
            return too_many(request, retry)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, "Your password was changed.")
        return response


@login_not_required
@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    """The sign-up page, under the site's rule (ORACLE_SIGNUP): refused, it says why
    (403) and shows no form. An invite's code travels in `?invite=` and the form."""
    if request.user.is_authenticated:
        return redirect("home")
    if request.method == "POST" and (retry := over_limit(request, "signup_ip", "ip")):
        return too_many(request, retry)
    code = (request.POST.get("invite") or request.GET.get("invite") or "").strip()[:64]
    refusal = signup_refusal(code)
    if refusal is not None:
        return render(request, "accounts/signup.html", {"refusal": refusal}, status=403)
    form: UserCreationForm[User] = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_sign_up(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                invite_code=code or None,
            )
        except SignUpRefused as refused:  # the invite was used meanwhile
            return render(request, "accounts/signup.html", {"refusal": str(refused)}, status=403)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(
        request,
        "accounts/signup.html",
        {"form": form, "invite": code},
        status=400 if form.errors else 200,
    )
