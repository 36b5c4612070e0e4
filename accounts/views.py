from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.services import user_sign_up


@login_not_required
@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form: UserCreationForm[User] = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = user_sign_up(
            username=form.cleaned_data["username"], password=form.cleaned_data["password1"]
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(
        request, "accounts/signup.html", {"form": form}, status=400 if form.errors else 200
    )
