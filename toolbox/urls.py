from django.urls import path

from toolbox import api, views

urlpatterns = [
    path("tools/", views.tools_page, name="tools"),
    path("tools/<str:name>/switch/", views.server_switch, name="tools-server-switch"),
    path("api/tools/", api.tool_list, name="api-tools"),
]
