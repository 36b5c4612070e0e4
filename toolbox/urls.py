from django.urls import path

from toolbox import api, views

urlpatterns = [
    path("tools/", views.tools_page, name="tools"),
    path("tools/<str:name>/switch/", views.server_switch, name="tools-server-switch"),
    path("tools/grants/revoke/", views.grant_revoke, name="tools-grant-revoke"),
    path("api/tools/", api.tool_list, name="api-tools"),
    path("api/tools/grants/revoke/", api.grant_revoke, name="api-tools-grant-revoke"),
]
