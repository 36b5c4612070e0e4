from django.urls import path

from ops import metrics, views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
]
