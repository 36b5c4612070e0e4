from django.urls import path

from settings_ui import api

urlpatterns = [path("", api.settings_detail, name="api-settings")]
