from __future__ import annotations

from django.urls import path

from dashboard import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("runs/", views.run_list, name="dashboard-runs"),
    path("hours/", views.hour_table, name="dashboard-hours"),
    path(
        "recommendations/apply/",
        views.recommendation_apply_view,
        name="dashboard-recommendation-apply",
    ),
    path(
        "alerts/<int:alert_id>/ack/",
        views.alert_acknowledge_view,
        name="dashboard-alert-acknowledge",
    ),
]
