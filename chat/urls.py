from django.urls import path

from chat import api, views

urlpatterns = [
    path("", views.home, name="home"),
    path("c/new/", views.conversation_new, name="conversation-new"),
    path("c/<str:conversation_id>/", views.conversation_page, name="conversation"),
    path("c/<str:conversation_id>/messages/", views.conversation_post, name="conversation-post"),
    path("c/<str:conversation_id>/rename/", views.conversation_rename, name="conversation-rename"),
    path("c/<str:conversation_id>/delete/", views.conversation_delete, name="conversation-delete"),
    path("api/conversations/", api.conversations, name="api-conversations"),
    path(
        "api/conversations/<str:conversation_id>/",
        api.conversation_detail,
        name="api-conversation",
    ),
    path(
        "api/conversations/<str:conversation_id>/messages/",
        api.conversation_messages,
        name="api-conversation-messages",
    ),
    path("api/runs/<str:run_id>/", api.run_detail, name="api-run"),
    path("api/runs/<str:run_id>/events/", api.run_events, name="api-run-events"),
    path("api/runs/<str:run_id>/cancel/", api.run_cancel, name="api-run-cancel"),
    path("api/runs/<str:run_id>/continue/", api.run_continue, name="api-run-continue"),
]
