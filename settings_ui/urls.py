from django.urls import path

from settings_ui import views

urlpatterns = [path("", views.settings_page, name="settings")]
