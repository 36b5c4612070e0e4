from django.urls import path

from settings_ui import views

urlpatterns = [
    path("", views.settings_page, name="settings"),
    path("fields/<str:name>/", views.setting_save, name="settings-field"),
    path("reset/", views.settings_reset, name="settings-reset"),
    path("price-notice/", views.price_notice, name="settings-price-notice"),
    path("tokens/", views.api_token_new, name="settings-token-create"),
    path("tokens/<int:token_id>/revoke/", views.api_token_delete, name="settings-token-revoke"),
]
